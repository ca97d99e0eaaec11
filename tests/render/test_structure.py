"""Structure that connects: every support of every bundled scenario stands on
the ground and meets what it carries (a steel column's head and a hanging
track's arm reach into the spine, a railway pier into the deck), on the
drawn geometry. No rendering: runs without OpenGL."""
from __future__ import annotations

import tomllib
from pathlib import Path

import numpy as np
import pytest

from trackrider.render import geometry as geo
from trackrider.render.layout import static_scene
from trackrider.render.quality import Quality
from trackrider.render.spec import scene_from_scenario
from trackrider.render.synthetic import StraightTrack
from trackrider.scenario import load_scenario

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = sorted(p for p in (ROOT / "scenarios").glob("*.toml")
                   if "sweep" not in tomllib.loads(p.read_text(encoding="utf-8")))
#: how far a support's top may stop short of what it carries, m
CONTACT = 0.03


def _static(path):
    spec = scene_from_scenario(load_scenario(path))
    box = np.array([[np.inf] * 3, [-np.inf] * 3])
    for tr in spec.tracks:
        p = np.asarray(tr.geometry.frames(np.linspace(0.0, float(tr.geometry.length), 200)).position)
        box = np.array([np.minimum(box[0], p.min(0)), np.maximum(box[1], p.max(0))])
    return spec, static_scene(spec, Quality(), box if np.all(np.isfinite(box)) else np.zeros((2, 3)))


def _distance_to_polyline(p, line):
    a, b = line[:-1], line[1:]
    ab = b - a
    t = np.clip(np.einsum("ij,ij->i", p - a, ab) / np.maximum(np.einsum("ij,ij->i", ab, ab), 1e-12), 0.0, 1.0)
    return float(np.min(np.linalg.norm(a + t[:, None] * ab - p, axis=1)))


def _check_contact(spec, st):
    """Every support: its drawing stands on the ground at its foot and reaches its top, and the top is
    inside (or within CONTACT of) the spine or the deck it carries. Returns how many were checked."""
    for sp in st.supports:
        lay = st.layouts[sp.track]
        geom = spec.tracks[sp.track].geometry
        pts = sp.quads.points
        # on the ground: the footer's underside at the ground under the foot
        assert abs(sp.foot[2] - float(st.ground.height(sp.foot[0], sp.foot[1]))) < 1e-9
        assert pts[:, 2].min() <= sp.foot[2] + 0.01
        # the drawing reaches the top: one of its faces ends there (a head's or pier's top, an arm's drop)
        faces = pts[sp.quads.quads].mean(axis=1)
        near = np.linalg.norm(faces - sp.top, axis=1).min()
        assert near < 0.02, (sp.kind, sp.s, near)
        ss = np.linspace(max(sp.s - 6.0, 0.0), min(sp.s + 6.0, float(geom.length)), 241)
        P, _T, N, B = geo._frames(geom, ss)
        if sp.kind in ("column", "arm"):
            spine = P + lay.spine_offset() * B
            d = _distance_to_polyline(sp.top, spine)
            assert d <= lay.spine_radius + CONTACT, (sp.kind, sp.s, d, lay.spine_radius)
        else:
            top_d, hb, _wt, wb = geo._ballast(lay)
            under = P - (top_d + hb + geo.DECK_DEPTH) * B  # the deck's underside, centre line
            j = int(np.argmin(np.linalg.norm(under[:, :2] - sp.top[:2], axis=1)))
            above = float((sp.top - under[j]) @ B[j])  # into the deck (+)
            assert -CONTACT <= above <= geo.DECK_DEPTH, (sp.s, above)
    return len(st.supports)


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_every_support_meets_the_structure_it_carries(path):
    spec, st = _static(path)
    n = _check_contact(spec, st)
    styles = {lay.style for lay in st.layouts}
    if path.stem in ("classic_coaster", "suspended_coaster", "two_train_coaster"):
        assert n >= 10  # the test checked something
        assert {"column", "arm"} & {sp.kind for sp in st.supports}
    if "hanging" in styles:
        assert all(sp.kind == "arm" for sp in st.supports)


def test_a_viaducts_piers_meet_its_deck_on_a_grade_and_a_bank():
    """A railway high above the plain on a 20° grade: the piers' tops reach into the sloping deck."""
    class Ramp(StraightTrack):
        def frames(self, s):
            f = super().frames(s)
            a = np.radians(20.0)
            s = np.atleast_1d(np.asarray(s, dtype=float))
            f.position = np.column_stack([s * np.cos(a), np.zeros(len(s)), 30.0 + s * np.sin(a)])
            f.tangent = np.tile([np.cos(a), 0.0, np.sin(a)], (len(s), 1))
            f.binormal = np.tile([-np.sin(a), 0.0, np.cos(a)], (len(s), 1))
            return f

    lay = geo.StyledLayout(style="railway", gauge=1.0, rail_depth=0.2, rail_radius=0.07, support_spacing=20.0,
                           clearance=1.8)
    track = Ramp(length=100.0)
    plan = geo.support_plan([track], [lay], 0.0)
    assert len(plan) == 5 and all(sp.kind == "pier" for sp in plan)

    class Spec:
        tracks = [type("T", (), {"geometry": track})()]

    st = type("S", (), {"supports": plan, "layouts": [lay], "ground": type("G", (), {
        "height": staticmethod(lambda x, y: np.zeros(np.shape(x)))})()})()
    assert _check_contact(Spec, st) == 5


def test_a_suspended_trolley_is_wheels_on_the_rails_not_a_box():
    from trackrider.render import models

    rr, up, gauge = 0.07, 0.35, 1.0
    t = models.trolley(gauge, (30, 90, 220), rr, up)
    pts = t.quads.points
    # road wheels on top of each rail, up-stop wheels under it, guide wheels outside it
    for side in (1.0, -1.0):
        y = side * 0.5 * gauge
        on_rail = pts[np.abs(pts[:, 1] - y) < 0.05]
        assert on_rail[:, 2].max() > up + rr + 0.15 and on_rail[:, 2].min() < up - rr - 0.1
        outside = pts[side * (pts[:, 1] - y) > rr + 0.01]
        assert np.any(np.abs(outside[:, 2] - up) < 0.05)
    # nothing of it in the rails themselves
    for side in (1.0, -1.0):
        d = np.hypot(pts[:, 1] - side * 0.5 * gauge, pts[:, 2] - up)
        assert d.min() > rr - 1e-6
    # shaped: many faces, most of them not axis-aligned box faces
    assert len(t.quads.quads) > 300
