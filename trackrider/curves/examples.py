"""The bundled example curves in ``curves/``, and how they were made.

``python -m trackrider.curves.examples [DIR]`` rewrites them (default ``curves/``).
Every file is plain data; this module only documents their geometry:

* ``first_drop.csv``      station, chain lift to ~33 m, crest, 55° first drop, pull-out, run-out (open)
* ``classic_coaster.csv`` first_drop, then a 90 m clothoid (teardrop) vertical loop and a 45 m brake run (open)
* ``vertical_loop.csv``   straight, teardrop vertical loop exiting 3 m to the left, straight (open)
* ``helix_nl2.csv``       NoLimits 2 export of a descending, banked two-turn helix (Y up)
* ``banked_helix.json``   the same helix as JSON points with a per-point roll
* ``railway_curve.csv``   level railway curve, R 600 m, clothoid transitions, 150 mm cant on
                          standard gauge as a roll column (open)
* ``hilly_circuit.csv``   a closed oval with a hill on each straight and banked turns
"""
from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import numpy as np

from .segments import arc, build_segment_curve, clothoid, start, straight


def smooth_pitch(delta_deg: float, length: float) -> list[dict]:
    """Two pitch clothoids turning the nose up by ``delta_deg`` over ``length`` m, curvature 0 at both ends."""
    R = length / (2 * math.radians(delta_deg))
    return [clothoid(length / 2, end_radius=R, axis="pitch"), clothoid(length / 2, start_radius=R, axis="pitch")]


def smooth_yaw(angle_deg: float, radius: float, transition: float) -> list[dict]:
    """A yaw turn: clothoid into ``radius``, arc, clothoid out; total turn ``angle_deg`` (positive = left)."""
    R = math.copysign(radius, angle_deg)
    trans_deg = math.degrees(transition / (2 * radius))
    body = abs(angle_deg) - 2 * trans_deg
    segs = [clothoid(transition, end_radius=R)]
    if body > 1e-9:
        segs.append(arc(radius, math.copysign(body, angle_deg)))
    segs.append(clothoid(transition, start_radius=R))
    return segs


def sample(segments, spacing: float = 1.0):
    """Points every ~``spacing`` m along segments, and the curve's end state."""
    c = build_segment_curve(segments)
    n = max(6, int(round(c.length / spacing)) + 1)
    P, T, _, _ = c.eval(np.linspace(0.0, c.length, n))
    return P, T[-1]


def teardrop_loop(P0, heading_deg: float, length: float, offset: float, spacing: float = 0.5):
    """A clothoid vertical loop: curvature rises linearly from 0 to its peak at the top and back.

    The loop is drawn in the vertical plane of ``heading_deg`` and sheared
    sideways by ``offset`` m (to the left) with a smootherstep, so it enters and
    exits level with the same heading, displaced sideways.
    """
    n = 20001
    sig = np.linspace(0.0, length, n)
    k_top = 4 * math.pi / length
    u = sig / length
    kappa = k_top * (1 - np.abs(2 * u - 1))
    theta = np.concatenate([[0.0], np.cumsum(0.5 * (kappa[1:] + kappa[:-1]) * np.diff(sig))])
    c, s = np.cos(theta), np.sin(theta)
    x = np.concatenate([[0.0], np.cumsum(0.5 * (c[1:] + c[:-1]) * np.diff(sig))])
    z = np.concatenate([[0.0], np.cumsum(0.5 * (s[1:] + s[:-1]) * np.diff(sig))])
    lat = offset * (6 * u**5 - 15 * u**4 + 10 * u**3)
    h = math.radians(heading_deg)
    fwd = np.array([math.cos(h), math.sin(h), 0.0])
    left = np.array([-math.sin(h), math.cos(h), 0.0])
    pts = P0 + x[:, None] * fwd + lat[:, None] * left + z[:, None] * np.array([0.0, 0.0, 1.0])
    m = max(6, int(round(length / spacing)))
    idx = np.round(np.linspace(0, n - 1, m + 1)).astype(int)
    return pts[idx]


def _first_drop_segments():
    return ([start((0.0, 0.0, 1.0)), straight(25.0)] + smooth_pitch(25.0, 20.0) + [straight(58.0)]
            + smooth_pitch(-80.0, 30.0) + [straight(2.5)] + smooth_pitch(55.0, 46.0) + [straight(15.0)])


def _join(*parts):
    out = [parts[0]]
    for p in parts[1:]:
        out.append(p[1:] if np.linalg.norm(p[0] - out[-1][-1]) < 1e-9 else p)
    return np.vstack(out)


def _write_points_csv(path: Path, P, roll=None, comment: str = ""):
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        for line in comment.strip().splitlines():
            fh.write(f"# {line}\n")
        fh.write("x,y,z,roll\n" if roll is not None else "x,y,z\n")
        for i, p in enumerate(P):
            row = f"{p[0]:.6f},{p[1]:.6f},{p[2]:.6f}"
            if roll is not None:
                row += f",{roll[i]:.4f}"
            fh.write(row + "\n")


def _helix_points():
    segs = ([start((0.0, 0.0, 20.0)), straight(10.0)] + smooth_pitch(-5.0, 10.0)
            + smooth_yaw(720.0, 15.0, 12.0) + smooth_pitch(5.0, 10.0) + [straight(10.0)])
    c = build_segment_curve(segs)
    n = int(round(c.length / 0.5)) + 1
    s = np.linspace(0.0, c.length, n)
    P = c.eval(s)[0]
    # bank into the (left-hand) turn: -35° in the body of the helix, eased over the transitions
    s_in, s_out = 20.0, c.length - 20.0
    ramp = 14.0
    w = np.clip(np.minimum(s - s_in, s_out - s) / ramp, 0.0, 1.0)
    bank = -35.0 * (3 * w**2 - 2 * w**3)
    return P, s, bank


def write_examples(folder="curves") -> list[Path]:
    """Write every example curve into ``folder``; returns the paths."""
    from .io import save_nl2
    from .track import Track

    d = Path(folder)
    d.mkdir(parents=True, exist_ok=True)
    written = []

    # first drop / classic coaster
    fd, t_end = sample(_first_drop_segments(), 1.0)
    p = d / "first_drop.csv"
    _write_points_csv(p, fd, comment="trackrider example: station, chain lift to ~33 m, 55 deg first drop, "
                                     "pull-out, run-out. x, y, z in m, z up.")
    written.append(p)
    end = fd[-1]
    loop_pts = teardrop_loop(end, 0.0, 90.0, 3.0, spacing=1.0)
    after = loop_pts[-1]
    brake, _ = sample([start(tuple(after)), straight(25.0), straight(45.0)], 1.0)
    cc = _join(fd, loop_pts, brake)
    p = d / "classic_coaster.csv"
    _write_points_csv(p, cc, comment="trackrider example: station (0-25 m), chain lift, first drop, clothoid "
                                     "vertical loop, brake run (last 45 m). x, y, z in m, z up.")
    written.append(p)

    # vertical loop alone
    a, _ = sample([start((0.0, 0.0, 0.0)), straight(30.0)], 1.0)
    lp = teardrop_loop(a[-1], 0.0, 80.0, 3.0, spacing=1.0)
    b, _ = sample([start(tuple(lp[-1])), straight(30.0)], 1.0)
    p = d / "vertical_loop.csv"
    _write_points_csv(p, _join(a, lp, b), comment="trackrider example: level straight, clothoid vertical loop "
                                                  "(80 m, exits 3 m to the left), straight. x, y, z in m.")
    written.append(p)

    # banked helix, as NL2 and JSON
    P, s, bank = _helix_points()
    tr = Track.from_points(P, frame="up", roll=np.column_stack([s, bank])[::4])
    p = d / "helix_nl2.csv"
    save_nl2(tr, p, spacing=1.0)
    written.append(p)
    p = d / "banked_helix.json"
    Pj = P[::2]
    with open(p, "w", encoding="utf-8") as fh:
        json.dump({"name": "banked helix", "description": "descending two-turn left helix, radius 15 m, "
                   "banked 35 deg into the turn; x, y, z in m, roll in degrees (positive: right rail lower)",
                   "closed": False, "points": [[round(float(v), 6) for v in q] for q in Pj],
                   "roll": [round(float(v), 4) for v in bank[::2]]}, fh, indent=None)
        fh.write("\n")
    written.append(p)

    # railway curve with cant
    segs = [start((0.0, 0.0, 0.0)), straight(150.0)] + smooth_yaw(30.0, 600.0, 80.0) + [straight(150.0)]
    c = build_segment_curve(segs)
    n = int(round(c.length / 2.0)) + 1
    s = np.linspace(0.0, c.length, n)
    P = c.eval(s)[0]
    cant = -math.degrees(math.asin(0.150 / 1.500))  # 150 mm over 1.5 m between rail centres; left curve
    ramp = np.clip(np.minimum(s - 150.0, c.length - 150.0 - s) / 80.0, 0.0, 1.0)
    p = d / "railway_curve.csv"
    _write_points_csv(p, P, roll=cant * ramp, comment="trackrider example: level railway curve to the left, "
                      "R = 600 m, 80 m clothoid transitions, cant 150 mm (roll column, degrees, linear "
                      "along the transitions). x, y, z in m.")
    written.append(p)

    # closed hilly circuit: oval (two 180° turns with transitions) with a hill on each straight
    Ls = 90.0
    segs = ([start((0.0, 0.0, 2.0)), straight(Ls)] + smooth_yaw(180.0, 25.0, 20.0) + [straight(Ls)]
            + smooth_yaw(180.0, 25.0, 20.0))
    c = build_segment_curve(segs, closed=True)
    n = int(round(c.length / 1.0))
    s = np.linspace(0.0, c.length, n, endpoint=False)
    P = c.eval(s)[0]
    turn_len = (c.length - 2 * Ls) / 2
    z = np.zeros(n)
    roll = np.zeros(n)
    for s_a in (0.0, Ls + turn_len):
        m = (s >= s_a) & (s <= s_a + Ls)
        x = (s[m] - s_a) / Ls
        z[m] = 9.0 * (1 - np.cos(2 * np.pi * x)) / 2
        tm = (s > s_a + Ls) & (s < s_a + Ls + turn_len)
        xt = (s[tm] - s_a - Ls) / turn_len
        roll[tm] = -25.0 * np.sin(np.pi * xt) ** 2
    P[:, 2] += z
    P = np.vstack([P, P[:1]])
    roll = np.append(roll, roll[0])
    p = d / "hilly_circuit.csv"
    _write_points_csv(p, P, roll=roll, comment="trackrider example: closed circuit (last point repeats the "
                      "first), hills 9 m high on both straights, turns R = 25 m banked up to 25 deg.")
    written.append(p)
    return written


if __name__ == "__main__":  # pragma: no cover
    for path in write_examples(sys.argv[1] if len(sys.argv) > 1 else "curves"):
        print(path)
