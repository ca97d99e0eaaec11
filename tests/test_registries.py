"""Each family of kinds has one registry, and every consumer reads it: these tests walk each
registry (joint kinds, section types, event types) and fail when a consumer lacks a kind.

A kind the kernels dispatch by code (a joint's rows, a section's row rule) is an error there when
its branch is missing, never another kind's rule: the tests call the dispatch with every code and
with one past the last."""
from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import numpy as np
import pytest

from trackrider import events
from trackrider.physics import joints as jk
from trackrider.physics import kernels as kn
from trackrider.physics.joints import common as jc
from trackrider.physics.sections import SECTIONS
from trackrider.settings import SectionConfig, settings_of

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
#: the smallest parameters of each user joint kind that has required ones (a new kind with required
#: parameters: its line here)
REQUIRED = {"pulley": dict(ground_a=(0.0, 0.0, 5.0), ground_b=(1.0, 0.0, 5.0)), "hinge": dict(axis=(0.0, 1.0, 0.0)),
            "prismatic": dict(axis=(1.0, 0.0, 0.0))}


# ----------------------------------------------------------------------------- joint kinds
def _one_joint(code, slack=0):
    ji = np.zeros((1, jc.NJI), np.int64)
    jf = np.zeros((1, jc.NJF))
    ji[0, jc.JI_KIND], ji[0, jc.JI_A], ji[0, jc.JI_B], ji[0, jc.JI_SLACK] = code, 0, 1, slack
    jf[0, jc.LA:jc.LA + 3] = (0.5, 0.0, 0.0)
    jf[0, jc.LB:jc.LB + 3] = (-0.5, 0.0, 0.0)
    pos = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]])
    quat = np.array([[1.0, 0.0, 0.0, 0.0]] * 2)
    return kn.joint_rows(ji, jf, pos, quat, 1e-3, 0.2)


@pytest.mark.parametrize("name", [name for name, _ in jk.KINDS])
def test_every_joint_kind_has_its_module_and_its_branch_in_the_kernels(name):
    module = jk.kind(name)
    assert callable(module.prepare)
    assert module.END <= jc.NJF, f"{name}'s parameter columns end at {module.END} > NJF = {jc.NJF}"
    rows = _one_joint(jk.CODES[name])
    assert rows.m[0] >= 1, f"joints.dispatch.prepare_joint has no branch for {name!r}"


def test_a_joint_code_without_its_branch_is_an_error_where_it_is_dispatched():
    with pytest.raises(ValueError, match="without its branch"):
        _one_joint(len(jk.KINDS))


@pytest.mark.parametrize("name", jk.USER_KINDS)
def test_every_user_joint_kind_has_what_world_checks_and_the_loader_read(name):
    from trackrider.divergence import DivergenceCheck
    from trackrider.physics import World
    from trackrider.physics.checks import check_start

    module = jk.kind(name)
    assert dataclasses.is_dataclass(module.Settings) and jk.settings(name) is module.Settings
    assert isinstance(module.ANCHOR_B_AT_A, bool)
    assert module.NO_WORLD_END is None or isinstance(module.NO_WORLD_END, str)
    # World creates it, checks its start, the divergence test checks it
    w = World()
    a = w.add_body("a", 10.0, size=(0.2, 0.2, 0.2), position=(0.0, 0.0, 2.0))
    b = w.add_body("b", 10.0, size=(0.2, 0.2, 0.2), position=(1.0, 0.0, 2.0))
    w.add_joint(name, ("body", a), ("body", b), (0.5, 0.0, 0.0), (-0.5, 0.0, 0.0), **REQUIRED.get(name, {}))
    assert w.n_entities == 2    # built
    geo = check_start(w)
    assert [jd["kind"] for jd in geo.joints] == [name]
    error = module.position_error(np.zeros((2, 3)), np.ones((2, 3)), geo.joints[0]["p"], np.zeros(3), np.ones(3))
    assert error is None or (error.shape == (2,) and module.START_WORDS is not None)
    assert module.unrecorded_energy(geo.joints[0]["p"]) in (True, False)
    DivergenceCheck.from_world(w, 0.01)
    # the loader offers it and the docs describe it
    assert f"`{name}`" in (DOCS / "scenarios.md").read_text()
    assert name in (DOCS / "physics.md").read_text()


# ----------------------------------------------------------------------------- section types
@pytest.mark.parametrize("name", list(SECTIONS))
def test_every_section_type_has_its_row_rule_and_what_each_consumer_reads(name):
    from tests.physics.reference import _section_row

    t = SECTIONS[name]
    for v in (1.0, -1.0):   # the kernels' rule, against the rule written again in the tests
        row = kn.py_section_row(t.code, 2.0, 1000.0, 0.01, v)
        want = _section_row(t.code, 2.0, 1000.0, 0.01, v)
        assert row == pytest.approx(want), (name, v)
    assert name in settings_of(SectionConfig)["type"].choices
    assert re.fullmatch(r"#[0-9a-f]{6}", t.colour)          # plot.py and report/figures.py draw it
    assert t.block in (None, "own", "drive", "station")     # blocks.py acts on it
    assert t.words and t.row
    assert f"`{name}`" in (DOCS / "scenarios.md").read_text()


def test_section_codes_are_unique_and_a_code_without_its_branch_is_an_error():
    codes = sorted(t.code for t in SECTIONS.values())
    assert codes == list(range(len(SECTIONS)))
    assert kn.HAS_RATCHET.shape == (len(SECTIONS),)
    with pytest.raises(ValueError, match="without its branch"):
        kn.py_section_row(len(SECTIONS), 2.0, 1000.0, 0.01, 1.0)


# ----------------------------------------------------------------------------- event types
@pytest.mark.parametrize("name", list(events.EVENTS))
def test_every_event_type_has_what_each_consumer_reads(name):
    from trackrider.report.page import EVENT_WORDS
    from trackrider.sweep_table import summary_row

    e = events.EVENTS[name]
    assert e.status is None or e.status in events.STATUSES
    assert EVENT_WORDS[name] == e.words
    row = summary_row({"status": "completed", "events": [{"t": 1.0, "train": "a", "car": 1, "kind": name}]})
    assert row["n_events"] == 1
    assert row.get(f"n_{name}", 0) + row["n_other_events"] == 1
    assert (f"n_{name}" in row) == e.counted
    assert events.status_of([name]) == (e.status or "completed")
    assert f"`{name}`" in (DOCS / "outputs.md").read_text()


def test_every_event_the_code_emits_is_in_the_table():
    """Every kind written as an event in the package's source is an entry of ``events.EVENTS``."""
    found = set()
    for path in (ROOT / "trackrider").rglob("*.py"):
        found |= set(re.findall(r"_event\([^()]*?\"([a-z_]+)\"", path.read_text()))
    assert found, "no events found: the pattern no longer matches the code"
    assert found <= set(events.EVENTS), sorted(found - set(events.EVENTS))


# ----------------------------------------------------------------------------- recorded columns
def test_every_channel_has_its_index_and_its_row_in_the_docs():
    from trackrider.physics import channels as ch

    outputs = (DOCS / "outputs.md").read_text()
    for i, c in enumerate(ch.CHANNELS):
        assert getattr(ch, c.name.upper()) == i, c.name
        assert c.name in outputs, c.name
    assert ch.NAMES == tuple(c.name for c in ch.CHANNELS) and ch.N_CHANNELS == len(ch.CHANNELS)


def test_records_are_allocated_by_name_from_their_tables():
    from trackrider.physics import state as st

    cars = st.make_cars(3)
    for f in st.Cars.FIELDS[1:]:
        a = getattr(cars, f.name)
        assert a.dtype == f.dtype and a.shape[0] == 3, f.name
    with pytest.raises(TypeError, match=r"Joints\.kind: expected 1-d int64, got 1-d float64"):
        st.allocate(st.Joints, {}, kind=np.zeros(2))
