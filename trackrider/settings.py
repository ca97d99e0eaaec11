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


@dataclass(frozen=True)
class Setting:
    """What one field accepts. ``kind``: number | integer | boolean | string | vector;
    ``unit`` (shown in messages); bounds ``gt``, ``ge``, ``lt``, ``le``; ``maximum``: the
    largest magnitude that is not absurd; ``choices`` of a string; ``n`` elements of a
    vector, each ``> 0`` when ``positive``, ``≥ 0`` when ``nonnegative``; ``key``: the
    file's word when it differs from the field's name; ``file``: read from scenario files;
    ``degrees``: an angle (or a rate) the field holds in radians, files give in degrees,
    its unit and bounds in degrees."""

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


def setting(default: Any = REQUIRED, *, kind: str = NUMBER, unit: str = "", gt=None, ge=None, lt=None, le=None,
            maximum=None, choices=None, n: int = 3, positive: bool = False, nonnegative: bool = False,
            key: str | None = None, file: bool = True, degrees: bool = False) -> Any:
    """A dataclass field carrying its ``Setting``; ``default`` ``REQUIRED`` (the default) makes it required.

    A vector's default, a tuple, is kept as it is (tuples are immutable)."""
    meta = Setting(kind, unit, gt, ge, lt, le, maximum, None if choices is None else tuple(choices), n, positive,
                   nonnegative, key, file, degrees)
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
    """``value`` checked against ``s`` and normalised (float, int, tuple of floats);
    an ``InputError`` at ``where`` (and ``path``) when it does not fit."""

    def error(message):
        return InputError(message, path=path, where=where or None)

    if s.degrees:   # the value in radians: the bounds too
        rad = [None if b is None else math.radians(b) for b in (s.gt, s.ge, s.lt, s.le, s.maximum)]
        s = dataclasses.replace(s, gt=rad[0], ge=rad[1], lt=rad[2], le=rad[3], maximum=rad[4],
                                unit=s.unit.replace("°", "rad"), degrees=False)
    u = f" {s.unit}" if s.unit else ""
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
                value = math.radians(check_value(dataclasses.replace(s, degrees=False), value, _at(where, k), path))
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
    """

    duration: float = setting(unit="s", gt=0)
    dt: float = setting(0.001, unit="s", gt=0, le=0.1)
    record_hz: float = setting(100.0, unit="Hz", gt=0, le=1e6)
    iterations: int = setting(20, kind=INTEGER, ge=1, le=100_000)
    erp: float = setting(0.2, gt=0, le=1)
    gravity: float = setting(9.81, unit="m/s²", ge=0, le=1000)
    filter_hz: float = setting(5.0, unit="Hz", gt=0, le=1e5)
    warm_start: float = setting(1.0, ge=0, le=1, file=False)

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
    """One car of a train (all cars of a train are alike); file table ``[train.car]``.

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

    #: settings of a suspended car only
    SUSPENDED_ONLY = ("hang", "trolley_mass", "swing_damping")

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


@dataclass
class CouplingSpec:
    """How consecutive cars of a train are joined; file table ``[train.coupling]``.

    Parameters
    ----------
    type : {"distance", "ball"}, default "distance"
        ``distance``: a rigid bar of length ``gap`` between the cars' ends (on the track
        curve); ``ball``: a ball joint in the middle of the gap.
    gap : float, default 0.5
        m between consecutive cars (> 0 for ``distance`` with more than one car).
    stiffness, damping : float or None
        N/m and N·s/m: a soft coupler (soft-constraint form); None: rigid. ``damping``
        needs ``stiffness``.
    slack : float or None
        m of free play: the bar length may vary in ``[gap − slack/2, gap + slack/2]``
        (one-sided rows, solved by PGS rather than the exact chain solve).
    """

    type: str = setting("distance", kind=STRING, choices=("distance", "ball"))
    gap: float = setting(0.5, unit="m", ge=0, le=1000)
    stiffness: float | None = setting(None, unit="N/m", gt=0, maximum=MAX_COEFF)
    damping: float | None = setting(None, unit="N·s/m", ge=0, maximum=MAX_COEFF)
    slack: float | None = setting(None, unit="m", ge=0, le=100)

    def _rules(self, error):
        if self.damping is not None and self.stiffness is None:
            raise error("damping", "needs stiffness too (a soft coupler is a spring and a damper)")


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
    the trains' wheels). ``curve``, ``segments`` and ``roll`` are read by the loader.
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


#: what one car can be drawn as (a train's ``model``, or one vehicle's kind)
VEHICLE_KINDS = ("coaster", "locomotive", "coach", "wagon", "hopper", "flat")
#: a train's ``model``: ``auto``, a vehicle kind for every car, or a train made of kinds
VEHICLE_MODELS = ("auto", *VEHICLE_KINDS, "freight", "passenger")


@dataclass
class TrainConfig:
    """``[[train]]``: a train of ``cars`` alike cars (``car``, joined by ``coupling``).

    Parameters
    ----------
    cars : int, default 1
        how many cars.
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
        ``CarSpec`` and ``CouplingSpec``, and its colour (drawing only: RGB 0..255, None:
        one per train). ``suspended`` is the file's ``train.suspended``, kept as
        ``car.suspended``.
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

    def _rules(self, error):
        if self.coupling.type == "distance" and self.coupling.gap <= 0.0 and self.cars > 1:
            raise error("coupling.gap", "must be > 0 for a distance coupling (the bar length)")

    @property
    def suspended(self) -> bool:
        """The cars hang below their trolleys (``car.suspended``)."""
        return self.car.suspended

    @property
    def pitch(self) -> float:
        """Distance between the anchors of consecutive cars, m."""
        return self.car.length + self.coupling.gap

    def car_s(self) -> list[float]:
        """Arc length of every car's anchor at the start, lead car first, m."""
        return [self.start_s - i * self.pitch for i in range(self.cars)]


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


def check_nonzero(error, axis) -> None:
    """A joint's rule: its ``axis`` is not the zero vector."""
    if math.sqrt(sum(v * v for v in axis)) < 1e-9:
        raise error("axis", "must not be the zero vector")


#: a joint's ``anchor_a``/``anchor_b``: m, in the end's body axes (a world point for the world)
ANCHOR = Setting(VECTOR, "m", maximum=MAX_LENGTH)

def joint_params(spec) -> dict:
    """``{name: value}`` of a joint's settings that are set (not None)."""
    return {name: getattr(spec, name) for name in settings_of(spec) if getattr(spec, name) is not None}
