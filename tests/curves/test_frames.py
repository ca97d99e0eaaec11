"""Frames (up, minimal, frenet, file), roll knots and the Darboux vector."""
import numpy as np
import pytest

from trackrider.curves import Track, load_curve, loop, straight
from trackrider.errors import InputError

from tests.curves.curves_helpers import CURVES, darboux_fd_error, helix_points, osculating_bank_deg

R_LOOP = 10.0


def loop_track(**kw):
    return Track.from_segments([straight(20.0), loop(R_LOOP, offset=3.0), straight(20.0)], **kw)


def _check_up_through_loop(tr, s_loop, s_exit, kappa_max, level_tol=1e-6):
    s = np.linspace(0.0, tr.length, 8001)
    f = tr.frames(s)
    flat = (s < s_loop - 1e-6) | (s > s_exit + 1e-6)
    # upright on the straights (B_w = +z, no bank); a fitted file's straights are level to ~1e-5
    assert np.abs(f.binormal[flat] - [0, 0, 1]).max() < level_tol
    assert np.abs(f.roll).max() < 1e-6
    # zero bank on the long level runs around the loop: B_w lies in the vertical plane through T
    # (inside the loop the short level runs at its top and bottom are carried through, see below)
    upright = flat & (np.abs(f.tangent[:, 2]) < np.sin(np.radians(18)))
    side = np.cross([0.0, 0.0, 1.0], f.tangent[upright])
    assert np.abs(np.sum(side * f.binormal[upright], axis=1)).max() < 1e-9
    # inside the loop the rider's up stays in the loop's osculating plane (it exits displaced sideways, so
    # the plane leans and turns by ∫τ ds; the up frame follows it): bank against it < 3° where the loop is
    # tight, and the sideways part of the curvature κ sin(bank) (lateral G per v²) below κ_max sin 3°
    mid = (s > s_loop) & (s < s_exit)
    bank = osculating_bank_deg(tr, s[mid])
    tight = f.curvature[mid] > 0.5 * kappa_max
    assert tight.sum() > 0.3 * mid.sum()
    assert bank[tight].max() < 3.0
    assert (f.curvature[mid] * np.sin(np.radians(bank))).max() < kappa_max * np.sin(np.radians(3.0))
    # exactly inverted at the top: find the top by the tangent's zero crossing of z
    i = np.nonzero(mid)[0][np.argmax(f.position[mid, 2])]
    lo, hi = s[i - 1], s[i + 1]
    for _ in range(60):  # bisection on T_z = 0
        m = 0.5 * (lo + hi)
        if tr.frame(m).tangent[2] > 0:
            lo = m
        else:
            hi = m
    top = tr.frame(0.5 * (lo + hi))
    assert top.binormal[2] == pytest.approx(-1.0, abs=1e-9)
    # no step larger than the geometry demands: across the near-vertical stretches the up frame
    # must twist by the loop's holonomy (about ∫τ ds, spread over metres), never snap
    ang = np.arccos(np.clip(np.sum(f.binormal[1:] * f.binormal[:-1], axis=1), -1, 1)) / np.diff(s)
    omega = np.linalg.norm(f.darboux, axis=1)
    assert omega.max() < 1.5 * kappa_max
    assert ang.max() < 1.01 * omega.max()
    assert np.abs(np.sum(f.darboux * f.tangent, axis=1)).max() < 0.1  # twist < 6°/m


def test_up_frame_through_loop_with_lateral_offset_builder():
    tr = loop_track()
    assert tr.frame_kind == "up"
    s_exit = tr.length - 20.0
    # the loop exits beside its entry, level, with the entry's heading
    end = tr.frame(tr.length)
    assert end.tangent == pytest.approx([1, 0, 0], abs=1e-9)
    assert end.position[2] == pytest.approx(0.0, abs=1e-9)
    assert end.position[1] == pytest.approx(3.0 * np.cos(np.arctan2(3.0 / (2 * np.pi), R_LOOP)), abs=1e-9)
    _check_up_through_loop(tr, 20.0, s_exit, 1.0 / R_LOOP)


def test_up_frame_through_loop_file():
    tr = load_curve(CURVES / "vertical_loop.csv")
    _check_up_through_loop(tr, 30.0, tr.length - 30.0, 0.16, level_tol=1e-4)


def test_minimal_frame_turns_by_minus_integral_of_torsion_against_frenet():
    r, c = 5.0, 1.0
    tau = c / (r * r + c * c)
    fr = Track.from_points(helix_points(r, c, 3.0, 500), frame="frenet")
    mn = Track.from_points(helix_points(r, c, 3.0, 500), frame="minimal")
    s = np.linspace(0.0, fr.length, 600)
    a, b = fr.frames(s), mn.frames(s)
    # angle from the Frenet normal to the minimal frame's left axis, about T
    ang = np.unwrap(np.arctan2(np.sum(np.cross(a.normal, b.normal) * a.tangent, axis=1),
                               np.sum(a.normal * b.normal, axis=1)))
    assert np.abs((ang - ang[0]) - (-tau * s)).max() < 1e-3 * tau * s[-1]  # within 0.1 % of ∫τ ds
    # minimal starts with zero bank; frenet's twist rate is τ, minimal's is 0
    assert b.roll[0] == pytest.approx(0.0, abs=1e-9)
    assert np.abs(np.sum(b.darboux * b.tangent, axis=1)).max() < 1e-12
    assert np.allclose(np.sum(a.darboux * a.tangent, axis=1), tau, rtol=1e-2)


def test_minimal_frame_closes_on_closed_track():
    t = np.linspace(0, 2 * np.pi, 60)[:-1]
    pts = np.column_stack([30 * np.cos(t), 20 * np.sin(t), 6 * np.sin(2 * t)])
    tr = Track.from_points(pts, closed=True, frame="minimal")
    a = tr.frame(0.0)
    b = tr.frames(np.array([tr.length - 1e-7]))[0]
    assert np.abs(a.normal - b.normal).max() < 1e-5
    twist = np.sum(tr.frames(np.linspace(0, tr.length, 50)).darboux * tr.frames(np.linspace(0, tr.length, 50)).tangent, axis=1)
    assert np.ptp(twist) < 1e-12  # the closing angle is spread evenly: constant twist rate


def test_frenet_undefined_on_straight_is_a_clear_error():
    x = np.linspace(0, 60, 61)
    pts = np.column_stack([x, np.zeros_like(x), np.where(x > 30, (x - 30) ** 2 / 100, 0.0)])
    with pytest.raises(InputError, match="frenet frame is undefined .* curvature is ~0"):
        Track.from_points(pts, frame="frenet")
    with pytest.raises(InputError, match="unknown frame"):
        Track.from_points(helix_points(), frame="banana")


def test_roll_knots():
    x = np.linspace(0, 100, 51)
    pts = np.column_stack([x, np.zeros_like(x), np.zeros_like(x)])
    tr = Track.from_points(pts, roll=[[0.0, 0.0], [40.0, 30.0], [100.0, 30.0]])
    f = tr.frames(np.array([0.0, 40.0, 70.0, 100.0]))
    assert f.roll == pytest.approx([0.0, 30.0, 30.0, 30.0], abs=1e-9)  # knots hit exactly
    # positive roll = right-hand turn about T: up leans right (−y), the right rail is lower
    r = np.radians(30.0)
    assert f.binormal[2] == pytest.approx([0.0, -np.sin(r), np.cos(r)], abs=1e-9)
    assert f.normal[2] == pytest.approx([0.0, np.cos(r), np.sin(r)], abs=1e-9)
    # smooth: the roll rate is the twist of the frame and matches a finite difference of roll
    s = np.linspace(1.0, 39.0, 20)
    h = 1e-5
    droll = np.radians(tr.frames(s + h).roll - tr.frames(s - h).roll) / (2 * h)
    assert np.sum(tr.frames(s).darboux * tr.frames(s).tangent, axis=1) == pytest.approx(droll, abs=1e-7)
    with pytest.raises(InputError, match="strictly increasing"):
        Track.from_points(pts, roll=[[10.0, 0.0], [5.0, 3.0]])
    with pytest.raises(InputError, match="outside the track"):
        Track.from_points(pts, roll=[[0.0, 0.0], [500.0, 3.0]])


def test_roll_on_top_of_up_frame_on_a_helix():
    tr = Track.from_points(helix_points(10.0, 1.0, 2.0, 300), roll=[[0.0, 0.0], [20.0, -25.0], [120.0, -25.0]])
    f = tr.frames(np.array([50.0]))
    assert f.roll[0] == pytest.approx(-25.0, abs=1e-9)
    up = Track.from_points(helix_points(10.0, 1.0, 2.0, 300)).frame(50.0)
    ang = np.degrees(np.arctan2(np.dot(np.cross(up.binormal, f.binormal[0]), up.tangent), np.dot(up.binormal, f.binormal[0])))
    assert ang == pytest.approx(-25.0, abs=1e-9)


@pytest.mark.parametrize("frame", ["up", "minimal", "frenet"])
def test_darboux_against_finite_differences_helix(frame):
    tr = Track.from_points(helix_points(5.0, 1.0, 3.0, 400), frame=frame, roll=[[0, 0], [40, 20], [80, -10]])
    s = np.linspace(0.5, tr.length - 0.5, 400)
    assert darboux_fd_error(tr, s) < 1e-6  # 1/m


def test_darboux_against_finite_differences_loop_and_files():
    tr = loop_track(roll=[[0.0, 0.0], [10.0, 15.0], [19.0, 0.0]])
    L_loop = tr.length - 40.0
    s = np.linspace(20.2, 20.0 + L_loop - 0.2, 400)  # inside the loop, away from its curvature jumps
    assert darboux_fd_error(tr, s) < 1e-6
    s = np.linspace(0.2, 19.8, 50)  # rolling straight
    assert darboux_fd_error(tr, s) < 1e-6
    for name in ("vertical_loop.csv", "helix_nl2.csv", "hilly_circuit.csv"):
        tr = load_curve(CURVES / name)
        s = np.linspace(0.5, tr.length - 0.5, 600)
        assert darboux_fd_error(tr, s) < 1e-5, name


def test_up_frame_carried_through_vertical_climb_without_snap():
    """A 3D climb that goes through vertical: B stays continuous and the rider ends upright."""
    from trackrider.curves import arc

    tr = Track.from_segments([straight(10), arc(10, 90, "pitch"), straight(5), arc(10, -90, "pitch"), arc(20, 40, "yaw"),
                              straight(10)])
    s = np.linspace(0, tr.length, 6001)
    f = tr.frames(s)
    step = np.arccos(np.clip(np.sum(f.binormal[1:] * f.binormal[:-1], axis=1), -1, 1)) / np.diff(s)
    assert step.max() < 0.11  # ≤ 1/R plus a little: no 180° snap
    assert f.binormal[-1] == pytest.approx([0, 0, 1], abs=1e-9)


def test_closed_circuit_starting_inside_a_loop():
    """s = 0 in the middle of a loop: the carry wraps round, riders are upright on the straights."""
    from trackrider.curves import arc

    ref = Track.from_segments([straight(30), loop(10, offset=0.0), straight(30), arc(20, 180), straight(60),
                               arc(20, 180)], closed=True)
    L = ref.length
    shift = 30 + 15.7  # a quarter of the way round the loop: the tangent is vertical at s = 0
    tr = Track.from_points(ref.frames((np.arange(0, L, 0.5) + shift) % L).position, closed=True)
    assert abs(tr.frame(0.0).tangent[2]) > 0.99
    s = np.linspace(0, tr.length, 6001)
    f, g = tr.frames(s), ref.frames((s + shift) % L)
    assert np.abs(f.binormal - g.binormal).max() < 0.01  # the same frame as the circuit started on a straight
    level = np.abs(f.tangent[:, 2]) < 1e-3
    assert (f.binormal[level, 2] > 0.999).sum() > 0.9 * level.sum()  # upright on the level parts ...
    top = np.argmax(f.position[:, 2])
    assert f.binormal[top, 2] < -0.999  # ... and upside down at the top of the loop
    assert darboux_fd_error(tr, np.linspace(0.3, tr.length - 0.3, 500)) < 1e-6
    a, b = tr.frame(0.0), tr.frames(np.array([tr.length - 1e-7]))[0]
    assert np.abs(a.normal - b.normal).max() < 1e-6


def test_track_starting_and_ending_vertical():
    """Steep stretches at the ends: the frame is carried from the nearest upright point, continuously."""
    from trackrider.curves import arc
    from trackrider.curves.segments import start

    tr = Track.from_segments([start(pitch=90.0), straight(8.0), arc(10.0, -90.0, "pitch"), straight(10.0),
                              arc(10.0, 90.0, "pitch"), straight(8.0)])
    s = np.linspace(0, tr.length, 4001)
    f = tr.frames(s)
    assert np.all(np.isfinite(f.darboux)) and np.all(np.isfinite(f.binormal))
    level = np.abs(f.tangent[:, 2]) < 1e-9
    assert np.abs(f.binormal[level] - [0, 0, 1]).max() < 1e-9  # upright where level
    step = np.arccos(np.clip(np.sum(f.binormal[1:] * f.binormal[:-1], axis=1), -1, 1)) / np.diff(s)
    assert step.max() < 0.11  # no snap: at most the pitch curvature 1/10 m
    assert darboux_fd_error(tr, np.linspace(0.2, tr.length - 0.2, 400)) < 1e-5


@pytest.mark.parametrize("seed", range(4))
def test_random_smooth_curves_give_finite_consistent_frames(seed):
    rng = np.random.default_rng(seed)
    n = 80
    heading = np.cumsum(rng.normal(0, 0.15, n))
    pitch = np.clip(np.cumsum(rng.normal(0, 0.15, n)), -1.4, 1.4)
    d = np.column_stack([np.cos(pitch) * np.cos(heading), np.cos(pitch) * np.sin(heading), np.sin(pitch)])
    pts = np.cumsum(d * 2.0, axis=0)
    for frame in ("up", "minimal"):
        tr = Track.from_points(pts, frame=frame)
        s = np.linspace(0, tr.length, 3000)
        f = tr.frames(s)
        for name in ("position", "tangent", "normal", "binormal", "darboux", "roll"):
            assert np.all(np.isfinite(getattr(f, name))), name
        ortho = np.abs(np.sum(f.tangent * f.normal, axis=1)).max() + np.abs(np.linalg.norm(f.binormal, axis=1) - 1).max()
        assert ortho < 1e-12
        omega = np.linalg.norm(f.darboux, axis=1).max()
        assert darboux_fd_error(tr, np.linspace(0.05, tr.length - 0.05, 300), h=1e-5) < 1e-5 * max(1.0, omega)
