"""Ride measurements: filtered G, wheel-load split, events, status and summary figures.

Everything here consumes the recorded samples of ``World.run`` chunk by chunk
(``samples`` of shape ``(m, n_entities, N_CHANNELS)``, columns named in
``trackrider.physics.channels``) and keeps memory flat, however long the run.

* ``ZeroPhaseLowpass`` (``trackrider.filters``) — a streaming, zero-phase 4-pole Butterworth low-pass
  that equals ``scipy.signal.sosfiltfilt`` of the whole series (odd padding,
  scipy's default pad length) to within ~1e-12 of the signal's scale.
* ``wheel_split`` — inner/outer rail loads and L/V from the track-joint forces.
* ``RideMetrics`` — buffers the raw samples until their filtered G is final,
  hands them back in order (``push``/``finish``) together with the filtered
  values, and collects per-train figures and events for ``summary.json``.

Definitions (also in ``docs/outputs.md``):

* Filtered G: ``g_*_filtered`` = zero-phase Butterworth, order 4, cut-off
  ``cutoff_hz`` (default 5 Hz) of the recorded raw G at ``record_hz``. When the
  cut-off is not below the Nyquist frequency (``record_hz / 2``) the filter
  cannot act and the filtered series equals the raw one (summary
  ``filter.applied = false``).
* Summary G extremes and airtime use the filtered series; ``raw_*`` figures
  give the unfiltered extremes. Both count only samples where the car is on
  its track (``ON_TRACK`` set, ``RAN_OFF`` not): a car that left the track is
  not a ride any more.
* Rider rows: cars with ``rider_rows = 2`` (``rows``) add the front and rear rows'
  G (``ROW_G``, filtered as ``FILTERED_ROW_G``) and their train a ``rider_rows``
  entry: the rows' filtered extremes (as the G extremes), and per car the rider
  point's and the rows' largest and smallest filtered vertical and lateral G.
* ``airtime_s``: time during which **any** car of the train has filtered
  ``g_vertical < 0`` (samples × record interval). ``airtime_s_lead_car``: the
  same for the lead car alone.
* ``energy_drift``: over every pair of consecutive samples where no car (or
  body) of the train's energy group has ``MOTOR_ACTIVE`` or ``RESISTANCE_ACTIVE``
  set, the change of the group's kinetic + potential energy is summed; the sum
  is divided by the group's largest kinetic energy in the run. ``None`` when
  there was no such stretch or the group never moved. A group is the train
  plus every train and body joined to it by a ``[[joint]]``.
* Events (``t, train, car, kind``):
  ``wheel_lift`` (railway trains only) when the inner wheel load
  ``Q_inner = F2/2 − |M_T|/gauge`` falls below 0; re-armed once ``Q_inner``
  is back above ``WHEEL_LIFT_REARM`` × ``F2/2``.
  ``support_lost`` when a car's ``SUPPORT_CLAMPED`` flag rises (a flag set
  again within ``FLAG_REARM_TIME`` of its last set sample is the same episode).
  ``ran_off_track`` when a car's ``RAN_OFF`` flag rises.
  ``stalled`` when a train that has moved faster than ``STALL_MOVING_SPEED``
  has every car slower than ``STALL_REST_SPEED`` for ``STALL_REST_TIME``
  seconds while none of its cars is on a section (lift, launch, brake, trim,
  booster — stations are brake sections); ``t`` is the instant it came to rest.
  ``rolled_back`` (information only) when the lead car's speed turns from
  above ``+STALL_REST_SPEED`` to below ``−STALL_REST_SPEED`` while no motor acts
  on the train; once per place: another only after the lead car has run forwards
  ``ROLLBACK_REARM`` past where it last turned back (a pendulum's swings, a train
  see-sawing in a valley: one event). ``diverged`` when the solver reports a non-finite state.
* ``status`` precedence: ``diverged`` > ``ran_off_track`` > ``derailed``
  (any ``wheel_lift`` or ``support_lost``) > ``stalled`` > ``completed``.
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np

from trackrider.divergence import entity_groups
from trackrider.events import event_type, status_of
from trackrider.filters import ZeroPhaseLowpass
from trackrider.physics import channels as ch

#: a train counts as having moved once any car exceeded this speed, m/s
STALL_MOVING_SPEED = 0.5
#: below this speed (every car) a train is at rest, m/s
STALL_REST_SPEED = 0.05
#: smallest rise of z into a crest, m (along a level top z varies by rounding only)
CREST_RISE = 1e-9
#: a train at rest this long outside any section has stalled, s
STALL_REST_TIME = 2.0
#: after a roll back, the lead car must run forwards this far past where it turned back before
#: another is logged, m
ROLLBACK_REARM = 0.5
#: a wheel_lift event re-arms when Q_inner > this fraction of F2/2
WHEEL_LIFT_REARM = 0.05
#: a support_lost flag set again within this time of its last set sample is the same episode, s
FLAG_REARM_TIME = 0.5
#: at most this many events are kept; the rest are only counted
MAX_EVENTS = 1000
#: a group whose kinetic energy never exceeded this (J) never moved: its energy drift is ``null``
#: (a train at rest has ~1e-20 J, and rounding in its potential energy would read as a vast drift)
KE_MOVED = 1e-3

#: extra CSV columns derived here, after the raw channels
FILTERED_G = ("g_vertical_filtered", "g_lateral_filtered", "g_longitudinal_filtered")
_G_CHANNELS = (ch.G_VERTICAL, ch.G_LATERAL, ch.G_LONGITUDINAL)
#: the front and rear rider rows' G columns (``rider_rows = 2``) and their filtered ones
ROW_G = tuple(ch.NAMES[i] for i in ch.ROW_G)
FILTERED_ROW_G = tuple(name + "_filtered" for name in ROW_G)
#: a train's ``rider_rows`` figures of each row: (key, axis: 0 vertical, 1 lateral, 2 longitudinal; +1 its
#: maximum, -1 its minimum, 0 the maximum of its magnitude)
_ROW_FIGURES = (("max_g_vertical", 0, 1), ("min_g_vertical", 0, -1), ("max_abs_g_lateral", 1, 0),
                ("max_abs_g_longitudinal", 2, 0))
#: the rows and their first column in the filtered G (9 columns: rider point, front row, rear row)
_ROW_PARTS = (("front", 3), ("rear", 6))


# ----------------------------------------------------------------------------------
# wheel loads
# ----------------------------------------------------------------------------------

def wheel_split(samples, gauge):
    """Inner and outer rail loads and L/V of every sample.

    ``Q_outer, Q_inner = F2/2 ± |M_T|/gauge`` with ``F2`` the support force (row 2,
    ``wheel_load``, N) and ``M_T`` the orientation rows' torque about the tangent
    (``roll_torque``, N·m): the inner rail is the less loaded one (the inside of
    a curve taken above its balance speed). ``L/V = |lateral_load| / wheel_load``
    (NaN where ``wheel_load ≤ 0``).

    samples : (..., N_CHANNELS) array.  gauge : m, scalar or broadcastable to
    ``samples[..., 0]``. Returns ``(q_inner, q_outer, l_over_v)``, in N, N and 1.
    """
    f2 = samples[..., ch.WHEEL_LOAD]
    mt = np.abs(samples[..., ch.ROLL_TORQUE]) / gauge
    q_inner = 0.5 * f2 - mt
    q_outer = 0.5 * f2 + mt
    with np.errstate(divide="ignore", invalid="ignore"):
        lv = np.where(f2 > 0.0, np.abs(samples[..., ch.LATERAL_LOAD]) / np.where(f2 > 0.0, f2, 1.0),
                      np.nan)
    return q_inner, q_outer, lv


# ----------------------------------------------------------------------------------
# ride metrics
# ----------------------------------------------------------------------------------

class _Extreme:
    """Running maximum of a value with the time and car where it happened."""

    __slots__ = ("value", "t", "car", "s", "sign")

    def __init__(self, sign=1.0):
        self.value = None
        self.t = None
        self.car = None
        self.s = None      # the car's track position there, m (None: unknown)
        self.sign = sign   # +1: maximum, −1: minimum

    def update(self, t, values, cars, s=None):
        """values (m, k) for cars (k,) at times t (m,), track positions s (m, k); NaN ignored."""
        if values.size == 0:
            return
        v = self.sign * values
        if np.all(np.isnan(v)):
            return
        idx = int(np.nanargmax(v))
        i, j = divmod(idx, v.shape[1])
        cand = float(values[i, j])
        if self.value is None or self.sign * cand > self.sign * self.value:
            self.value = cand
            self.t = float(t[i])
            self.car = int(cars[j])
            self.s = None if s is None or not math.isfinite(float(s[i, j])) else float(s[i, j])


def section_at(s, sections):
    """Label of the section that track position ``s`` (m) falls in, or None.

    sections : list of ``(label, s_from, s_to, period)``; ``period`` is the
    track's length for a closed track (``s`` is taken modulo it), else None.
    The first section (in scenario order) that holds ``s`` wins.
    """
    if s is None or not math.isfinite(s):
        return None
    for label, lo, hi, period in sections or ():
        x = s % period if period else s
        if lo <= x <= hi:
            return label
    return None


@dataclass
class Event:
    """One event of a run: time s, train (or body) name, car (1 = lead), kind (a type of
    ``trackrider.events.EVENTS``: any other is a programming error)."""

    t: float
    train: str
    car: int
    kind: str
    extra: dict | None = None   # the kind's own keys (section, other_train, closing_speed, lap_time ...)

    def __post_init__(self):
        event_type(self.kind)

    def as_dict(self):
        d = {"t": self.t, "train": self.train, "car": self.car, "kind": self.kind}
        if self.extra:
            d.update(self.extra)
        return d


class RideMetrics:
    """Streaming measurements of a run: filtered G, events, per-train figures.

    Feed it the chunks of ``World.run`` in order with ``push(t, samples)``; it
    returns blocks ``(t, samples, filtered_g)`` whose filtered G (shape
    ``(m, n_entities, 3)``: vertical, lateral, longitudinal, in g; 9 with ``rows``: then
    the front row's and the rear row's) is final, in
    order, lagging the input by at most ``lag_samples``. ``finish()`` returns
    the rest. Then ``summary()`` gives the figures of ``summary.json``.

    Parameters
    ----------
    entity_labels : list of (name, car_no)
        ``World.entity_labels``: cars (train order, lead car first) then bodies.
    entity_train : (n_entities,) int
        Train index of each entity, −1 for free bodies.
    train_names : list of str
        Names of the trains, by train index.
    record_dt : float
        Time between recorded samples, s.
    cutoff_hz : float
        Low-pass cut-off of the filtered G, Hz (default 5.0).
    gauge_per_entity : array or float
        Rail gauge of each entity's track, m (default 1.0).
    railway_per_entity : array of bool, optional
        True for the cars of ``wheels = "railway"`` trains (wheel_lift events).
    energy_groups : list of lists of int, optional
        For each train, the entities whose energy is summed for its drift
        (default: its own cars). See ``energy_groups_from_joints``.
    sections_per_train : list of lists, optional
        For each train, the sections of its track as ``(label, s_from m, s_to m,
        period)`` (see ``section_at``): the ``section`` of each ``at`` entry.
    rows : bool, default False
        Some car has front and rear rider rows: the filtered G of each entity is then 9
        columns (the rider point's, the front row's, the rear row's), and the summary has
        their figures.
    """

    def __init__(self, entity_labels, entity_train, train_names, record_dt,
                 cutoff_hz=5.0, gauge_per_entity=1.0, railway_per_entity=None,
                 energy_groups=None, sections_per_train=None, rows=False):
        self.labels = [(str(a), int(b)) for a, b in entity_labels]
        self.entity_train = np.asarray(entity_train, dtype=int)
        self.n_entities = len(self.labels)
        self.train_names = [str(n) for n in train_names]
        self.n_trains = len(self.train_names)
        self.record_dt = float(record_dt)
        self.cutoff_hz = float(cutoff_hz)
        self.gauge = np.broadcast_to(np.asarray(gauge_per_entity, dtype=float),
                                     (self.n_entities,)).copy()
        if railway_per_entity is None:
            railway_per_entity = np.zeros(self.n_entities, dtype=bool)
        self.railway = np.asarray(railway_per_entity, dtype=bool)
        self.train_cars = [np.flatnonzero(self.entity_train == k) for k in range(self.n_trains)]
        self.bodies = np.flatnonzero(self.entity_train < 0)
        self.car_no = np.array([b for _, b in self.labels], dtype=int)
        if energy_groups is None:
            energy_groups = [list(c) for c in self.train_cars]
        self.energy_groups = [np.asarray(sorted(set(g)), dtype=int) for g in energy_groups]
        self.sections = list(sections_per_train or [])

        self.rows = bool(rows)
        self.g_channels = _G_CHANNELS + (ch.ROW_G if self.rows else ())
        ng = len(self.g_channels)
        self.filter = ZeroPhaseLowpass(self.cutoff_hz, 1.0 / self.record_dt, ng * self.n_entities)
        self.lag_samples = (self.filter.margin + self.filter.block) if self.filter.applied else 0
        self._t_buf = np.empty(0)
        self._s_buf = np.empty((0, self.n_entities, ch.N_CHANNELS))
        self._last_finite = np.zeros(ng * self.n_entities)

        self.samples = 0
        self.t_last = None
        self.events: list[Event] = []
        self.events_dropped = 0
        self.diverged = None
        self.onset = None
        self.withheld = []   # (train, figure) of a diverged run: from samples after its onset
        self._init_trackers()

    # -- state --------------------------------------------------------------------
    def _init_trackers(self):
        nt, ne = self.n_trains, self.n_entities
        self.x_speed_max = [_Extreme(+1) for _ in range(nt)]
        self.x_speed_min = [_Extreme(-1) for _ in range(nt)]
        self.x_gv_max = [_Extreme(+1) for _ in range(nt)]
        self.x_gv_min = [_Extreme(-1) for _ in range(nt)]
        self.x_glat = [_Extreme(+1) for _ in range(nt)]
        self.x_glon = [_Extreme(+1) for _ in range(nt)]
        self.x_raw_gv_max = [_Extreme(+1) for _ in range(nt)]
        self.x_raw_gv_min = [_Extreme(-1) for _ in range(nt)]
        self.x_raw_glat = [_Extreme(+1) for _ in range(nt)]
        self.x_raw_glon = [_Extreme(+1) for _ in range(nt)]
        self.x_wheel_max = [_Extreme(+1) for _ in range(nt)]
        self.x_wheel_min = [_Extreme(-1) for _ in range(nt)]
        self.x_inner_min = [_Extreme(-1) for _ in range(nt)]
        self.x_lat_load = [_Extreme(+1) for _ in range(nt)]
        self.x_lv = [_Extreme(+1) for _ in range(nt)]
        self.x_motor_max = [_Extreme(+1) for _ in range(nt)]
        self.x_motor_min = [_Extreme(-1) for _ in range(nt)]
        self.x_crest = [_Extreme(-1) for _ in range(nt)]
        self.airtime_any = np.zeros(nt, dtype=np.int64)
        self.airtime_lead = np.zeros(nt, dtype=np.int64)
        # longest airtime stretch per train: (samples, t start, car, s start); per entity
        # the stretch under way: samples so far, t and s where it began
        self.air_longest = [(0, None, None, None)] * nt
        self.air_run = np.zeros(ne, dtype=np.int64)
        self.air_start_t = np.full(ne, np.nan)
        self.air_start_s = np.full(ne, np.nan)
        # edge detectors (per entity)
        self.prev_flags = np.zeros(ne, dtype=np.int64)
        self.flag_last_set = {ch.RAN_OFF: np.full(ne, -np.inf),
                              ch.SUPPORT_CLAMPED: np.full(ne, -np.inf)}
        self.lift_armed = np.ones(ne, dtype=bool)
        # crest detection: previous two z and |speed| per entity
        self.prev_z = np.full((2, ne), np.nan)
        self.prev_speed = np.full(ne, np.nan)
        self.prev_s = np.full(ne, np.nan)
        self.prev_section = np.full(ne, -1.0)
        # stall detection per train
        self.moved = np.zeros(nt, dtype=bool)
        self.rest_since = [None] * nt
        self.stalled_reported = np.zeros(nt, dtype=bool)
        self.lead_dir = np.zeros(nt, dtype=int)   # +1 forwards, −1 backwards, 0 unknown
        # distance the lead car has run forwards (signed, integrated), and where it last rolled back
        self.lead_progress = np.zeros(nt)
        self.lead_t = np.full(nt, np.nan)
        self.rolled_back_at = np.full(nt, np.nan)
        # energy per group
        ng = len(self.energy_groups)
        self.e_prev = np.full(ng, np.nan)
        self.e_quiet_prev = np.zeros(ng, dtype=bool)
        self.e_drift = np.zeros(ng)
        self.e_stretch_start = np.full(ng, np.nan)
        self.e_excursion = np.zeros(ng)
        self.e_quiet_samples = np.zeros(ng, dtype=np.int64)
        self.ke_max = np.zeros(ng)
        # bodies
        self.body_speed_max = np.full(len(self.bodies), np.nan)
        self.body_z_min = np.full(len(self.bodies), np.nan)
        self.body_z_max = np.full(len(self.bodies), np.nan)
        if self.rows:   # per train the rows' extremes (part, key, column, sign, tracker); per entity its G range
            self.x_rows = [[(part, key, c0 + axis, sign, _Extreme(-1 if sign < 0 else +1))
                            for part, c0 in _ROW_PARTS for key, axis, sign in _ROW_FIGURES] for _ in range(nt)]
            self.g_max = np.full((ne, len(self.g_channels)), np.nan)
            self.g_min = np.full((ne, len(self.g_channels)), np.nan)

    # -- events -------------------------------------------------------------------
    def _event(self, t, entity, kind):
        if len(self.events) >= MAX_EVENTS:
            self.events_dropped += 1
            return
        name, car = self.labels[entity]
        self.events.append(Event(float(t), name, int(car), kind))

    def _train_event(self, t, k, kind, entity=None):
        if entity is None:
            entity = int(self.train_cars[k][0])
        self._event(t, entity, kind)

    def add_events(self, events):
        """Events found outside the samples (the block logic's, ``physics/blocks.py``): dicts with
        ``t``, ``train``, ``car``, ``kind`` and the kind's own keys."""
        for e in events:
            if len(self.events) >= MAX_EVENTS:
                self.events_dropped += 1
                continue
            extra = {k: v for k, v in e.items() if k not in ("t", "train", "car", "kind")}
            self.events.append(Event(float(e["t"]), str(e["train"]), int(e["car"]), str(e["kind"]), extra or None))

    def mark_diverged(self, t, entity=None, onset=None):
        """Record that the solver diverged at ``t`` s (on ``entity``, if known). ``onset``: the last
        calm sample before it (``divergence.DivergenceCheck.onset``; None: no sample was calm): the
        figures of later samples are withheld (``withheld``)."""
        self.diverged = float(t)
        self.onset = None if onset is None else float(onset)
        if entity is None or not (0 <= int(entity) < self.n_entities):
            if len(self.events) < MAX_EVENTS:
                self.events.append(Event(float(t), "", 0, "diverged"))
        else:
            self._event(t, int(entity), "diverged")

    # -- raw-sample measurements (run as soon as a chunk arrives) -------------------
    def _measure_raw(self, t, smp):
        m = len(t)
        if m == 0:
            return
        flags = np.nan_to_num(smp[:, :, ch.FLAGS], nan=0.0).astype(np.int64)
        speed = smp[:, :, ch.SPEED]
        q_inner, _, lv = wheel_split(smp, self.gauge[None, :])

        # flag edges: ran_off_track, support_lost (per car); a flag that was set
        # again within FLAG_REARM_TIME of its last sample is the same episode
        prev = np.concatenate([self.prev_flags[None, :], flags[:-1]], axis=0)
        for bit, kind in ((ch.RAN_OFF, "ran_off_track"), (ch.SUPPORT_CLAMPED, "support_lost")):
            is_set = (flags & bit) != 0
            rising = is_set & ((prev & bit) == 0)
            last = self.flag_last_set[bit]
            for i, e in zip(*np.nonzero(rising)):
                before = np.flatnonzero(is_set[:i, e])
                t_last = t[before[-1]] if before.size else last[e]
                if not (t[i] - t_last <= FLAG_REARM_TIME + 1e-9):
                    self._event(t[i], e, kind)
            any_set = is_set.any(axis=0)
            if np.any(any_set):
                last_idx = m - 1 - np.argmax(is_set[::-1], axis=0)
                last[any_set] = t[last_idx[any_set]]
        self.prev_flags = flags[-1].copy()

        # wheel lift (railway cars): hysteresis on the inner load
        rail = np.flatnonzero(self.railway)
        if rail.size:
            half = 0.5 * smp[:, rail, ch.WHEEL_LOAD]
            qi = q_inner[:, rail]
            for j, e in enumerate(rail):
                armed = self.lift_armed[e]
                col = qi[:, j]
                if not np.any(col < 0.0) and armed:
                    continue
                for i in range(m):
                    if armed and col[i] < 0.0:
                        self._event(t[i], e, "wheel_lift")
                        armed = False
                    elif not armed and col[i] > WHEEL_LIFT_REARM * half[i, j]:
                        armed = True
                self.lift_armed[e] = armed

        # per-train figures from raw values
        for k, cars in enumerate(self.train_cars):
            if cars.size == 0:
                continue
            sp = speed[:, cars]
            cn = self.car_no[cars]
            sc = smp[:, cars, ch.S]
            self.x_speed_max[k].update(t, sp, cn, sc)
            self.x_speed_min[k].update(t, sp, cn, sc)
            on = ((flags[:, cars] & ch.ON_TRACK) != 0) & ((flags[:, cars] & ch.RAN_OFF) == 0)
            gv = np.where(on, smp[:, cars, ch.G_VERTICAL], np.nan)
            self.x_raw_gv_max[k].update(t, gv, cn, sc)
            self.x_raw_gv_min[k].update(t, gv, cn, sc)
            self.x_raw_glat[k].update(t, np.where(on, np.abs(smp[:, cars, ch.G_LATERAL]), np.nan), cn, sc)
            self.x_raw_glon[k].update(t, np.where(on, np.abs(smp[:, cars, ch.G_LONGITUDINAL]), np.nan),
                                      cn, sc)
            wl = smp[:, cars, ch.WHEEL_LOAD]
            self.x_wheel_max[k].update(t, wl, cn, sc)
            self.x_wheel_min[k].update(t, wl, cn, sc)
            self.x_inner_min[k].update(t, q_inner[:, cars], cn, sc)
            self.x_lat_load[k].update(t, np.abs(smp[:, cars, ch.LATERAL_LOAD]), cn, sc)
            self.x_lv[k].update(t, lv[:, cars], cn, sc)
            mf = smp[:, cars, ch.MOTOR_FORCE]
            self.x_motor_max[k].update(t, mf, cn, sc)
            self.x_motor_min[k].update(t, mf, cn, sc)
            # a railway train held by its air brake (cylinder pressure up) is stopped, not stalled: as on a section
            held = np.where(np.nan_to_num(smp[:, cars, ch.BRAKE_PRESSURE], nan=0.0) > 0.0, 0.0,
                            smp[:, cars, ch.SECTION])
            self._stall_and_rollback(k, t, sp, flags[:, cars], held)

        # crests: local maxima of z (strict rise, then no rise), speed at the crest
        z = smp[:, :, ch.Z]
        zz = np.concatenate([self.prev_z, z], axis=0)            # (m+2, ne)
        sp_all = np.concatenate([self.prev_speed[None, :], speed], axis=0)  # (m+1, ne)
        s_all = np.concatenate([self.prev_s[None, :], smp[:, :, ch.S]], axis=0)
        # (a rise below CREST_RISE is a level stretch: rounding must not make a crest there)
        crest = (zz[1:-1] > zz[:-2] + CREST_RISE) & (zz[1:-1] >= zz[2:])      # at rows −1 .. m−2
        on = (flags & ch.ON_TRACK) != 0
        on_prev = np.concatenate([np.ones((1, self.n_entities), bool), on[:-1]], axis=0)
        crest &= on_prev
        # a turning point (a train rolling back) or a train at rest is not a crest passed
        crest &= np.abs(sp_all[:-1]) > STALL_REST_SPEED
        # nor is a crest on a section (the top of a lift, a brake on a plateau): the section sets the
        # speed there, which says nothing of the margin by which the train clears its hills
        sec_all = np.concatenate([self.prev_section[None, :], smp[:, :, ch.SECTION]], axis=0)
        crest &= sec_all[:-1] < 0
        t_prev = np.concatenate([[t[0] - self.record_dt], t[:-1]])
        for k, cars in enumerate(self.train_cars):
            if cars.size == 0:
                continue
            c = crest[:, cars]
            if np.any(c):
                vals = np.where(c, np.abs(sp_all[:-1][:, cars]), np.nan)
                self.x_crest[k].update(t_prev, vals, self.car_no[cars], s_all[:-1][:, cars])
        self.prev_z = zz[-2:].copy()
        self.prev_speed = speed[-1].copy()
        self.prev_s = smp[-1, :, ch.S].copy()
        self.prev_section = smp[-1, :, ch.SECTION].copy()

        # energy drift per group
        energy = smp[:, :, ch.KINETIC_ENERGY] + smp[:, :, ch.POTENTIAL_ENERGY]
        busy = (flags & (ch.MOTOR_ACTIVE | ch.RESISTANCE_ACTIVE)) != 0
        for g, members in enumerate(self.energy_groups):
            if members.size == 0:
                continue
            e = energy[:, members].sum(axis=1)
            ke = smp[:, members, ch.KINETIC_ENERGY].sum(axis=1)
            if np.any(np.isfinite(ke)):
                self.ke_max[g] = max(self.ke_max[g], float(np.nanmax(ke)))
            quiet = ~busy[:, members].any(axis=1) & np.isfinite(e)
            e_all = np.concatenate([[self.e_prev[g]], e])
            q_all = np.concatenate([[self.e_quiet_prev[g]], quiet])
            both = q_all[1:] & q_all[:-1]
            de = np.where(both, np.diff(e_all), 0.0)
            self.e_drift[g] += float(de.sum())
            self.e_quiet_samples[g] += int(both.sum())
            # excursion within each quiet stretch: |E − E(stretch start)|
            start = self.e_stretch_start[g]
            for i in np.flatnonzero(quiet):
                if not q_all[i]:          # the stretch starts here
                    start = e[i]
                else:
                    if np.isnan(start):
                        start = e_all[i]
                    self.e_excursion[g] = max(self.e_excursion[g], abs(e[i] - start))
            if not quiet[-1]:
                start = np.nan
            self.e_stretch_start[g] = start
            self.e_prev[g] = e[-1]
            self.e_quiet_prev[g] = quiet[-1]

        # free bodies
        if self.bodies.size:
            b = smp[:, self.bodies, :]
            v = np.sqrt(b[:, :, ch.VX] ** 2 + b[:, :, ch.VY] ** 2 + b[:, :, ch.VZ] ** 2)
            self.body_speed_max = np.fmax(self.body_speed_max, np.nanmax(v, axis=0))
            self.body_z_min = np.fmin(self.body_z_min, np.nanmin(b[:, :, ch.Z], axis=0))
            self.body_z_max = np.fmax(self.body_z_max, np.nanmax(b[:, :, ch.Z], axis=0))

    def _stall_and_rollback(self, k, t, sp, flags, section):
        """Stall (valley) and roll-back detection of train ``k`` over one chunk."""
        absmax = np.max(np.abs(np.nan_to_num(sp, nan=0.0)), axis=1)     # (m,)
        in_section = np.any(np.nan_to_num(section, nan=-1.0) >= 0.0, axis=1)
        motor = np.any((flags & ch.MOTOR_ACTIVE) != 0, axis=1)
        off = np.any((flags & ch.RAN_OFF) != 0, axis=1)
        lead = np.nan_to_num(sp[:, 0], nan=0.0)
        rest = (absmax < STALL_REST_SPEED) & ~in_section & ~off
        moving_now = absmax > STALL_MOVING_SPEED
        for i in range(len(t)):
            if moving_now[i]:
                self.moved[k] = True
            if rest[i] and self.moved[k]:
                if self.rest_since[k] is None:
                    self.rest_since[k] = float(t[i])
                elif (not self.stalled_reported[k]
                      and t[i] - self.rest_since[k] >= STALL_REST_TIME - 1e-9):
                    self._train_event(self.rest_since[k], k, "stalled")
                    self.stalled_reported[k] = True
            else:
                self.rest_since[k] = None
                if not rest[i] and moving_now[i]:
                    self.stalled_reported[k] = False
            if np.isfinite(self.lead_t[k]):
                self.lead_progress[k] += lead[i] * (t[i] - self.lead_t[k])
            self.lead_t[k] = t[i]
            # roll back: the lead car turns from forwards to backwards, no motor; once per place: the
            # next only after it went forwards past where it turned back (a swing, a valley: one)
            if lead[i] > STALL_REST_SPEED:
                self.lead_dir[k] = 1
            elif lead[i] < -STALL_REST_SPEED:
                if self.lead_dir[k] == 1 and not motor[i] and not (
                        self.lead_progress[k] <= self.rolled_back_at[k] + ROLLBACK_REARM):
                    self._train_event(t[i], k, "rolled_back")
                    self.rolled_back_at[k] = self.lead_progress[k]
                self.lead_dir[k] = -1

    # -- filtered measurements (run when a block is final) --------------------------
    def _measure_filtered(self, t, smp, fg):
        if len(t) == 0:
            return
        # riders feel the ride only while the car is on its track
        flags = np.nan_to_num(smp[:, :, ch.FLAGS], nan=0.0).astype(np.int64)
        on = ((flags & ch.ON_TRACK) != 0) & ((flags & ch.RAN_OFF) == 0)
        fg = np.where(on[:, :, None], fg, np.nan)
        gv = fg[:, :, 0]
        for k, cars in enumerate(self.train_cars):
            if cars.size == 0:
                continue
            cn = self.car_no[cars]
            sc = smp[:, cars, ch.S]
            self.x_gv_max[k].update(t, gv[:, cars], cn, sc)
            self.x_gv_min[k].update(t, gv[:, cars], cn, sc)
            self.x_glat[k].update(t, np.abs(fg[:, cars, 1]), cn, sc)
            self.x_glon[k].update(t, np.abs(fg[:, cars, 2]), cn, sc)
            air = gv[:, cars] < 0.0   # NaN (off the track) is not airtime
            self.airtime_any[k] += int(np.any(air, axis=1).sum())
            self.airtime_lead[k] += int(air[:, 0].sum())
            self._airtime_stretches(k, cars, t, air, sc)
            if self.rows:
                for _, _, col, sign, x in self.x_rows[k]:
                    v = fg[:, cars, col]
                    x.update(t, v if sign else np.abs(v), cn, sc)
        if self.rows:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)   # an entity without rows: all NaN
                self.g_max = np.fmax(self.g_max, np.nanmax(fg, axis=0))
                self.g_min = np.fmin(self.g_min, np.nanmin(fg, axis=0))

    def _airtime_stretches(self, k, cars, t, air, s):
        """Track each car's airtime stretches across chunks; keep train k's longest."""
        for j, e in enumerate(cars):
            col = air[:, j]
            if not col.any() and self.air_run[e] == 0:
                continue
            for i in range(len(col)):
                if col[i]:
                    if self.air_run[e] == 0:
                        self.air_start_t[e] = t[i]
                        self.air_start_s[e] = s[i, j]
                    self.air_run[e] += 1
                    if self.air_run[e] > self.air_longest[k][0]:
                        s0 = float(self.air_start_s[e])
                        self.air_longest[k] = (int(self.air_run[e]), float(self.air_start_t[e]),
                                               int(self.car_no[e]), s0 if math.isfinite(s0) else None)
                else:
                    self.air_run[e] = 0

    def _emit(self, filtered):
        """Pair the filtered rows with the oldest buffered raw samples."""
        n = len(filtered)
        if n == 0:
            return []
        t = self._t_buf[:n]
        smp = self._s_buf[:n]
        self._t_buf = self._t_buf[n:]
        self._s_buf = self._s_buf[n:]
        fg = filtered.reshape(n, self.n_entities, len(self.g_channels))
        raw = smp[:, :, list(self.g_channels)]
        if not np.all(np.isfinite(raw)):
            fg = np.where(np.isfinite(raw), fg, np.nan)
        self._measure_filtered(t, smp, fg)
        return [(t, smp, fg)]

    # -- public -------------------------------------------------------------------
    def push(self, t, samples):
        """Consume one chunk: t (m,) s, samples (m, n_entities, N_CHANNELS).

        Returns a list of blocks ``(t, samples, filtered_g)`` now final.
        """
        t = np.asarray(t, dtype=float).reshape(-1)
        smp = np.asarray(samples, dtype=float).reshape(len(t), self.n_entities, ch.N_CHANNELS)
        if len(t) == 0:
            return []
        self.samples += len(t)
        self.t_last = float(t[-1])
        self._measure_raw(t, smp)
        self._t_buf = np.concatenate([self._t_buf, t])
        self._s_buf = np.concatenate([self._s_buf, smp])
        g = smp[:, :, list(self.g_channels)].reshape(len(t), len(self.g_channels) * self.n_entities)
        return self._emit(self.filter.push(self._hold_finite(g)))

    def _hold_finite(self, g):
        """Replace non-finite G by the column's last finite value (0 before any).

        A NaN would otherwise poison the recursive filter for the rest of the run;
        the filtered value at such a sample is reported as NaN again (``_emit``).
        """
        bad = ~np.isfinite(g)
        if np.any(bad):
            g = g.copy()
            for j in np.flatnonzero(bad.any(axis=0)):
                col = g[:, j]
                last = self._last_finite[j]
                for i in range(len(col)):
                    if np.isfinite(col[i]):
                        last = col[i]
                    else:
                        col[i] = last
        self._last_finite = g[-1].copy()
        return g

    def finish(self):
        """Flush: returns the remaining blocks (the end of the series is exact)."""
        out = self._emit(self.filter.finish())
        if len(self._t_buf):   # filter not applied and nothing pending cannot happen; be safe
            out += self._emit(self._s_buf[:, :, list(self.g_channels)].reshape(len(self._t_buf), -1))
        return out

    # -- results ------------------------------------------------------------------
    def status(self) -> str:
        """The first status of ``events.STATUSES`` (``diverged`` > ``ran_off_track`` > ``derailed`` >
        ``stalled`` > ``completed``) that an event sets (``events.EVENTS``)."""
        kinds = [e.kind for e in self.events] + (["diverged"] if self.diverged is not None else [])
        return status_of(kinds)

    def energy_group_of_train(self, k):
        """Index of the energy group of train ``k``."""
        return k

    def _drifting(self, x) -> bool:
        """Whether extreme ``x`` comes from a diverged run's samples after its onset (when the state
        was already drifting towards the divergence: not a result)."""
        return self.diverged is not None and x.value is not None and (self.onset is None or x.t > self.onset)

    def train_summary(self, k) -> dict:
        """Figures of train ``k`` (see the module docstring for definitions)."""
        def val(x):
            if self._drifting(x):
                self.withheld.append(self.train_names[k])
                return None
            return None if x.value is None or not math.isfinite(x.value) else x.value

        sections = self.sections[k] if k < len(self.sections) else []

        def where(x):
            if x.value is None or self._drifting(x):
                return None
            return {"t": x.t, "car": x.car, "s": x.s, "section": section_at(x.s, sections)}

        n_air, t_air, car_air, s_air = self.air_longest[k]
        airtime_at = None if n_air == 0 else {
            "t": t_air, "car": car_air, "s": s_air, "section": section_at(s_air, sections),
            "duration_s": float(n_air * self.record_dt)}

        g = self.energy_group_of_train(k)
        ke = self.ke_max[g]
        quiet = int(self.e_quiet_samples[g])
        if quiet > 0 and ke > KE_MOVED:
            drift = float(self.e_drift[g] / ke)
            drift_abs = float(self.e_excursion[g] / ke)
        else:
            drift = drift_abs = None
        members = self.energy_groups[g]
        group_trains = sorted({self.train_names[self.entity_train[e]] for e in members
                               if self.entity_train[e] >= 0})
        group_bodies = [self.labels[e][0] for e in members if self.entity_train[e] < 0]
        cars = self.train_cars[k]
        role = (getattr(self, "roles", None) or ["riders"] * self.n_trains)[k]
        if role == "counterweight":   # no riders: no G at a rider point, no airtime
            return self._counterweight_summary(k, val, where, drift, drift_abs, quiet, group_trains,
                                               group_bodies, ke)
        out = {
            "cars": int(cars.size),
            "role": "riders",
            "wheels": "railway" if cars.size and bool(self.railway[cars[0]]) else "coaster",
            "max_speed": val(self.x_speed_max[k]),
            "min_speed": val(self.x_speed_min[k]),
            "max_g_vertical": val(self.x_gv_max[k]),
            "min_g_vertical": val(self.x_gv_min[k]),
            "max_abs_g_lateral": val(self.x_glat[k]),
            "max_abs_g_longitudinal": val(self.x_glon[k]),
            "airtime_s": float(self.airtime_any[k] * self.record_dt),
            "energy_drift": drift,
            # extras
            "airtime_s_lead_car": float(self.airtime_lead[k] * self.record_dt),
            "energy_drift_max_abs": drift_abs,
            "energy_quiet_s": float(quiet * self.record_dt),
            "energy_group": {"trains": group_trains, "bodies": group_bodies},
            "max_kinetic_energy": float(ke),
            "raw_max_g_vertical": val(self.x_raw_gv_max[k]),
            "raw_min_g_vertical": val(self.x_raw_gv_min[k]),
            "raw_max_abs_g_lateral": val(self.x_raw_glat[k]),
            "raw_max_abs_g_longitudinal": val(self.x_raw_glon[k]),
            "min_crest_speed": val(self.x_crest[k]),
            "max_wheel_load": val(self.x_wheel_max[k]),
            "min_wheel_load": val(self.x_wheel_min[k]),
            "min_inner_wheel_load": val(self.x_inner_min[k]),
            "max_abs_lateral_load": val(self.x_lat_load[k]),
            "max_l_over_v": val(self.x_lv[k]),
            "max_motor_force": val(self.x_motor_max[k]),
            "min_motor_force": val(self.x_motor_min[k]),
            "at": {
                "max_speed": where(self.x_speed_max[k]),
                "min_speed": where(self.x_speed_min[k]),
                "max_g_vertical": where(self.x_gv_max[k]),
                "min_g_vertical": where(self.x_gv_min[k]),
                "max_abs_g_lateral": where(self.x_glat[k]),
                "max_abs_g_longitudinal": where(self.x_glon[k]),
                "min_crest_speed": where(self.x_crest[k]),
                "max_l_over_v": where(self.x_lv[k]),
                "max_wheel_load": where(self.x_wheel_max[k]),
                "min_inner_wheel_load": where(self.x_inner_min[k]),
                "airtime_s": airtime_at,
            },
        }
        rows = self._rider_rows(k, val, where) if self.rows else None
        if rows is not None:
            out["rider_rows"] = rows
        return out

    def _rider_rows(self, k, val, where):
        """Train ``k``'s ``rider_rows`` figures (None when none of its cars has rows): the front and
        rear rows' filtered extremes with where they happened, and per car (a row of the timeseries)
        the largest and smallest filtered vertical and lateral G of its rider point and its rows."""
        cars = self.train_cars[k]
        if not np.isfinite(self.g_max[cars, 3:]).any():
            return None
        out = {part: {key: val(x) for p, key, _, _, x in self.x_rows[k] if p == part} for part, _ in _ROW_PARTS}
        for part, _ in _ROW_PARTS:
            out[part]["at"] = {key: where(x) for p, key, _, _, x in self.x_rows[k] if p == part}
        drifting = self.diverged is not None   # extremes over the whole run, after an onset too
        per_car = []
        for e in cars:
            entry = {"car": int(self.car_no[e])}
            for part, c0 in (("rider", 0),) + _ROW_PARTS:
                hi, lo = self.g_max[e, c0:c0 + 2], self.g_min[e, c0:c0 + 2]
                entry[part] = {name: (None if drifting or not math.isfinite(v) else float(v)) for name, v in
                               (("max_g_vertical", hi[0]), ("min_g_vertical", lo[0]),
                                ("max_g_lateral", hi[1]), ("min_g_lateral", lo[1]))}
            per_car.append(entry)
        out["cars"] = per_car
        return out

    def _counterweight_summary(self, k, val, where, drift, drift_abs, quiet, group_trains, group_bodies, ke):
        """Figures of a ``role = "counterweight"`` train: motion, loads and energy, no rider figures."""
        cars = self.train_cars[k]
        return {
            "cars": int(cars.size),
            "role": "counterweight",
            "wheels": "railway" if cars.size and bool(self.railway[cars[0]]) else "coaster",
            "max_speed": val(self.x_speed_max[k]),
            "min_speed": val(self.x_speed_min[k]),
            "max_g_vertical": None,
            "min_g_vertical": None,
            "max_abs_g_lateral": None,
            "max_abs_g_longitudinal": None,
            "airtime_s": None,
            "energy_drift": drift,
            "energy_drift_max_abs": drift_abs,
            "energy_quiet_s": float(quiet * self.record_dt),
            "energy_group": {"trains": group_trains, "bodies": group_bodies},
            "max_kinetic_energy": float(ke),
            "max_wheel_load": val(self.x_wheel_max[k]),
            "min_wheel_load": val(self.x_wheel_min[k]),
            "max_abs_lateral_load": val(self.x_lat_load[k]),
            "max_motor_force": val(self.x_motor_max[k]),
            "min_motor_force": val(self.x_motor_min[k]),
            "at": {
                "max_speed": where(self.x_speed_max[k]),
                "min_speed": where(self.x_speed_min[k]),
            },
        }

    def summary(self) -> dict:
        """The measured part of ``summary.json``: status, events, trains, bodies, filter."""
        events = sorted(self.events, key=lambda e: (e.t, self._entity_order(e)))
        bodies = {}
        for j, e in enumerate(self.bodies):
            def f(x):
                x = float(x)
                return x if math.isfinite(x) else None
            bodies[self.labels[e][0]] = {"max_speed": f(self.body_speed_max[j]),
                                         "min_z": f(self.body_z_min[j]),
                                         "max_z": f(self.body_z_max[j])}
        return {
            "status": self.status(),
            "events": [e.as_dict() for e in events],
            "events_dropped": int(self.events_dropped),
            "trains": {name: self.train_summary(k) for k, name in enumerate(self.train_names)},
            "bodies": bodies,
            "filter": {"type": "butterworth", "order": 4, "zero_phase": True,
                       "cutoff_hz": self.cutoff_hz, "applied": bool(self.filter.applied)},
        }

    def _entity_order(self, e: Event):
        try:
            return self.labels.index((e.train, e.car))
        except ValueError:
            return -1


def energy_groups_from_joints(entity_train, n_trains, joint_ends, body_entity0=None):
    """Energy groups per train: the train plus everything joined to it.

    entity_train : (n_entities,) int (−1 for bodies; bodies follow the cars).
    joint_ends : iterable of (end_a, end_b) with ends ``("car", train, car0)``,
    ``("body", body_index)`` or ``"world"`` (as ``World.add_joint`` takes them).
    Returns a list (one per train) of entity index lists.
    """
    entity_train = np.asarray(entity_train, dtype=int)
    n_ent = len(entity_train)
    if body_entity0 is None:
        body_entity0 = int(np.sum(entity_train >= 0))
    cars_of = [np.flatnonzero(entity_train == k) for k in range(n_trains)]

    def entity(end):
        if isinstance(end, str) or end is None:
            return -1
        end = tuple(end)
        if end[0] == "car":
            cars = cars_of[int(end[1])]
            return int(cars[int(end[2])]) if int(end[2]) < len(cars) else -1
        if end[0] == "body":
            e = body_entity0 + int(end[1])
            return e if e < n_ent else -1
        return -1

    ends = [(int(cars[0]), int(e)) for cars in cars_of for e in cars[1:]]
    ends += [(entity(a), entity(b)) for a, b in joint_ends]
    group_of = {}
    for g in entity_groups(n_ent, ends):
        for e in g:
            group_of[int(e)] = [int(x) for x in g]
    return [group_of[int(cars[0])] if cars.size else [] for cars in cars_of]


#: warn when a train's energy_drift_max_abs exceeds this (the time step is too long)
DRIFT_WARNING = 0.01


def run_warnings(summary: dict, dt: float, damped=()) -> list:
    """The run's own warnings (one line each) from its summary: energy drift above ``DRIFT_WARNING``.

    ``damped``: names of trains with a damper (swing, coupling or joint damping): their energy
    group loses energy by design, so its drift says nothing of the time step.
    """
    out = []
    # a car that left its track stops counting; a rope snatching taut then is a real loss
    off = {e.get("train") for e in summary.get("events") or [] if e.get("kind") in ("ran_off_track", "diverged")}
    for name, tr in (summary.get("trains") or {}).items():
        group = set((tr.get("energy_group") or {}).get("trains", [name]))
        if group & (set(damped) | off):
            continue
        drift = tr.get("energy_drift_max_abs")
        if drift is not None and math.isfinite(drift) and drift > DRIFT_WARNING:
            out.append(f"train {name!r}: its energy drifted by {100 * drift:.3g} % of its largest kinetic energy "
                       f"where nothing drives or brakes it (more than {100 * DRIFT_WARNING:g} %): dt = {dt:g} s is "
                       "too long for this ride; see docs/outputs.md, 'Choosing dt'")
    return out
