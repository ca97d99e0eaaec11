"""The settings users give, each defined once: its default, unit and bounds.

A setting is a dataclass field made by ``setting(...)``; its metadata says what
kind of value it takes (number, integer, boolean, string, vector), its unit and
its bounds. One checker, ``check``, reads that metadata, so the scenario loader
(``trackrider.scenario``), the physics ``World``'s Python API and the renderer
share one definition of every default and every bound (Box2D's
``b2DefaultXDef()`` functions play this part there). ``check`` takes the place
the settings sit in (``where``: ``train[0].car`` in a file, ``car`` in a call),
so an error names the key the user wrote the first time it is raised.

Adding a setting: one ``setting(...)`` line in its class here (and its use in the
physics or the outputs); the loader reads it from the file's table of the same
name (``key=`` when the file's word differs from the field's name).

The module imports nothing heavy: ``trackrider.physics``, ``trackrider.scenario``
and ``trackrider.render`` all import it.
"""
from __future__ import annotations

import dataclasses
import math
import numbers
from dataclasses import dataclass, field
from typing import Any

from trackrider.errors import InputError
from trackrider.limits import MAX_OUTPUT_GB
from trackrider.physics.sections import SECTIONS

#: largest magnitude accepted for a length or position, m (the solar system is not a ride)
MAX_LENGTH = 1.0e6
MAX_MASS = 1.0e9
MAX_FORCE = 1.0e12
MAX_SPEED = 1.0e4
#: spring and damper coefficients (N/m, N·s/m, N·m·s/rad)
MAX_COEFF = 1.0e15
#: most steps a run may take
MAX_STEPS = 1_000_000_000

#: the value of a required setting that was not given
REQUIRED = dataclasses.MISSING

NUMBER, INTEGER, BOOLEAN, STRING, VECTOR = "number", "integer", "boolean", "string", "vector"
#: a curve of a speed: ``[[v, value], …]`` (v in m/s, ≥ 0, increasing); with ``or_number`` a number
#: (a constant) is accepted too
CURVE = "curve"
#: most points of a curve
MAX_CURVE_POINTS = 1000
#: a number, or a profile in time: knots [[t, value], …] (s since the start, times not decreasing; linear
#: between knots, the first value before them and the last after), each value within the setting's bounds
PROFILE = "profile"
#: most knots of a profile
MAX_KNOTS = 100_000


@dataclass(frozen=True)
class Setting:
    """What one field accepts. ``kind``: number | integer | boolean | string | vector | curve;
    ``unit`` (shown in messages); bounds ``gt``, ``ge``, ``lt``, ``le``; ``maximum``: the
    largest magnitude that is not absurd; ``choices`` of a string; ``n`` elements of a
    vector, each ``> 0`` when ``positive``, ``≥ 0`` when ``nonnegative``; ``key``: the
    file's word when it differs from the field's name; ``file``: read from scenario files;
    ``degrees``: an angle (or a rate) the field holds in radians, files give in degrees,
    its unit and bounds in degrees; ``words``: a number that may also be one of these words
    (a driver's ``brake = "release"``); ``or_number``: a curve that may also be a number (a
    constant). A curve's values obey the bounds; its speeds are ≥ 0 and increasing."""

    kind: str = NUMBER
    unit: str = ""
    gt: float | None = None
    ge: float | None = None
    lt: float | None = None
    le: float | None = None
    maximum: float | None = None
    choices: tuple | None = None
    n: int = 3
    positive: bool = False
    nonnegative: bool = False
    key: str | None = None
    file: bool = True
    degrees: bool = False
    words: tuple | None = None
    or_number: bool = False


def setting(default: Any = REQUIRED, *, kind: str = NUMBER, unit: str = "", gt=None, ge=None, lt=None, le=None,
            maximum=None, choices=None, n: int = 3, positive: bool = False, nonnegative: bool = False,
            key: str | None = None, file: bool = True, degrees: bool = False, words=None,
            or_number: bool = False) -> Any:
    """A dataclass field carrying its ``Setting``; ``default`` ``REQUIRED`` (the default) makes it required.

    A vector's default, a tuple, is kept as it is (tuples are immutable)."""
    meta = Setting(kind, unit, gt, ge, lt, le, maximum, None if choices is None else tuple(choices), n, positive,
                   nonnegative, key, file, degrees, None if words is None else tuple(words), or_number)
    if kind == VECTOR and maximum is None:
        meta = dataclasses.replace(meta, maximum=MAX_LENGTH)
    if default is REQUIRED:
        return field(metadata={"setting": meta})
    return field(default=default, metadata={"setting": meta})


def settings_of(cls) -> dict:
    """``{field name: Setting}`` of a settings class (or instance), in field order."""
    return {f.name: f.metadata["setting"] for f in dataclasses.fields(cls) if "setting" in f.metadata}


def file_keys(cls) -> dict:
    """``{file key: field name}`` of the settings a scenario file may give, in field order."""
    return {(s.key or name): name for name, s in settings_of(cls).items() if s.file}


def default_of(cls, name: str) -> Any:
    """The default of setting ``name`` of ``cls`` (``REQUIRED`` when it has none)."""
    for f in dataclasses.fields(cls):
        if f.name == name:
            return f.default
    raise KeyError(name)


# --------------------------------------------------------------------------- checking


def is_real(value: Any) -> bool:
    """A real number, not a boolean (numpy's included)."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and type(value).__name__ != "bool_"


def describe(value: Any) -> str:
    """A value as an error message shows it: ``a string 'x'``, ``an array``."""
    text = repr(value)
    if len(text) > 40:
        text = text[:37] + "..."
    kind = {bool: "a boolean", str: "a string", int: "an integer", float: "a number",
            list: "an array", dict: "a table", tuple: "an array"}.get(type(value), type(value).__name__)
    return f"{kind} {text}" if not isinstance(value, (list, dict, tuple)) else kind


def _did_you_mean(word: str, choices) -> str:
    import difflib

    close = difflib.get_close_matches(str(word), [str(c) for c in choices], n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def check_value(s: Setting, value: Any, where: str = "", path=None) -> Any:
    """``value`` checked against ``s`` and normalised (float, int, tuple of floats; a profile: a float
    or a tuple of (t, value) pairs); an ``InputError`` at ``where`` (and ``path``) when it does not fit."""

    def error(message):
        return InputError(message, path=path, where=where or None)

    if s.degrees:   # the value in radians: the bounds too
        rad = [None if b is None else math.radians(b) for b in (s.gt, s.ge, s.lt, s.le, s.maximum)]
        s = dataclasses.replace(s, gt=rad[0], ge=rad[1], lt=rad[2], le=rad[3], maximum=rad[4],
                                unit=s.unit.replace("°", "rad"), degrees=False)
    if s.kind == PROFILE:
        return _check_profile(s, value, where, path)
    u = f" {s.unit}" if s.unit else ""
    if s.words is not None and isinstance(value, str):
        if value not in s.words:
            raise error(f"must be a number{(' (' + s.unit + ')') if s.unit else ''} or one of "
                        f"{', '.join(s.words)}, got {value!r}{_did_you_mean(value, s.words)}")
        return value
    if s.kind == CURVE:
        if s.or_number and is_real(value):
            return check_value(dataclasses.replace(s, kind=NUMBER), value, where, path)
        return _check_curve(s, value, error)
    if s.kind == BOOLEAN:
        if not isinstance(value, bool) and type(value).__name__ != "bool_":
            raise error(f"must be true or false, got {describe(value)}")
        return bool(value)
    if s.kind == STRING:
        if not isinstance(value, str):
            raise error(f"must be a string, got {describe(value)}")
        if s.choices is not None and value not in s.choices:
            raise error(f"must be one of {', '.join(s.choices)}, got {value!r}{_did_you_mean(value, s.choices)}")
        if s.choices is None and not value.strip():
            raise error("must not be empty")
        return value
    if s.kind == VECTOR:
        try:
            items = list(value) if not isinstance(value, (str, bytes, dict)) else None
        except TypeError:
            items = None
        if items is None or len(items) != s.n or not all(is_real(v) for v in items):
            raise error(f"must be an array of {s.n} numbers{(' (' + s.unit + ')') if s.unit else ''}, "
                        f"got {describe(value)}" + (f" of length {len(items)}" if items is not None else ""))
        out = tuple(float(v) for v in items)
        for i, v in enumerate(out):
            if not math.isfinite(v):
                raise error(f"element {i + 1} must be finite, got {v}")
            if s.positive and not v > 0:
                raise error(f"element {i + 1} must be > 0, got {v:g}")
            if s.nonnegative and not v >= 0:
                raise error(f"element {i + 1} must be ≥ 0, got {v:g}")
            if s.maximum is not None and abs(v) > s.maximum:
                raise error(f"element {i + 1} = {v:g} is absurd (limit {s.maximum:g})")
        return out
    if s.kind == INTEGER:
        if not (is_real(value) and float(value).is_integer() and not isinstance(value, float)):
            raise error(f"must be an integer, got {describe(value)}")
        value = int(value)
    else:
        if not is_real(value):
            raise error(f"must be a number{(' (' + s.unit + ')') if s.unit else ''}, got {describe(value)}")
        value = float(value)
        if not math.isfinite(value):
            raise error(f"must be finite, got {value}")
    if s.gt is not None and not value > s.gt:
        raise error(f"must be > {s.gt:g}{u}, got {value:g}")
    if s.ge is not None and not value >= s.ge:
        raise error(f"must be ≥ {s.ge:g}{u}, got {value:g}")
    if s.lt is not None and not value < s.lt:
        raise error(f"must be < {s.lt:g}{u}, got {value:g}")
    if s.le is not None and not value <= s.le:
        raise error(f"must be ≤ {s.le:g}{u}, got {value:g}")
    if s.maximum is not None and abs(value) > s.maximum:
        raise error(f"magnitude {value:g}{u} is absurd (limit {s.maximum:g})")
    return value


def _check_curve(s: Setting, value: Any, error) -> tuple:
    """A curve ``[[v, y], …]`` as a tuple of (v, y) pairs: v ≥ 0 m/s increasing, each y within ``s``'s bounds."""
    what = (f"a number{(' (' + s.unit + ')') if s.unit else ''} or " if s.or_number else "") + \
        f"an array of [speed m/s, value{(' ' + s.unit) if s.unit else ''}] pairs"
    if isinstance(value, (str, bytes, dict)) or not isinstance(value, (list, tuple)) or not value:
        raise error(f"must be {what}, got {describe(value)}")
    if len(value) > MAX_CURVE_POINTS:
        raise error(f"has {len(value)} points (limit {MAX_CURVE_POINTS})")
    out = []
    number = dataclasses.replace(s, kind=NUMBER, or_number=False)
    for i, pair in enumerate(value):
        if (isinstance(pair, (str, bytes, dict)) or not isinstance(pair, (list, tuple)) or len(pair) != 2
                or not all(is_real(v) for v in pair)):
            raise error(f"point {i + 1} must be a pair [speed m/s, value], got {describe(pair)}")
        v = float(pair[0])
        if not (math.isfinite(v) and 0.0 <= v <= MAX_SPEED):
            raise error(f"point {i + 1}: the speed must be within 0 … {MAX_SPEED:g} m/s, got {v:g}")
        if out and not v > out[-1][0]:
            raise error(f"point {i + 1}: speeds must increase, got {v:g} after {out[-1][0]:g}")
        try:
            y = check_value(number, pair[1])
        except InputError as exc:
            raise error(f"point {i + 1}: the value {exc.detail}") from None
        out.append((v, y))
    return tuple(out)


def _check_profile(s: Setting, value: Any, where: str, path) -> Any:
    """A profile setting: a number (checked as one), or knots [[t, value], …] with times ≥ 0 that do
    not decrease, each value checked as the number would be."""
    number = dataclasses.replace(s, kind=NUMBER)
    if is_real(value):
        return check_value(number, value, where, path)
    if isinstance(value, (str, bytes, dict)) or not hasattr(value, "__len__"):
        raise InputError(f"must be a number{(' (' + s.unit + ')') if s.unit else ''} or a profile [[t, value], …], "
                         f"got {describe(value)}", path=path, where=where or None)
    knots = list(value)
    if not 1 <= len(knots) <= MAX_KNOTS:
        raise InputError(f"a profile needs 1 … {MAX_KNOTS} knots [[t, value], …], got {len(knots)}", path=path,
                         where=where or None)
    out = []
    for i, knot in enumerate(knots):
        at = f"{where}[{i}]"
        if isinstance(knot, (str, bytes, dict)) or not hasattr(knot, "__len__") or len(knot) != 2:
            raise InputError(f"a profile's knot must be [t, value], got {describe(knot)}", path=path, where=at)
        t = check_value(Setting(NUMBER, "s", ge=0.0, maximum=1e9), knot[0], at, path)
        if out and t < out[-1][0]:
            raise InputError(f"the profile's times must not decrease: t = {t:g} s after t = {out[-1][0]:g} s",
                             path=path, where=at)
        out.append((t, check_value(number, knot[1], at, path)))
    return tuple(out)


def in_radians(value):
    """A setting given in degrees (a number or a profile's values) in radians."""
    if isinstance(value, tuple) and value and isinstance(value[0], tuple):
        return tuple((t, math.radians(v)) for t, v in value)
    return math.radians(value)


def _at(where: str, name: str) -> str:
    return f"{where}.{name}" if where else name


def check(obj, where: str = "", path=None, *, from_file: bool = False):
    """A checked copy of the settings object ``obj``: every setting checked against its
    definition and normalised, then the class's own rules (``_rules``: settings that
    depend on each other; they may fill a default that depends on another setting).
    Errors name ``where.<name>`` (and the file ``path``): the file's key when
    ``from_file``, else the field's name.

    Settings left at ``None`` (optional ones) or at a string default (``""``) are not checked."""
    specs = settings_of(obj)

    def key(name):
        return (specs[name].key or name) if from_file and name in specs else name

    defaults = {f.name: f.default for f in dataclasses.fields(obj)}
    values = {}
    for name, s in specs.items():
        value = getattr(obj, name)
        if value is REQUIRED:
            raise InputError("missing (required)", path=path, where=_at(where, key(name)))
        if value is None or (isinstance(value, str) and value == defaults[name]):   # unset, or a string default
            continue
        values[name] = check_value(s, value, _at(where, key(name)), path)
    out = dataclasses.replace(obj, **values)
    rules = getattr(out, "_rules", None)
    if rules is not None:
        def error(name: str | None, message: str) -> InputError:
            return InputError(message, path=path, where=(_at(where, key(name)) if name else where) or None)

        rules(error)
    return out


def check_named(cls, values: dict, where: str = "", path=None) -> dict:
    """``values`` (``{field name: value}``), each checked against setting ``name`` of ``cls``."""
    specs = settings_of(cls)
    return {name: check_value(specs[name], v, _at(where, name), path) for name, v in values.items()}


def build(cls, values: dict, where: str = "", path=None, *, from_file: bool = False, **given):
    """A checked settings object ``cls`` from ``values`` (``{key: value}``): the file's keys
    and its units (degrees) when ``from_file``, else the fields' names. An unknown key, a
    missing required one or a bad value is an ``InputError`` at ``where.<key>``. ``given``:
    fields set by the caller, not by ``values`` (names resolved elsewhere)."""
    specs = settings_of(cls)
    keys = file_keys(cls) if from_file else {name: name for name in specs}
    for k in values:
        if k not in keys:
            raise InputError(f"unknown key{_did_you_mean(k, keys)}; allowed here: {', '.join(keys) or 'none'}",
                             path=path, where=_at(where, k))
    kw = {}
    for k, name in keys.items():
        if k in values:
            value = values[k]
            s = specs[name]
            if value is None and default_of(cls, name) is REQUIRED:
                value = REQUIRED
            if from_file and s.degrees and value is not None:
                value = in_radians(check_value(dataclasses.replace(s, degrees=False), value, _at(where, k), path))
            kw[name] = value
        elif name not in given and default_of(cls, name) is REQUIRED:
            kw[name] = REQUIRED
    kw.update(given)
    return check(cls(**kw), where, path, from_file=from_file)


# --------------------------------------------------------------------------- the settings


@dataclass
class SimulationConfig:
    """Time stepping, solver and recording; file table ``[simulation]``.

    Parameters
    ----------
    duration : float
        s, simulated time (> 0; required in a file).
    dt : float, default 0.001
        s, time step (0 < dt ≤ 0.1).
    record_hz : float, default 100.0
        samples per second recorded (at most one per step).
    iterations : int, default 20
        PGS sweeps per step (used only when bounded rows exist: motors, friction, slack
        couplers, joints outside a train chain).
    erp : float, default 0.2
        fraction of the position and orientation error corrected per step, in (0, 1].
    gravity : float, default 9.81
        m/s², along −z (0: weightless, the physics alone; a scenario needs > 0, as its
        G-forces are in units of it).
    filter_hz : float, default 5.0
        Hz, cut-off of the low-pass filter of the reported G figures.
    warm_start : float, default 1.0
        factor on the previous step's impulses of bounded rows (Python API only).
    max_output_gb : float, default 1.0
        GB, the largest ``timeseries.csv`` the run may write: its expected size is checked
        before the run (docs/scenarios.md, "Limits"); raise it to allow a larger one.
    """

    duration: float = setting(unit="s", gt=0)
    dt: float = setting(0.001, unit="s", gt=0, le=0.1)
    record_hz: float = setting(100.0, unit="Hz", gt=0, le=1e6)
    iterations: int = setting(20, kind=INTEGER, ge=1, le=100_000)
    erp: float = setting(0.2, gt=0, le=1)
    gravity: float = setting(9.81, unit="m/s²", ge=0, le=1000)
    filter_hz: float = setting(5.0, unit="Hz", gt=0, le=1e5)
    warm_start: float = setting(1.0, ge=0, le=1, file=False)
    max_output_gb: float = setting(MAX_OUTPUT_GB, unit="GB", gt=0, le=100_000)

    @property
    def n_steps(self) -> int:
        """Steps of ``duration`` (rounded to the nearest step)."""
        return max(1, int(round(self.duration / self.dt)))

    @property
    def record_every(self) -> int:
        """Steps between two recorded samples (≥ 1)."""
        return max(1, int(round(1.0 / (self.record_hz * self.dt))))

    def _rules(self, error):
        if not self.gravity > 0:
            raise error("gravity", f"must be > 0 m/s², got {self.gravity:g} (G-forces are in units of it)")
        steps = self.duration / self.dt
        if steps > MAX_STEPS:
            raise error("duration", f"{self.duration:g} s at dt = {self.dt:g} s would take {steps:.3g} steps "
                        f"(more than {MAX_STEPS:.0e}); shorten the run or raise dt")
        if self.record_hz * self.dt > 1.0 + 1e-9:
            raise error("record_hz", f"{self.record_hz:g} Hz is faster than one sample per step "
                        f"(dt = {self.dt:g} s allows at most {1.0 / self.dt:g} Hz)")


@dataclass
class CarSpec:
    """One car of a train; file table ``[train.car]`` (every car of the train alike), or the car
    keys of a ``[[train.vehicle]]`` (``VehicleSpec``).

    Parameters
    ----------
    mass : float
        kg, with riders (> 0; required).
    length, width, height : float, default 2.0, 1.2, 1.0
        m, the solid box that gives the inertia (and the coupler positions: ``length``).
    cg_height : float, default 0.0
        m, centre of mass above the track curve along the car's up axis.
    rider_height : float, default 1.1
        m, rider point above the track curve, where G-forces are measured.
    inertia : (Ixx, Iyy, Izz) or None
        kg·m² about the centre of mass in car axes (forward, left, up); default: the box.
    suspended : bool, default False
        a suspended car (in a file: the train's ``suspended`` key): a trolley of
        ``trolley_mass`` rides the track (its anchor on the curve, ``cg_height`` ignored) and
        the car body (``mass``, the box, ``inertia``) hangs below it on a hinge along the
        direction of travel, pivot on the track curve, its centre of mass ``hang`` below the
        pivot; it swings outward in curves. The car's G-forces are those of the swinging body
        at ``rider_height`` along its up axis from the pivot (negative: below the rail), in the
        body's axes. The body is also recorded as a free-body entity ``("<train>.body", car_no)``.
    hang : float, default 1.5
        m, pivot to the hanging body's centre of mass (> 0; suspended cars only).
    trolley_mass : float or None
        kg, the trolley of a suspended car; default 0.1 × ``mass``.
    swing_damping : float, default 0.0
        N·m·s/rad, a rotary damper on the swing hinge (0: free swing).
    rows, seats_per_row : int or None
        rows of seats and seats in a row (None: a row per 0.9 m of length, a seat per 0.55 m
        of width): drawn in a coaster or suspended car, and the default of ``riders``.
    riders : int or None
        riders per car, for the capacity figures (None: rows × seats per row).
    rider_rows : int, default 1
        1: the car's G-forces at its rider point only; 2: also at a front and a rear row of riders,
        ``ROW_INSET`` m inside each end of the car (body) ``length``, on the rider point's level
        (``g_*_front``, ``g_*_rear``; docs/outputs.md).
    bogies : str, default "none"
        ``"none"``: the car is one body on one point of the track; ``"two"``: the car body rides
        on two wheel frames (bogies) ``bogie_spacing`` apart, each a rigid body on its own track
        joint, the body on each by a swivel (docs/physics.md, "Bogies"); ``"jacobs"``: an
        articulated set, neighbouring bodies share the wheel frame between them (N bodies on
        N + 1 frames, no couplers); ``"trailered"``: the first car on two frames, every other car's
        body on one frame at its rear pivot, its front pivot hitched to the rear end of the body ahead
        (N bodies on N + 1 frames, no couplers).
    bogie_spacing : float or None
        m, between the two pivots (0 < spacing < ``length``; required with ``bogies = "two"``).
    bogie_mass : float or None
        kg, each wheel frame (default 0.1 × ``mass``; ``mass`` is the whole car's: the body is
        ``mass − 2 bogie_mass``, in a Jacobs set ``mass − bogie_mass``).
    bogie_wheelbase : float, default 2.0
        m, a wheel frame's length (its inertia and the drawing).
    cg_forward : float, default 0.0
        m, the body's centre of mass ahead of the middle between its pivots.
    swivel_limit : float, default 15.0
        °, the most a body may turn (yaw) on one of its wheel frames; beyond it (frames on diverging
        branches, a curve too tight) the car has a ``split`` event.
    """

    mass: float = setting(unit="kg", gt=0, maximum=MAX_MASS)
    length: float = setting(2.0, unit="m", gt=0, le=1000)
    width: float = setting(1.2, unit="m", gt=0, le=100)
    height: float = setting(1.0, unit="m", gt=0, le=100)
    cg_height: float = setting(0.0, unit="m", maximum=100)
    rider_height: float = setting(1.1, unit="m", maximum=100)
    inertia: tuple | None = setting(None, kind=VECTOR, unit="kg·m²", positive=True, maximum=1e12)
    suspended: bool = setting(False, kind=BOOLEAN, file=False)
    hang: float = setting(1.5, unit="m", gt=0, le=100)
    trolley_mass: float | None = setting(None, unit="kg", gt=0, maximum=MAX_MASS)
    swing_damping: float = setting(0.0, unit="N·m·s/rad", ge=0, maximum=MAX_COEFF)
    rows: int | None = setting(None, kind=INTEGER, ge=1, le=100)
    seats_per_row: int | None = setting(None, kind=INTEGER, ge=1, le=100)
    riders: int | None = setting(None, kind=INTEGER, ge=0, le=10000)
    rider_rows: int = setting(1, kind=INTEGER, ge=1, le=2)
    bogies: str = setting("none", kind=STRING, choices=("none", "two", "jacobs", "trailered"))
    bogie_spacing: float | None = setting(None, unit="m", gt=0, le=1000)
    bogie_mass: float | None = setting(None, unit="kg", gt=0, maximum=MAX_MASS)
    bogie_wheelbase: float = setting(2.0, unit="m", gt=0, le=100)
    cg_forward: float = setting(0.0, unit="m", maximum=1000)
    swivel_limit: float = setting(15.0, unit="°", gt=0, le=90)

    #: settings of a suspended car only
    SUSPENDED_ONLY = ("hang", "trolley_mass", "swing_damping")
    #: m, a front or rear rider row inside its end of the car (``rider_rows = 2``)
    ROW_INSET = 0.45
    #: settings of a car on bogies only
    BOGIE_ONLY = ("bogie_spacing", "bogie_mass", "bogie_wheelbase", "cg_forward", "swivel_limit")

    def seat_layout(self) -> tuple[int, int]:
        """(rows, seats per row): the settings, else a row per 0.9 m of length and a seat per 0.55 m of width."""
        rows = self.rows if self.rows else max(1, int(self.length // 0.9))
        seats = self.seats_per_row if self.seats_per_row else max(1, int(self.width // 0.55))
        return int(rows), int(seats)

    @property
    def rider_count(self) -> int:
        """Riders per car (capacity): ``riders``, else rows × seats per row."""
        if self.riders is not None:
            return int(self.riders)
        rows, seats = self.seat_layout()
        return rows * seats

    def _rules(self, error):
        if self.inertia is not None:
            a, b, c = self.inertia
            if a + b < c or b + c < a or a + c < b:
                raise error("inertia", f"{list(self.inertia)} breaks the triangle inequality "
                            "(no rigid body has these principal moments)")
        if self.rider_rows == 2 and self.length <= 2.0 * self.ROW_INSET:
            raise error("rider_rows", f"2 rows {self.ROW_INSET:g} m inside each end need length > "
                        f"{2.0 * self.ROW_INSET:g} m, got {self.length:g}")
        if self.bogies == "none":
            return
        if self.suspended:
            raise error("bogies", "a suspended car has no bogies")
        if self.bogie_spacing is None:
            raise error("bogie_spacing", f"required with bogies = \"{self.bogies}\"")
        if self.bogie_spacing >= self.length:
            raise error("bogie_spacing", f"must be < length ({self.length:g} m), got {self.bogie_spacing:g}")
        if abs(self.cg_forward) >= self.bogie_spacing / 2.0:
            raise error("cg_forward", f"must lie between the pivots (|cg_forward| < {self.bogie_spacing / 2.0:g} m)")
        if 2.0 * self.frame_mass >= self.mass:
            raise error("bogie_mass", f"two frames of {self.frame_mass:g} kg leave no body of a {self.mass:g} kg car")

    @property
    def row_offsets(self) -> tuple[float, float]:
        """m, the front and the rear rider row along the car's forward axis from its rider point
        (``rider_rows = 2``): ``±(length / 2 − ROW_INSET) − cg_forward`` (a body on bogies has its
        rider point above its centre of mass, ``cg_forward`` ahead of its middle); ``(0, 0)``: no rows."""
        if self.rider_rows != 2:
            return 0.0, 0.0
        d = self.length / 2.0 - self.ROW_INSET
        return d - self.cg_forward, -d - self.cg_forward

    @property
    def frame_mass(self) -> float:
        """kg, each wheel frame of a car on bogies (``bogie_mass``, default 0.1 × ``mass``)."""
        return 0.1 * self.mass if self.bogie_mass is None else self.bogie_mass


#: the kinds of railway vehicle (``[[train.vehicle]]``)
VEHICLE_KINDS = ("wagon", "locomotive", "coach")


@dataclass
class VehicleSpec(CarSpec):
    """``count`` alike vehicles of a railway train, in order from the front; file tables
    ``[[train.vehicle]]`` (docs/scenarios.md, docs/physics.md §10). Every ``CarSpec`` key, and:

    Parameters
    ----------
    count : int, default 1
        how many such vehicles follow.
    kind : {"wagon", "locomotive", "coach"}, default "wagon"
        a locomotive has traction (the keys below); every kind may have air brakes.
    tractive_effort : [[v, F], …] or None
        m/s, N: a locomotive's tractive effort at full notch against speed (piecewise linear).
    power, max_tractive_effort : float or None
        W, N: instead of the curve, ``min(max_tractive_effort, power / v)`` (both needed).
    notches : int, default 8 (locomotives)
        the power controller's steps: the force is notch / notches of the curve.
    dynamic_brake : [[v, F], …] or None
        m/s, N: a locomotive's dynamic-brake force at full setting against speed.
    adhesive_mass : float or None
        kg on the driven axles (default: ``mass``); adhesion limit μ · adhesive_mass · g · cos(grade).
    slip_factor : float, default 0.75 (locomotives)
        while the wheels slip, the force is this fraction of the adhesion limit.
    adhesion : number or [[v, μ], …], default 0.3
        wheel–rail adhesion μ (of speed): limits traction, dynamic and air brake.
    brake_rigging : float, default 0
        N of brake-shoe force per bar of brake-cylinder pressure (0: no air brake).
    shoe_friction : number or [[v, μ], …], default 0.25
        brake-shoe friction coefficient (of speed).
    """

    count: int = setting(1, kind=INTEGER, ge=1, le=10_000)
    kind: str = setting("wagon", kind=STRING, choices=VEHICLE_KINDS)
    tractive_effort: tuple | None = setting(None, kind=CURVE, unit="N", ge=0, maximum=MAX_FORCE)
    power: float | None = setting(None, unit="W", gt=0, maximum=1e10)
    max_tractive_effort: float | None = setting(None, unit="N", gt=0, maximum=MAX_FORCE)
    notches: int | None = setting(None, kind=INTEGER, ge=1, le=100)
    dynamic_brake: tuple | None = setting(None, kind=CURVE, unit="N", ge=0, maximum=MAX_FORCE)
    adhesive_mass: float | None = setting(None, unit="kg", gt=0, maximum=MAX_MASS)
    slip_factor: float | None = setting(None, gt=0, le=1)
    adhesion: Any = setting(0.3, kind=CURVE, or_number=True, ge=0, le=2)
    brake_rigging: float = setting(0.0, unit="N/bar", ge=0, maximum=MAX_FORCE)
    shoe_friction: Any = setting(0.25, kind=CURVE, or_number=True, ge=0, le=2)

    #: settings of a locomotive only (and their defaults there)
    LOCOMOTIVE_ONLY = ("tractive_effort", "power", "max_tractive_effort", "notches", "dynamic_brake",
                       "adhesive_mass", "slip_factor")
    LOCOMOTIVE_DEFAULTS = {"notches": 8, "slip_factor": 0.75}

    def _rules(self, error):
        CarSpec._rules(self, error)
        if self.kind != "locomotive":
            for name in self.LOCOMOTIVE_ONLY:
                if getattr(self, name) is not None:
                    raise error(name, f"applies to locomotives only (kind = \"locomotive\"), not to a {self.kind}")
            return
        for name, value in self.LOCOMOTIVE_DEFAULTS.items():
            if getattr(self, name) is None:
                setattr(self, name, value)
        if self.tractive_effort is not None and (self.power is not None or self.max_tractive_effort is not None):
            raise error("power", "give either tractive_effort (a curve) or power and max_tractive_effort, not both")
        if self.tractive_effort is None:
            if self.power is None or self.max_tractive_effort is None:
                missing = "power" if self.power is None else "max_tractive_effort"
                raise error(missing, "a locomotive needs tractive_effort = [[v, F], …] or power (W) and "
                            "max_tractive_effort (N)")
        if self.adhesive_mass is not None and self.adhesive_mass > self.mass:
            raise error("adhesive_mass", f"must be ≤ mass ({self.mass:g} kg), got {self.adhesive_mass:g}")


@dataclass
class CouplingSpec:
    """How consecutive cars of a train are joined; file table ``[train.coupling]``.

    Parameters
    ----------
    type : {"distance", "ball", "draft_gear"}, default "distance"
        ``distance``: a rigid bar of length ``gap`` between the cars' ends (on the track
        curve); ``ball``: a ball joint in the middle of the gap; ``draft_gear``: a railway
        coupler with free play ``slack`` and a friction draft gear (docs/physics.md §10).
    gap : float, default 0.5
        m between consecutive cars (> 0 for ``distance`` and ``draft_gear`` with more than one car).
    stiffness, damping : float or None
        N/m and N·s/m: a soft coupler (soft-constraint form); None: rigid. ``damping``
        needs ``stiffness``. A draft gear's ``stiffness`` is its loading stiffness (default
        2e7 N/m; no ``damping``: its friction is the hysteresis).
    slack : float or None
        m of free play: a ``distance`` bar's length may vary in ``[gap − slack/2, gap + slack/2]``,
        a ``ball``'s two halves move ±slack/2 apart along the cars' mean axis (one-sided rows,
        solved by PGS rather than the exact chain solve); a draft gear: default 0.025, in the
        chain solve.
    unloading_stiffness, preload, travel : float or None
        draft gear only: N/m of its unloading curve (default 5e6, ≤ ``stiffness``), N it
        takes to start deflecting (default 5e4), m of travel to solid (default 0.08).
    slack_start : {"centred", "stretched", "bunched"}, default "centred"
        where a coupler with slack starts in its free play: the middle, drawn out, pushed in.
    """

    type: str = setting("distance", kind=STRING, choices=("distance", "ball", "draft_gear"))
    gap: float = setting(0.5, unit="m", ge=0, le=1000)
    stiffness: float | None = setting(None, unit="N/m", gt=0, maximum=MAX_COEFF)
    damping: float | None = setting(None, unit="N·s/m", ge=0, maximum=MAX_COEFF)
    slack: float | None = setting(None, unit="m", ge=0, le=100)
    unloading_stiffness: float | None = setting(None, unit="N/m", gt=0, maximum=MAX_COEFF)
    preload: float | None = setting(None, unit="N", ge=0, maximum=MAX_FORCE)
    travel: float | None = setting(None, unit="m", gt=0, le=10)
    slack_start: str = setting("centred", kind=STRING, choices=("centred", "stretched", "bunched"))

    #: a draft gear's defaults (a freight wagon's friction draft gear)
    DRAFT_GEAR = {"stiffness": 2.0e7, "unloading_stiffness": 5.0e6, "preload": 5.0e4, "travel": 0.08,
                  "slack": 0.025}
    DRAFT_GEAR_ONLY = ("unloading_stiffness", "preload", "travel")

    def _rules(self, error):
        if self.type == "draft_gear":
            if self.damping is not None:
                raise error("damping", "does not apply to a draft gear (its friction is the hysteresis between "
                            "stiffness and unloading_stiffness)")
            for name, value in self.DRAFT_GEAR.items():
                if getattr(self, name) is None:
                    setattr(self, name, value)
            if self.unloading_stiffness > self.stiffness:
                raise error("unloading_stiffness", f"must be ≤ stiffness ({self.stiffness:g} N/m: the unloading "
                            f"curve lies below the loading one), got {self.unloading_stiffness:g}")
        else:
            for name in self.DRAFT_GEAR_ONLY:
                if getattr(self, name) is not None:
                    raise error(name, f"applies to type = \"draft_gear\" only, not to a {self.type} coupler")
        if self.damping is not None and self.stiffness is None:
            raise error("damping", "needs stiffness too (a soft coupler is a spring and a damper)")
        if self.slack_start != "centred" and not self.slack:
            raise error("slack_start", "needs slack (free play) to start in")

    @property
    def free_play(self) -> float:
        """m of free play (0: none)."""
        return float(self.slack or 0.0)

    def start_offset(self) -> float:
        """m the coupler starts away from its rest length ``gap``: 0 centred, ±slack/2 stretched or bunched."""
        return {"centred": 0.0, "stretched": 0.5, "bunched": -0.5}[self.slack_start] * self.free_play


@dataclass
class BrakeSpec:
    """A railway train's automatic air brake; file table ``[train.brake]`` (docs/physics.md §10).

    Parameters
    ----------
    pipe_pressure : float, default 5.0
        bar, the charged brake pipe (brakes released).
    full_service : float, default 1.5
        bar of pipe reduction that gives full cylinder pressure (≤ ``pipe_pressure``).
    cylinder_pressure : float, default 3.8
        bar in the brake cylinders at full service and in emergency.
    propagation_speed : float, default 250
        m/s at which a service application or a release runs along the pipe.
    emergency_speed : float, default 290
        m/s at which an emergency application runs along the pipe.
    fill_time, release_time : float, default 4.0, 15.0
        s for a cylinder to fill from 0 to ``cylinder_pressure`` and to empty again (UIC
        position P; freight position G is about 20 and 50 s).
    """

    pipe_pressure: float = setting(5.0, unit="bar", gt=0, le=20)
    full_service: float = setting(1.5, unit="bar", gt=0, le=20)
    cylinder_pressure: float = setting(3.8, unit="bar", gt=0, le=20)
    propagation_speed: float = setting(250.0, unit="m/s", gt=0, le=MAX_SPEED)
    emergency_speed: float = setting(290.0, unit="m/s", gt=0, le=MAX_SPEED)
    fill_time: float = setting(4.0, unit="s", gt=0, le=1e4)
    release_time: float = setting(15.0, unit="s", gt=0, le=1e4)

    def _rules(self, error):
        if self.full_service > self.pipe_pressure:
            raise error("full_service", f"must be ≤ pipe_pressure ({self.pipe_pressure:g} bar), "
                        f"got {self.full_service:g}")


@dataclass
class DriverStep:
    """One step of a railway train's driver; file tables ``[[train.driver]]``.

    Parameters
    ----------
    time, position : float or None
        s, or m of the lead vehicle's arc length: when the step is taken (exactly one); a
        position step is taken when the lead vehicle first reaches it.
    notch : int or None
        the locomotives' power notch (0 … their ``notches``); a notch above 0 sets the dynamic
        brake to 0.
    dynamic_brake : float or None
        0 … 1 of the locomotives' dynamic-brake curve; above 0 it sets the notch to 0.
    brake : "release", "emergency" or a number
        the automatic brake handle: release, a service reduction of the brake pipe in bar, or
        an emergency application.
    locomotive : int or None
        the car number (1 = lead) of the one locomotive ``notch`` or ``dynamic_brake`` is for
        (default: every locomotive of the train, as distributed power is driven).
    """

    time: float | None = setting(None, unit="s", ge=0, maximum=1e9)
    position: float | None = setting(None, unit="m", maximum=MAX_LENGTH)
    notch: int | None = setting(None, kind=INTEGER, ge=0, le=100)
    dynamic_brake: float | None = setting(None, ge=0, le=1)
    brake: Any = setting(None, unit="bar", gt=0, le=20, words=("release", "emergency"))
    locomotive: int | None = setting(None, kind=INTEGER, ge=1, le=10_000)

    def _rules(self, error):
        if (self.time is None) == (self.position is None):
            raise error("time" if self.time is None else "position",
                        "a driver step needs exactly one of time (s) or position (m of the lead vehicle)")
        if self.notch is None and self.dynamic_brake is None and self.brake is None:
            raise error(None, "a driver step sets notch, dynamic_brake or brake")
        if self.locomotive is not None and self.notch is None and self.dynamic_brake is None:
            raise error("locomotive", "names the locomotive of a notch or dynamic_brake step")

    def command(self) -> str:
        """The step's commands in words: ``notch 8``, ``dynamic brake 0.5``, ``brake 0.5 bar``."""
        out = []
        if self.notch is not None:
            out.append(f"notch {self.notch}")
        if self.dynamic_brake is not None:
            out.append(f"dynamic brake {self.dynamic_brake:g}")
        if self.brake is not None:
            out.append(f"brake {self.brake}" if isinstance(self.brake, str) else f"brake {self.brake:g} bar")
        text = ", ".join(out)
        return text + (f" (locomotive car {self.locomotive})" if self.locomotive is not None else "")


@dataclass
class ResistanceConfig:
    """What slows the cars on a track; file table ``[resistance]``.

    Parameters
    ----------
    rolling : float, default 0.0
        ``physical``: rolling-resistance coefficient × wheel force (a bounded friction row
        along the track); ``nl2``: a friction deceleration ``rolling`` × g.
    drag_area : float, default 0.0
        m², Cd·A per car: aerodynamic drag ½ ``air_density`` ``drag_area`` v|v|.
    air_density : float, default 1.2
        kg/m³.
    mode : {"physical", "nl2"}, default "physical"
        ``nl2``: NoLimits-style resistance, friction ``rolling`` × g and drag ``nl2_drag`` × v²
        per unit mass (as NoLimits and force-vector designs do).
    davis : (A, B, C) or None
        Davis coefficients per car, ``physical`` mode: A N (a friction row), B N·s/m and
        C N·s²/m² explicit.
    nl2_drag : float, default 0.0
        1/m, ``nl2`` mode's drag per unit mass.
    """

    rolling: float = setting(0.0, ge=0, le=10)
    drag_area: float = setting(0.0, unit="m²", ge=0, le=1e4)
    air_density: float = setting(1.2, unit="kg/m³", gt=0, le=1e4)
    mode: str = setting("physical", kind=STRING, choices=("physical", "nl2"))
    davis: tuple | None = setting(None, kind=VECTOR, nonnegative=True, maximum=1e9)
    nl2_drag: float = setting(0.0, unit="1/m", ge=0, le=1e3)


@dataclass
class OperationConfig:
    """How trains share a track; file table ``[operation]``.

    Parameters
    ----------
    restitution : float, default 0.0
        0..1, of the closing speed when one train runs into another (0: they stay together).
    max_hold : float, default 300.0
        s: a train held longer by a block section is a deadlock (the run ends ``stalled``).
    """

    restitution: float = setting(0.0, ge=0, le=1)
    max_hold: float = setting(300.0, unit="s", gt=0, le=1e7)


@dataclass
class TrackConfig:
    """``[[track]]``: one track, from a curve file or from segments.

    ``track`` is the loaded ``trackrider.curves.Track``; ``length`` its arc length in m;
    ``gauge`` the rail gauge in m; ``roll`` the bank knots ``[(s m, degrees), ...]``;
    ``frame`` ``up | minimal | frenet | file`` or None (the file's own frame for NL2 files,
    else ``up``); ``closed`` None: from the curve file; ``style`` drawing only (None: from
    the trains' wheels); ``body`` the ``[[body]]`` that carries the track (given where it lies at
    the start, it moves rigidly with the body: docs/physics.md §9) or ``"world"``. ``curve``,
    ``segments`` and ``roll`` are read by the loader.
    """

    name: str
    curve: Any
    segments: list | None
    format: str = setting("auto", kind=STRING, choices=("auto", "points", "nl2", "json"))
    frame: str | None = setting(None, kind=STRING, choices=("up", "minimal", "frenet", "file"))
    closed: bool | None = setting(None, kind=BOOLEAN)
    gauge: float = setting(1.0, unit="m", gt=0, le=100)
    roll: list | None = None
    track: Any = None
    length: float = 0.0
    style: str | None = setting(None, kind=STRING, choices=("steel", "railway"))
    body: str = setting("world", kind=STRING)


#: what one car can be drawn as (a train's ``model``, or one vehicle's kind)
VEHICLE_KINDS = ("coaster", "locomotive", "coach", "wagon", "hopper", "flat")
#: a train's ``model``: ``auto``, a vehicle kind for every car, or a train made of kinds
VEHICLE_MODELS = ("auto", *VEHICLE_KINDS, "freight", "passenger")


@dataclass
class TrainConfig:
    """``[[train]]``: a train of ``cars`` alike cars (``car``, joined by ``coupling``), or of the
    railway vehicles ``vehicles`` (``[[train.vehicle]]``, in order from the front).

    Parameters
    ----------
    cars : int, default 1
        how many cars (with ``vehicles``: the sum of their counts).
    wheels : {"coaster", "railway"}, default "coaster"
        ``coaster``: up-stop wheels, support both ways; ``railway``: support one way (the
        car can lift off).
    start_s : float, default 0.0
        m, arc length of the lead car's anchor at the start; the others follow behind it.
    start_speed : float, default 0.0
        m/s along the track (signed).
    role : {"riders", "counterweight"}, default "riders"
        ``counterweight``: a weight with no riders (no G at a rider, no airtime).
    model : str, default "auto"
        drawing only: what the cars look like (``VEHICLE_MODELS``): ``auto`` (coaster cars
        on coaster wheels; on railway wheels a coach alone, else a locomotive and
        wagons), one vehicle kind for every car (``VEHICLE_KINDS``), or ``freight`` (a
        locomotive, then box, hopper and flat wagons) or ``passenger`` (a locomotive,
        then coaches).
    name, track, track_index, car, coupling, color
        the train's name, its track's name and index (resolved by the loader), its
        ``CarSpec`` (with ``vehicles``: the first vehicle's) and ``CouplingSpec``, and its
        colour (drawing only: RGB 0..255, None: one per train). ``suspended`` is the file's
        ``train.suspended``, kept as ``car.suspended``.
    vehicles, brake, driver
        a railway train's ``VehicleSpec`` list (None: ``cars`` × ``car``), its ``BrakeSpec``
        (``[train.brake]``; None: the defaults when a vehicle has ``brake_rigging``) and its
        ``DriverStep`` list (``[[train.driver]]``).
    """

    name: str
    track: str
    track_index: int
    car: CarSpec
    cars: int = setting(1, kind=INTEGER, ge=1, le=10_000)
    wheels: str = setting("coaster", kind=STRING, choices=("coaster", "railway"))
    start_s: float = setting(0.0, unit="m", maximum=MAX_LENGTH)
    start_speed: float = setting(0.0, unit="m/s", maximum=MAX_SPEED)
    coupling: CouplingSpec = field(default_factory=CouplingSpec)
    role: str = setting("riders", kind=STRING, choices=("riders", "counterweight"))
    model: str = setting("auto", kind=STRING, choices=VEHICLE_MODELS)
    color: tuple | None = None
    vehicles: list | None = None
    brake: BrakeSpec | None = None
    driver: list = field(default_factory=list)

    def _rules(self, error):
        if self.coupling.type in ("distance", "draft_gear") and self.coupling.gap <= 0.0 and self.cars > 1:
            raise error("coupling.gap", f"must be > 0 for a {self.coupling.type} coupling (the bar length)")
        if self.car.bogies != "none" and self.coupling.slack is not None and self.coupling.type != "draft_gear":
            raise error("coupling.slack", "a train on bogies has rigid, sprung or draft-gear couplers (slack only as "
                        "a draft gear's free play) for now")
        if self.vehicles is None:
            if self.brake is not None or self.driver:
                raise error("brake" if self.brake is not None else "driver",
                            "a train with a brake or a driver lists its vehicles ([[train.vehicle]])")
            return
        if not self.vehicles:
            raise error("vehicle", "needs at least one [[train.vehicle]]")
        if self.car.suspended:
            raise error("suspended", "a railway train's vehicles are not suspended")
        kinds = {v.bogies for v in self.vehicles}
        if kinds - {"none", "two"} or len(kinds) > 1:
            raise error("vehicle", "a railway train's vehicles all run on two bogies (bogies = \"two\") or none "
                        f"(got {', '.join(sorted(kinds))})")
        self.cars = sum(v.count for v in self.vehicles)
        if self.cars > 10_000:
            raise error("vehicle", f"{self.cars} vehicles: at most 10000")
        specs = self.car_specs()
        locos = [i for i, v in enumerate(specs) if v.kind == "locomotive"]
        if any(v.brake_rigging > 0.0 for v in specs) and self.brake is None:
            self.brake = BrakeSpec()
        pipe = self.brake.pipe_pressure if self.brake is not None else None
        for i, step in enumerate(self.driver):
            where = f"driver[{i}]"
            if step.locomotive is not None:
                if not 1 <= step.locomotive <= self.cars or specs[step.locomotive - 1].kind != "locomotive":
                    raise error(f"{where}.locomotive", f"car {step.locomotive} is not a locomotive (locomotives: "
                                f"{', '.join(str(k + 1) for k in locos) or 'none'})")
            aimed = [step.locomotive - 1] if step.locomotive is not None else locos
            if (step.notch is not None or step.dynamic_brake is not None) and not aimed:
                raise error(f"{where}.{'notch' if step.notch is not None else 'dynamic_brake'}",
                            "the train has no locomotive")
            if step.notch is not None:
                most = min(specs[k].notches for k in aimed)
                if step.notch > most:
                    raise error(f"{where}.notch", f"must be ≤ {most} (the locomotive's notches), got {step.notch}")
            if step.dynamic_brake and any(specs[k].dynamic_brake is None for k in aimed):
                raise error(f"{where}.dynamic_brake", "a locomotive without a dynamic_brake curve")
            if step.brake is not None:
                if pipe is None:
                    raise error(f"{where}.brake", "no vehicle of the train has an air brake (brake_rigging)")
                if not isinstance(step.brake, str) and step.brake > pipe:
                    raise error(f"{where}.brake", f"a reduction of {step.brake:g} bar is more than the brake pipe's "
                                f"{pipe:g} bar")

    @property
    def suspended(self) -> bool:
        """The cars hang below their trolleys (``car.suspended``)."""
        return self.car.suspended

    @property
    def pitch(self) -> float:
        """Distance between the anchors of consecutive cars, m (alike cars; see ``car_s``)."""
        return self.car.length + self.coupling.gap

    def car_specs(self) -> list:
        """Every car's spec, lead car first: ``car`` ``cars`` times, or each vehicle ``count`` times."""
        if self.vehicles is None:
            return [self.car] * self.cars
        return [v for v in self.vehicles for _ in range(v.count)]

    def car_s(self) -> list[float]:
        """Arc length of every car's anchor at the start, lead car first, m (along the track)."""
        specs = self.car_specs()
        out = [self.start_s]
        for front, back in zip(specs, specs[1:]):
            out.append(out[-1] - (front.length + back.length) / 2.0 - self.coupling.gap)
        return out

    def stable_step(self) -> float:
        """The largest stable step of the train's draft gears, s (docs/physics.md §10): ``2/ω_max``,
        ω_max² = max over vehicles of 2 Σ k / m (its Gershgorin bound); inf without draft gears."""
        specs = self.car_specs()
        n = len(specs)
        if self.coupling.type != "draft_gear" or n < 2:
            return math.inf
        w2 = max(2.0 * self.coupling.stiffness * ((i > 0) + (i < n - 1)) / c.mass for i, c in enumerate(specs))
        return 2.0 / math.sqrt(w2)

    def step_error(self, dt: float) -> str | None:
        """Why ``dt`` is too long for the train's draft gears, or None."""
        h_max = self.stable_step()
        if dt <= h_max:
            return None
        return (f"dt = {dt:g} s is above the draft gears' stable step {h_max:.3g} s (2/ω_max, ω_max² = 2 Σ k / m "
                f"of the lightest vehicle: docs/physics.md §10): a smaller dt or stiffness")

    @property
    def length(self) -> float:
        """From the front of the lead car to the back of the last, m."""
        specs = self.car_specs()
        return sum(c.length for c in specs) + (len(specs) - 1) * self.coupling.gap


@dataclass
class SectionConfig:
    """A motor on a stretch ``[s_from, s_to]`` m of one track; file table ``[[section]]``.

    Parameters
    ----------
    type : str
        a section type of ``trackrider.physics.sections.SECTIONS`` (lift, launch, brake, trim,
        booster, station: what each does is its ``words`` there).
    s_from, s_to : float
        m of arc length (files: ``from``, ``to``); ``s_to > s_from``.
    max_force : float
        N per car (> 0).
    speed : float
        m/s target (required, but for a brake: default 0, a stop brake).
    name : str, default ""
        unique among the sections (reports say ``section[i]`` when it has none).
    block : bool, default False
        a section that ends a block (types whose ``block`` role allows it; a station always does).
    dwell : float or None
        s a station holds a stopped train before dispatch (default 30; stations only: None
        for the other types).
    track, track_index
        the track's name (files; default the only track) and index, resolved by the loader.
    """

    type: str = setting(kind=STRING, choices=tuple(SECTIONS))
    s_from: float = setting(unit="m", maximum=MAX_LENGTH, key="from")
    s_to: float = setting(unit="m", maximum=MAX_LENGTH, key="to")
    max_force: float = setting(unit="N", gt=0, le=MAX_FORCE)
    speed: float | None = setting(None, unit="m/s", ge=0, le=MAX_SPEED)
    name: str = setting("", kind=STRING)
    block: bool = setting(False, kind=BOOLEAN)
    dwell: float | None = setting(None, unit="s", ge=0, le=1e6)
    track: str | None = setting(None, kind=STRING)
    track_index: int = 0

    def _rules(self, error):
        if not self.s_from < self.s_to:
            raise error("s_to", f"must be greater than from ({self.s_from:g} m), got {self.s_to:g} m")
        role = SECTIONS[self.type].block
        if self.block and role is None:
            kinds = ", ".join(t for t, s in SECTIONS.items() if s.block)
            raise error("block", f"a {self.type} cannot end a block: block sections are {kinds}")
        if self.dwell is not None and role != "station":
            raise error("dwell", f"applies to stations only, not to a {self.type}")
        if role == "station":
            self.block = True
            if self.dwell is None:
                self.dwell = 30.0
        if self.speed is None:
            if SECTIONS[self.type].speed is None:
                raise error("speed", "missing (required)")
            self.speed = SECTIONS[self.type].speed   # a brake: 0, a stop brake


@dataclass
class BodyConfig:
    """A free rigid body on no track; file table ``[[body]]``.

    Parameters
    ----------
    mass : float
        kg (> 0).
    position : (x, y, z)
        m, its centre of mass at the start.
    size : (l, w, h) or None
        m, a solid box that gives the inertia ...
    inertia : (Ixx, Iyy, Izz) or None
        ... or kg·m² about the centre of mass in body axes (exactly one of the two).
    orientation : (w, x, y, z), default identity
        a unit quaternion, body to world (normalised).
    velocity : (vx, vy, vz), default 0
        m/s.
    angular_velocity : (wx, wy, wz), default 0
        rad/s, in world axes.
    name : str
        the body's name (a file's ``name``; ``World.add_body``'s first argument).
    """

    mass: float = setting(unit="kg", gt=0, maximum=MAX_MASS)
    position: tuple = setting(kind=VECTOR, unit="m")
    size: tuple | None = setting(None, kind=VECTOR, unit="m", positive=True, maximum=1e4)
    inertia: tuple | None = setting(None, kind=VECTOR, unit="kg·m²", positive=True, maximum=1e15)
    orientation: tuple = setting((1.0, 0.0, 0.0, 0.0), kind=VECTOR, n=4, maximum=1e6)
    velocity: tuple = setting((0.0, 0.0, 0.0), kind=VECTOR, unit="m/s", maximum=MAX_SPEED)
    angular_velocity: tuple = setting((0.0, 0.0, 0.0), kind=VECTOR, unit="rad/s", maximum=1e5)
    name: str = ""

    def _rules(self, error):
        if self.size is None and self.inertia is None:
            raise error(None, "needs 'size' (a solid box, m) or 'inertia' ([Ixx, Iyy, Izz], kg·m²)")
        if self.size is not None and self.inertia is not None:
            raise error("inertia", "give either size or inertia, not both")
        q = self.orientation
        norm = math.sqrt(sum(v * v for v in q))
        if norm < 1e-9:
            raise error("orientation", "must be a unit quaternion [w, x, y, z], got a zero vector")
        if abs(norm - 1.0) > 1e-3:
            raise error("orientation", f"must be a unit quaternion [w, x, y, z], got norm {norm:.6g}")
        self.orientation = tuple(v / norm for v in q)


# --------------------------------------------------------------------------- joints: each kind's class in its module


def check_ordered(error, lo_name: str, hi_name: str, lo, hi) -> None:
    """A joint's rule: ``lo`` ≤ ``hi`` when both are given (``error`` as ``_rules`` gets it)."""
    if lo is not None and hi is not None and lo > hi:
        raise error(hi_name, f"must be ≥ {lo_name}")


def check_motor(error, speed, bound_name: str, bound) -> None:
    """A joint's rule: a motor's force or torque bound needs its speed."""
    if bound is not None and speed is None:
        raise error(bound_name, "needs motor_speed (the motor's target speed)")


def check_buffer(error, lo, hi, stiffness, damping) -> None:
    """A joint's rule: end-stop buffers need an end stop, and a spring or a damper that is not nothing."""
    for name, value in (("stop_stiffness", stiffness), ("stop_damping", damping)):
        if value is not None and lo is None and hi is None:
            raise error(name, "needs an end stop to act at (min_ and/or max_ travel or angle)")
    if damping is not None and stiffness is None and not damping > 0:
        raise error("stop_damping", "must be > 0 without stop_stiffness (a buffer of neither is rigid: leave both out)")


def check_nonzero(error, axis) -> None:
    """A joint's rule: its ``axis`` is not the zero vector."""
    if math.sqrt(sum(v * v for v in axis)) < 1e-9:
        raise error("axis", "must not be the zero vector")


#: a joint's ``anchor_a``/``anchor_b``: m, in the end's body axes (a world point for the world)
ANCHOR = Setting(VECTOR, "m", maximum=MAX_LENGTH)

def joint_params(spec) -> dict:
    """``{name: value}`` of a joint's settings that are set (not None)."""
    return {name: getattr(spec, name) for name in settings_of(spec) if getattr(spec, name) is not None}
