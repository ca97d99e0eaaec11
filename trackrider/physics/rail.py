"""A world's railway in Python: the ``Rail`` record the kernels take (``railway.py``), built from its
trains' vehicles, brakes, drivers and couplers, and what a run reports of it — the driver's commands
and wheel slips as events, the couplers' extremes, the stops and the energies (``summary``;
docs/outputs.md, docs/physics.md §10). ``World.railway`` is a ``Railway``, or None in a world
without railway vehicles or draft gears.
"""
from __future__ import annotations

import math

import numpy as np

from trackrider.physics import bogies
from trackrider.physics import railway as rk
from trackrider.physics import state as st
from trackrider.physics.joints import CODES
from trackrider.physics.joints import common as jc
from trackrider.physics.joints import draft_gear as dg

J_DRAFT_GEAR = CODES["draft_gear"]


def idle_rail():
    """The ``Rail`` record of a world without railway trains: no cars (``run_chunk`` runs none of
    ``railway.py`` then; a record rather than None keeps one compiled kernel for every world)."""
    sizes = dict(n=0, nt=0, nd=0, nj=0, ng=0, nk=0, nlog=0)
    return st.allocate(st.Rail, sizes)


def is_railway(train: dict) -> bool:
    """A train of ``World``'s that needs the ``Rail`` record: railway vehicles or draft gears."""
    return train.get("vehicles") is not None or train.get("ctype") == "draft_gear"


def _curve(value, scale=1.0) -> list:
    """A setting of kind curve (a number or (v, y) pairs) as points, its values times ``scale``."""
    if value is None:
        return []
    if isinstance(value, (int, float)):
        return [(0.0, float(value) * scale)]
    return [(float(v), float(y) * scale) for v, y in value]


def train_positions(train: dict) -> np.ndarray:
    """Each car's distance behind the lead car's centre along the train, m (lengths and gaps); on bogies
    each wheel frame's behind the lead frame's pivot (the pivots ``bogie_spacing`` apart, a car's rear
    pivot ``(length − spacing)/2`` + gap + the next car's ``(length − spacing)/2`` from the next front one)."""
    lengths = train["lengths"]
    x = [0.0]
    for c, (a, b) in enumerate(zip(lengths, lengths[1:])):
        bar = bogies.link_row(train, c)
        x.append(x[-1] + (bar[2] if bar is not None else 0.5 * (a + b) + train["gap"]))
    return np.array(x)


def _units(train: dict) -> list:
    """Per car of the kernels (a wheel frame on bogies): ``(vehicle index, its first car, share, weight)``
    — the vehicle whose running gear it is, that vehicle's first car (index in the train), the car's
    part of the vehicle's traction and brake and the mass its wheels carry at rest."""
    if "bogie" not in train:
        return [(c, c, 1.0, None) for c in range(train["n"])]
    out = []
    for k, w in enumerate(train["bogie"]["weights"]):
        c, _bogie = bogies.vehicle_of(train, k)
        out.append((c, bogies.frames_of(train["bogie"], c)[0], 0.5, w))
    return out


class Railway:
    """The ``Rail`` record of a world (``record``), how to read it back (``events``, ``summary``)."""

    def __init__(self, world):
        trains, car0 = world.trains, world._car0
        n, nt = world.ncars, len(trains)
        nj = world.ji.shape[0]
        steps = [(k, d) for k, t in enumerate(trains) for d in (t.get("driver") or [])]
        knots: list = []
        sizes = dict(n=max(n, 1), nt=max(nt, 1), nd=max(len(steps), 1), nj=max(nj, 1),
                     ng=int(np.sum(world.ji[:, jc.JI_KIND] == J_DRAFT_GEAR)) if nj else 0, nlog=rk.SLIP_LOG)
        sizes["nk"] = 1
        r = {f.name: np.zeros(tuple(sizes.get(d, d) if isinstance(d, str) else d for d in f.shape), f.dtype)
             for f in st.Rail.FIELDS}
        r["coupler"][:] = -1
        r["grip_mass"][:n] = world.mass[:n]
        r["unit"][:n] = np.arange(n)
        r["cmd"][:] = -1
        r["pending"][:] = -1
        r["notches"][:] = 1.0
        r["slip_factor"][:] = 1.0
        for k, t in enumerate(trains):
            b0 = car0[k]
            r["train"][b0:b0 + t["n"]] = k
            r["lead"][k] = b0
            if not is_railway(t):
                continue
            brake = t.get("brake")
            if brake is not None:
                r["braked"][b0:b0 + t["n"]] = 1
                r["p0"][k], r["full_service"][k], r["cyl_max"][k] = (brake.pipe_pressure, brake.full_service,
                                                                     brake.cylinder_pressure)
                r["c_service"][k], r["c_emergency"][k] = brake.propagation_speed, brake.emergency_speed
                r["fill_rate"][k] = brake.cylinder_pressure / brake.fill_time
                r["release_rate"][k] = brake.cylinder_pressure / brake.release_time
                r["pipe"][b0:b0 + t["n"]] = brake.pipe_pressure
            specs = t.get("vehicles") or []
            x = train_positions(t)
            units = _units(t)
            locos = [b for b, u in enumerate(units) if specs and specs[u[0]].kind == "locomotive"]
            for i, (c, first, share, weight) in enumerate(units):
                b = b0 + i
                if weight is not None:
                    r["grip_mass"][b] = weight
                r["unit"][b] = b0 + first
                if not specs:
                    continue
                v = specs[c]
                r["dist"][b] = min(abs(x[i] - x[k]) for k in locos) if locos else x[i]
                r["rigging"][b] = v.brake_rigging * share
                for which, value, scale in ((rk.CURVE_ADHESION, v.adhesion, 1.0), (rk.CURVE_SHOE, v.shoe_friction, 1.0),
                                            (rk.CURVE_TE, v.tractive_effort, share),
                                            (rk.CURVE_DB, v.dynamic_brake, share)):
                    pts = _curve(value, scale)
                    r["curve"][b, which] = (len(knots), len(pts))
                    knots += pts
                if v.kind == "locomotive":
                    r["loco"][b] = 1
                    r["notches"][b] = v.notches
                    r["power"][b] = (v.power or 0.0) * share
                    r["te_max"][b] = (v.max_tractive_effort or 0.0) * share
                    r["adh_mass"][b] = (v.adhesive_mass if v.adhesive_mass is not None else v.mass) * (
                        1.0 if weight is None else weight / v.mass)
                    r["slip_factor"][b] = v.slip_factor
        for i, (k, d) in enumerate(steps):
            r["d_train"][i] = k
            r["d_time"][i] = np.nan if d.time is None else d.time
            r["d_pos"][i] = np.nan if d.position is None else d.position
            r["d_notch"][i] = -1.0 if d.notch is None else d.notch
            r["d_dyn"][i] = -1.0 if d.dynamic_brake is None else d.dynamic_brake
            r["d_brake"][i] = (rk.BRAKE_NONE if d.brake is None else rk.BRAKE_RELEASE if d.brake == "release"
                               else rk.BRAKE_EMERGENCY if d.brake == "emergency" else rk.BRAKE_SERVICE)
            r["d_reduction"][i] = d.brake if isinstance(d.brake, float) else 0.0
            r["d_loco"][i] = -1 if d.locomotive is None else car0[k] + _first_car(trains[k], d.locomotive - 1)
        r["d_fired"][:] = np.nan
        for j, a in world._couplers:     # the car ahead's (on bogies: its rear frame's; none for a bar)
            r["coupler"][a] = j
        r["gears"] = np.nonzero(world.ji[:, jc.JI_KIND] == J_DRAFT_GEAR)[0].astype(np.int64) if nj else \
            np.zeros(0, np.int64)
        r["knots"] = np.array(knots, dtype=np.float64).reshape(-1, 2) if knots else np.zeros((1, 2))
        self.record = st.allocate(st.Rail, sizes, **r)
        self.world = world
        self.steps = steps

    # ------------------------------------------------------------------ reading it back
    def events(self) -> list[dict]:
        """The driver's steps taken (``driver``: with ``command``, the lead car's ``s`` and ``speed``, and
        the step's keys) and the wheel slips (``wheel_slip``), as ``summary.json`` events."""
        w, r = self.world, self.record
        names = [t["name"] for t in w.trains]
        out = []

        def _event(t, train, car, kind, **extra):
            out.append(dict(t=float(t), train=names[train], car=int(car), kind=kind, **extra))

        for i, (k, d) in enumerate(self.steps):
            fired = r.d_fired[i]
            if math.isnan(fired[rk.FIRED_T]):
                continue
            keys = {key: getattr(d, key) for key in ("notch", "dynamic_brake", "brake", "locomotive")
                    if getattr(d, key) is not None}
            _event(fired[rk.FIRED_T], k, 1, "driver", command=d.command(), s=float(fired[rk.FIRED_S]),
                   speed=float(fired[rk.FIRED_V]), **keys)
        for t, b in r.slips[:min(int(r.nslip[0]), r.slips.shape[0])]:
            k = int(r.train[int(b)])
            _event(t, k, int(b) - w._car0[k] + 1, "wheel_slip")
        return out

    def summary(self) -> dict:
        """``summary.json``'s ``railway``: per railway train its vehicles, each coupler's largest draft
        and buff forces and where, the largest of each, the stops after brake applications, the work
        of traction, brakes and draft gears (docs/outputs.md)."""
        w, r = self.world, self.record
        car_of = dict(w._couplers)      # a coupler's car ahead (its ends may be car bodies)
        out = {}
        for k, t in enumerate(w.trains):
            if not is_railway(t):
                continue
            b0, n = w._car0[k], t["n"]
            couplers = []
            for b in range(b0, b0 + n - 1):
                j = int(r.coupler[b])
                if j < 0:           # the bar between a car's bogies
                    continue
                c = len(couplers)
                pk = r.peak[j]
                couplers.append({"coupler": c + 1, "cars": [c + 1, c + 2],
                                 "max_draft": float(pk[0]), "max_draft_at": _at(pk[0], pk[1], pk[2]),
                                 "max_buff": float(pk[3]), "max_buff_at": _at(pk[3], pk[4], pk[5])})
            entry = {"vehicles": _vehicles(t), "couplers": couplers,
                     "max_draft": _largest(couplers, "max_draft"), "max_buff": _largest(couplers, "max_buff")}
            stops = []
            for i, (kk, d) in enumerate(self.steps):
                f = r.d_fired[i]
                if kk != k or math.isnan(f[rk.FIRED_T]) or d.brake in (None, "release") or math.isnan(f[rk.STOP_T]):
                    continue
                stops.append({"brake": d.command(), "t_brake": float(f[rk.FIRED_T]), "s_brake": float(f[rk.FIRED_S]),
                              "speed": float(f[rk.FIRED_V]), "t_stop": float(f[rk.STOP_T]),
                              "s_stop": float(f[rk.STOP_S]), "distance": float(f[rk.STOP_S] - f[rk.FIRED_S])})
            entry["stops"] = stops
            entry["stopping_distance"] = stops[0]["distance"] if stops else None
            cars = slice(b0, b0 + n)
            gears = [j for j in r.gears if b0 <= car_of[j] < b0 + n]
            entry["energy"] = {"traction": float(np.sum(r.energy[cars, rk.ENERGY_TRACTION])),
                               "dynamic_brake": float(np.sum(r.energy[cars, rk.ENERGY_DYNAMIC])),
                               "air_brakes": float(np.sum(r.energy[cars, rk.ENERGY_AIR])),
                               "draft_gear": float(sum(self.gear_dissipated(j) for j in gears))}
            entry["wheel_slips"] = int(np.sum([1 for _, b in r.slips[:min(int(r.nslip[0]), r.slips.shape[0])]
                                               if b0 <= int(b) < b0 + n]))
            out[t["name"]] = entry
        return out

    def gear_dissipated(self, j: int) -> float:
        """J draft gear ``j`` has dissipated: the work done on it less what its unloading curve would
        give back from its deflection now (``U`` integrated)."""
        jf = self.world.jf
        stored = 0.0
        if jf[j, dg.MODE] != dg.OPEN:
            y = max(jf[j, dg.SIDE] * jf[j, dg.X0] - jf[j, dg.HALF], 0.0)
            stored = 0.5 * jf[j, dg.K_UNLOAD] * y * y
        return float(self.record.e_gear[j] - stored)


def _first_car(train: dict, vehicle: int) -> int:
    """The first car of the kernels (a wheel frame on bogies) of the train's 0-based ``vehicle``."""
    return bogies.frames_of(train["bogie"], vehicle)[0] if "bogie" in train else vehicle


def _at(force, t, s):
    return None if not force > 0.0 else {"t": float(t), "s": float(s)}


def _largest(couplers, key):
    if not couplers:
        return None
    c = max(couplers, key=lambda c: c[key])
    if not c[key] > 0.0:
        return None
    return {"force": c[key], "coupler": c["coupler"], **c[f"{key}_at"]}


def _vehicles(t) -> list:
    """The train's vehicles as listed: ``[{"kind", "count", "first_car", "mass"}]``."""
    blocks = t.get("blocks")
    if blocks is None:
        return [{"kind": "wagon", "count": int(t["n"]), "first_car": 1, "mass": float(t["mass"])}]
    out, first = [], 1
    for v in blocks:
        out.append({"kind": v.kind, "count": int(v.count), "first_car": first, "mass": float(v.mass)})
        first += v.count
    return out
