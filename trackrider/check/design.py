"""Design checks of a track without an envelope: G steps, jerk, loops and helices without transitions.

What a rider feels on a track is, at speed ``v`` and at the rail, the specific
force ``f = v² P'' + g ẑ`` in the rider's axes (``P''`` the curvature vector,
up ``B``, left ``N``). Along a smooth track it changes at the **jerk**
``v · |dG/ds|`` (g/s). Where two pieces join with different curvature it
**steps** by ``v² |ΔP''| / g`` at once — an infinite jerk — and where the
frame's twist about the tangent changes the roll rate steps by ``v · Δρ``.
Every check is made at the **design speed**:

* a force-vector design: its own speed (``track.design``);
* otherwise that of a frictionless car with the most energy the scenario
  gives a train — a train's start speed at its start, or a lift's, launch's or
  booster's speed at the section's end — and, where none is given (a curve
  file on its own), just enough to crest the track's highest point; on a
  section with a speed (a lift, a station, a trim) no faster than that speed.
  Friction only slows a car, so this errs on the harsh side.

Findings (each one ``warning:`` line naming the track, the joint or stretch,
the figure and the threshold):

* ``g_step`` — at a joint the G steps by more than ``g_step`` (default
  :data:`G_STEP`), or the roll rate by more than ``roll_rate_step``;
* ``transition`` — a ``loop`` or ``helix`` entered or left with its curvature
  jumping by more than :data:`TRANSITION_JUMP` of its own (no clothoid between);
* ``jerk`` — a stretch where the jerk exceeds ``jerk`` (default :data:`JERK`),
  once per stretch with its largest value.

The thresholds are trackrider's own rule-of-thumb defaults, not any standard's
numbers; set them in the scenario's ``[check]`` table.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

#: default threshold of a G step at a joint, g
G_STEP = 0.5
#: default threshold of a roll-rate step at a joint, degrees per second
ROLL_RATE_STEP = 30.0
#: default threshold of the jerk along the track, g/s
JERK = 15.0
#: a loop or helix whose curvature jumps at its ends by more than this fraction of its own has no transition
TRANSITION_JUMP = 0.1
#: one-sided limits at a joint are taken this far from it, m
JOINT_EPS = 1e-6
#: spacing of the samples the jerk is measured on, m (longer tracks: at most JERK_SAMPLES of them)
JERK_DS = 0.25
JERK_SAMPLES = 400_000
#: frames evaluated at once
FRAME_BLOCK = 50_000
GRAVITY = 9.81


@dataclass
class Finding:
    """One design finding: ``kind`` (g_step | transition | jerk), where (``s`` m, ``where`` words), the
    figures, and the line the user reads (``message``)."""

    kind: str
    s: float
    where: str
    message: str
    values: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        return {"kind": self.kind, "s": self.s, "where": self.where, **self.values, "message": self.message}


@dataclass
class Thresholds:
    """The design checks' thresholds (the scenario's ``[check]`` keys)."""

    g_step: float = G_STEP
    roll_rate_step: float = ROLL_RATE_STEP
    jerk: float = JERK


# --------------------------------------------------------------------------- the design speed


def energy_speed(track, energy_per_kg: float | None, gravity: float = GRAVITY, sections=()):
    """The design speed ``v(s, z=None)`` (a function of arrays of s and the track's z there, m/s)
    described in the module docstring.

    ``energy_per_kg``: ``½ v² + g z`` of the most energetic train (J/kg); None: enough to crest the
    track's highest point. ``sections``: ``(s_from, s_to, speed)`` capping the speed on them.
    """
    design = getattr(track, "design", None)
    if design is not None:
        rail_s = np.asarray(track.point_s)[: len(track.design_index)]
        design_v = np.asarray(design.speed)[np.asarray(track.design_index)]

        def v_design(s, z=None):
            return np.interp(np.asarray(s, float), rail_s, design_v)
        return v_design
    if energy_per_kg is None:
        z = track.frames(np.linspace(0.0, track.length, max(2, int(track.length / 0.5) + 1))).position[:, 2]
        energy_per_kg = gravity * float(np.max(z))
    caps = [(float(a), float(b), abs(float(v))) for a, b, v in sections]

    def v_energy(s, z=None):
        s = np.asarray(s, float)
        z = track.frames(s).position[:, 2] if z is None else np.asarray(z, float)
        v = np.sqrt(np.maximum(0.0, 2.0 * (energy_per_kg - gravity * z)))
        for a, b, cap in caps:
            inside = (s >= a) & (s <= b)
            v[inside] = np.minimum(v[inside], cap)
        return v
    return v_energy


def scenario_speed(scenario, track_index: int):
    """``energy_speed`` of a scenario's track: its trains' starts and its motor sections' speeds."""
    cfg = scenario.tracks[track_index]
    track = cfg.track
    g = float(scenario.simulation.gravity)
    best = None
    for tr in scenario.trains:
        if tr.track_index != track_index or getattr(tr, "role", "riders") == "counterweight":
            continue
        z = track.frame(track.wrap(tr.start_s) if hasattr(track, "wrap") else tr.start_s).position[2]
        e = 0.5 * tr.start_speed ** 2 + g * z
        best = e if best is None else max(best, e)
    caps = []
    for sec in scenario.sections:
        if sec.track_index != track_index:
            continue
        speed = getattr(sec, "speed", None)
        if sec.type in ("lift", "launch", "booster") and speed is not None:
            z = track.frame(min(sec.s_to, track.length)).position[2]
            e = 0.5 * speed ** 2 + g * z
            best = e if best is None else max(best, e)
        if speed is not None and (sec.type in ("lift", "station", "trim")
                                  or (sec.type == "brake" and speed > 0)):
            caps.append((sec.s_from, sec.s_to, speed))
    return energy_speed(track, best, g, caps)


# --------------------------------------------------------------------------- the checks


def _rider_g(K, B, N, v2, gravity):
    """Vertical and lateral G at the rail at speed² ``v2`` (m²/s²), curvature vector ``K`` (1/m), up ``B``
    and left ``N``: (n, 2)."""
    f = v2[:, None] * K
    f[:, 2] += gravity
    return np.column_stack([np.sum(f * B, axis=1), np.sum(f * N, axis=1)]) / gravity


def _curvature_vector(fr):
    """``P'' = Ω × T`` of frames (1/m)."""
    return np.cross(fr.darboux, fr.tangent)


def _segment_words(segments, i) -> str:
    seg = segments[i] if 0 <= i < len(segments) else {}
    kind = seg.get("type", "?") if isinstance(seg, dict) else "?"
    extra = ""
    if isinstance(seg, dict) and "radius" in seg:
        extra = f", R {float(seg['radius']):g} m"
    return f"segments[{i}] ({kind}{extra})"


def _has_transition(seg) -> bool:
    if not isinstance(seg, dict):
        return False
    t = seg.get("transition")
    return t == "clothoid" or (isinstance(t, (int, float)) and not isinstance(t, bool) and t > 0)


def _joints(track):
    """``(s, words, segment before, segment after, k)`` of each joint between pieces of a segment track,
    or between a force design's segments (``k``: the design sample that starts the segment after);
    ``[]`` for a curve file (a smooth spline has none)."""
    design = getattr(track, "design", None)
    out = []
    if design is not None:
        idx = np.asarray(track.design_index)
        rail_s, heart_s = np.asarray(track.point_s)[: len(idx)], np.asarray(design.s)[idx]
        seg = np.asarray(design.segment)
        for k in np.flatnonzero(np.diff(seg)) + 1:
            a, b = int(seg[k - 1]), int(seg[k])
            out.append((float(np.interp(design.s[k], heart_s, rail_s)), f"segments[{a}] → segments[{b}]", a, b,
                        int(k)))
        return out
    curve = getattr(track, "_curve", None)
    seg_of = getattr(curve, "piece_segment", None)
    if seg_of is None:
        return out
    segments = curve.segments
    for p in range(1, len(seg_of)):
        a, b = seg_of[p - 1], seg_of[p]
        if a == b:
            words = f"inside {_segment_words(segments, a)}"
        else:
            words = f"{_segment_words(segments, a)} → {_segment_words(segments, b)}"
        out.append((float(curve.s0[p]), words, a, b, None))
    if track.closed and len(seg_of) > 1:
        out.append((0.0, f"{_segment_words(segments, seg_of[-1])} → {_segment_words(segments, seg_of[0])} "
                    "(closing the circuit)", seg_of[-1], seg_of[0], None))
    return out


def _design_joint_steps(track, thresholds, label):
    """G steps at a force design's joints, from the design's own G either side."""
    d = track.design
    out = []
    for s_rail, words, _, _, k in _joints(track):
        step = math.hypot(d.normal_g[k] - d.normal_g[k - 1], d.lateral_g[k] - d.lateral_g[k - 1])
        if step > thresholds.g_step:
            v = float(d.speed[k])
            out.append(Finding("g_step", s_rail, words, f"{label}: {words} at s = {s_rail:.1f} m: the G steps by "
                               f"{step:.2f} g at the design speed {v:.1f} m/s (more than {thresholds.g_step:g} g): "
                               "ramp normal_g and lateral_g with knots", {"g_step": step, "speed": v}))
    return out


def joint_findings(track, speed, thresholds: Thresholds = Thresholds(), label: str = "track",
                   gravity: float = GRAVITY) -> list:
    """G and roll-rate steps at joints, and loops or helices without a transition."""
    if getattr(track, "design", None) is not None:
        return _design_joint_steps(track, thresholds, label)
    joints = _joints(track)
    if not joints:
        return []
    segments = track._curve.segments
    s = np.array([j[0] for j in joints])
    L = track.length
    before = track.frames(np.where(s - JOINT_EPS < 0, (s - JOINT_EPS) % L if track.closed else 0.0, s - JOINT_EPS))
    after = track.frames(np.minimum(s + JOINT_EPS, L))
    v = np.maximum(speed(s, after.position[:, 2]), 0.0)
    K_b, K_a = _curvature_vector(before), _curvature_vector(after)
    g_b = _rider_g(K_b, before.binormal, before.normal, v * v, gravity)
    g_a = _rider_g(K_a, after.binormal, after.normal, v * v, gravity)
    rho_b = np.sum(before.darboux * before.tangent, axis=1)
    rho_a = np.sum(after.darboux * after.tangent, axis=1)
    out = []
    for j, (sj, words, a, b, _) in enumerate(joints):
        step = float(np.linalg.norm(g_a[j] - g_b[j]))
        roll_step = math.degrees(abs(rho_a[j] - rho_b[j]) * v[j])
        dk = float(np.linalg.norm(K_a[j] - K_b[j]))
        parts, values = [], {}
        if step > thresholds.g_step:
            dv, dl = g_a[j] - g_b[j]
            parts.append(f"the G steps by {step:.2f} g (vertical {dv:+.2f} g, lateral {dl:+.2f} g) at "
                         f"{v[j]:.1f} m/s, more than {thresholds.g_step:g} g")
            values.update(g_step=step, g_step_vertical=float(dv), g_step_lateral=float(dl))
        if roll_step > thresholds.roll_rate_step:
            parts.append(f"the roll rate steps by {roll_step:.0f}°/s at {v[j]:.1f} m/s, more than "
                         f"{thresholds.roll_rate_step:g}°/s")
            values.update(roll_rate_step=roll_step)
        bare = []
        for i_seg, end, k_own in ((b, "entered", np.linalg.norm(K_a[j])), (a, "left", np.linalg.norm(K_b[j]))):
            seg = segments[i_seg] if 0 <= i_seg < len(segments) else {}
            if (a != b and isinstance(seg, dict) and seg.get("type") in ("loop", "helix")
                    and not _has_transition(seg) and dk > TRANSITION_JUMP * k_own):
                bare.append(f"{_segment_words(segments, i_seg)} is {end} without a transition "
                            f"(the curvature jumps by {dk:.3g} 1/m)")
        if bare:
            parts.extend(bare)
            values.update(transition=True, curvature_step=dk)
        if not parts:
            continue
        kind = "g_step" if "g_step" in values or "roll_rate_step" in values else "transition"
        hint = ("put a clothoid between them, or give the segment a transition" if a != b
                else "lengthen its transition")
        out.append(Finding(kind, float(sj), words, f"{label}: {words} at s = {sj:.1f} m: " + "; ".join(parts)
                           + f": {hint}", {"speed": float(v[j]), **values}))
    return out


def jerk_findings(track, speed, thresholds: Thresholds = Thresholds(), label: str = "track",
                  gravity: float = GRAVITY) -> list:
    """Stretches where the jerk at the design speed exceeds the threshold (joints left out: see G steps)."""
    L = track.length
    ds = max(JERK_DS, L / JERK_SAMPLES)
    cuts = np.sort(np.concatenate([[0.0, L], [j[0] for j in _joints(track)]]))
    cuts = cuts[np.concatenate([[True], cuts[1:] != cuts[:-1]])]      # np.unique's, without importing numpy.ma
    grids = [np.linspace(lo + JOINT_EPS, hi - JOINT_EPS, max(2, int(math.ceil((hi - lo) / ds)) + 1))
             for lo, hi in zip(cuts[:-1], cuts[1:]) if hi - lo >= 4 * JOINT_EPS]
    s_all = np.concatenate(grids)
    K, B, N = (np.empty((len(s_all), 3)) for _ in range(3))
    z = np.empty(len(s_all))
    for a in range(0, len(s_all), FRAME_BLOCK):           # frames in blocks: bounded temporaries
        fr = track.frames(s_all[a:a + FRAME_BLOCK])
        K[a:a + FRAME_BLOCK], B[a:a + FRAME_BLOCK], N[a:a + FRAME_BLOCK] = (_curvature_vector(fr), fr.binormal,
                                                                          fr.normal)
        z[a:a + FRAME_BLOCK] = fr.position[:, 2]
    v2_all = np.maximum(speed(s_all, z), 0.0) ** 2
    runs = []          # (s_from, s_to, peak, s_peak)
    start = 0
    for grid in grids:
        i = slice(start, start + len(grid))
        start += len(grid)
        s, v2 = grid, v2_all[i]
        # each step's two ends at speeds that differ as energy says (v² falls by 2 g Δz), about the
        # mean of the design speeds there: a section's speed cap starting is no jerk of the track
        mean = 0.5 * (v2[1:] + v2[:-1])
        dv2 = np.where(np.abs(np.diff(v2)) > 0, -2.0 * gravity * np.diff(z[i]), 0.0)
        dv2 = np.clip(dv2, -2.0 * mean, 2.0 * mean)
        Ki, Bi, Ni = K[i], B[i], N[i]
        g1 = _rider_g(Ki[1:], Bi[1:], Ni[1:], mean + 0.5 * dv2, gravity)
        g0 = _rider_g(Ki[:-1], Bi[:-1], Ni[:-1], mean - 0.5 * dv2, gravity)
        jerk = np.sqrt(mean) * np.linalg.norm(g1 - g0, axis=1) / np.diff(s)
        over = jerk > thresholds.jerk
        if not over.any():
            continue
        edges = np.flatnonzero(np.diff(np.concatenate([[0], over.astype(int), [0]])))
        for a, b in zip(edges[::2], edges[1::2]):
            k = a + int(np.argmax(jerk[a:b]))
            runs.append((float(s[a]), float(s[b]), float(jerk[k]), float(0.5 * (s[k] + s[k + 1]))))
    out = []
    curve = getattr(track, "_curve", None)
    seg_of = getattr(curve, "piece_segment", None)
    for a, b, peak, sp in runs:
        where = f"s = {a:.1f}–{b:.1f} m"
        if seg_of is not None:
            p = int(np.clip(np.searchsorted(curve.s0, sp, side="right") - 1, 0, len(seg_of) - 1))
            where += f" ({_segment_words(curve.segments, seg_of[p])})"
        out.append(Finding("jerk", sp, where, f"{label}: {where}: the jerk reaches {peak:.1f} g/s at "
                           f"s = {sp:.1f} m (more than {thresholds.jerk:g} g/s at the design speed): "
                           "a longer transition eases it", {"jerk": peak, "s_from": a, "s_to": b}))
    return out


def track_findings(track, speed, thresholds: Thresholds = Thresholds(), label: str = "track",
                   gravity: float = GRAVITY) -> list:
    """Every design finding of one track, in order along it."""
    found = joint_findings(track, speed, thresholds, label, gravity) + jerk_findings(track, speed, thresholds,
                                                                                     label, gravity)
    return sorted(found, key=lambda f: f.s)


def scenario_findings(scenario, track: str | None = None) -> list:
    """The design findings of every track of a scenario (its ``[check]`` thresholds); ``track``: one only."""
    from trackrider.check.config import check_config

    cfg = check_config(scenario)
    th = Thresholds(cfg.g_step, cfg.roll_rate_step, cfg.jerk)
    out = []
    for i, tc in enumerate(scenario.tracks):
        if tc.track is None or (track is not None and tc.name != track):
            continue
        label = f"{scenario.path.name}: track[{i}] ({tc.name}): design check"
        out += track_findings(tc.track, scenario_speed(scenario, i), th, label, float(scenario.simulation.gravity))
    return out


def design_warnings(scenario, track: str | None = None) -> list:
    """The lines of :func:`scenario_findings` (what ``validate``, ``curve`` and ``run`` warn)."""
    return [f.message for f in scenario_findings(scenario, track)]
