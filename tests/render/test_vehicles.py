"""Vehicles by kind: what each car of a train is drawn as (``train.model``), and
the railway vehicles themselves — on their wheels on the rails, inside their
box, a locomotive's cab and a funicular car's level compartments."""
from __future__ import annotations

import math

import numpy as np
import pytest

from trackrider.render import models
from trackrider.render import vehicles as rv
from trackrider.render.spec import TrainSpec
from trackrider.settings import VEHICLE_KINDS, VEHICLE_MODELS, TrainConfig


def test_the_model_key_is_a_setting_with_its_choices():
    assert TrainConfig.model == "auto"
    assert set(VEHICLE_KINDS) <= set(VEHICLE_MODELS)
    assert {"auto", "freight", "passenger"} <= set(VEHICLE_MODELS)


@pytest.mark.parametrize("wheels, cars, model, expected", [
    ("coaster", 3, "auto", ["coaster"] * 3),
    ("railway", 1, "auto", ["coach"]),
    ("railway", 12, "auto", ["locomotive"] + ["wagon"] * 5 + ["hopper"] * 5 + ["flat"]),
    ("railway", 3, "passenger", ["locomotive", "coach", "coach"]),
    ("coaster", 2, "hopper", ["hopper", "hopper"]),
    ("railway", 2, "coaster", ["coaster", "coaster"]),
])
def test_each_car_is_drawn_as_the_trains_model_says(wheels, cars, model, expected):
    tr = TrainSpec("t", 0, cars, length=14.0, width=3.0, height=3.5, wheels=wheels, model=model)
    assert [tr.vehicle(k + 1) for k in range(cars)] == expected


def test_small_and_suspended_cars_keep_their_kind():
    assert TrainSpec("bead", 0, 1, length=0.1, width=0.1, height=0.1, rider_height=0.0).vehicle(1) == "box"
    assert TrainSpec("s", 0, 1, suspended=True).vehicle(1) == "suspended"


KINDS = [("locomotive", rv.locomotive, {}), ("coach", rv.coach, {}), ("wagon", rv.box_wagon, {}),
         ("hopper", rv.hopper_wagon, {}), ("flat", rv.flat_wagon, {}),
         ("funicular", rv.coach, {"grade": math.radians(20.0)})]


@pytest.mark.parametrize("name, build, kw", KINDS, ids=[k[0] for k in KINDS])
def test_a_railway_vehicle_stands_on_the_rails_within_its_box(name, build, kw):
    length, width, height, cg, gauge, depth = 14.0, 3.0, 3.5, 1.5, 1.435, 0.25
    quads, eyes, _view = build(length, width, height, cg, gauge, depth, (30, 90, 200), **kw)
    pts = quads.points
    rail = -depth - cg
    # its wheels stand on the rails: the lowest points at the rails' tops (the flanges 3 cm
    # lower, inside them), at ±gauge/2
    assert rail - 0.035 <= pts[:, 2].min() <= rail + 0.005
    low = pts[pts[:, 2] < rail + 0.05]
    assert np.all(np.abs(np.abs(low[:, 1]) - 0.5 * gauge) < 0.2)
    # inside its box (buffers beyond the ends, a hopper's load, a roof's curve, a funicular car's stepped
    # compartments a little over the top)
    assert np.all(np.abs(pts[:, 1]) <= 0.5 * width + 0.1)
    assert np.all(np.abs(pts[:, 0]) <= 0.5 * length + 0.4)
    assert pts[:, 2].max() <= 0.5 * height + 0.65
    assert len(quads.quads) > 150  # shaped, not a box
    assert eyes == []


def test_a_locomotive_has_a_cab_with_the_drivers_eyes_behind_its_windscreen():
    args = (18.0, 3.0, 4.2, 1.6, 1.435, 0.5, (200, 40, 40))
    outside = rv.locomotive(*args).quads
    inside, eyes, _view = rv.locomotive(*args, cab=True)
    eye = eyes[0][0]
    assert 0.0 < eye[0] < 9.0 and 0.3 < eye[1] < 1.5  # the driver's seat, on the left
    rail = -0.5 - 1.6
    assert eye[2] - rail > 2.5  # a driver high above the rails
    assert eye[2] < 2.1  # under the roof
    # from inside: no glass in front of the eyes, a desk under them
    glass = np.all(outside.colours == rv.GLASS, axis=1)
    assert glass.any() and not np.all(inside.colours == rv.GLASS, axis=1).any()
    desk = inside.points[inside.quads[np.all(inside.colours == rv.DESK, axis=1)]].reshape(-1, 3)
    assert desk[:, 0].min() > eye[0] and desk[:, 2].max() < eye[2] - 0.3


def test_a_funicular_cars_compartment_floors_are_level_on_its_grade():
    grade = math.radians(20.0)
    quads, eyes, view = rv.coach(10.0, 2.4, 3.0, 0.0, 1.0, 1.5, (30, 90, 200), grade=grade, cab=True)
    # the car on its grade: body axes turned by the grade about y (front up)
    rot = np.array([[math.cos(grade), 0, -math.sin(grade)], [0, 1, 0], [math.sin(grade), 0, math.cos(grade)]])
    world = quads.points @ rot.T
    body = np.all(quads.colours == np.array((30, 90, 200)), axis=1)
    floors = []
    for q in quads.quads[body]:
        p = world[q]
        n = np.cross(p[2] - p[0], p[3] - p[1])
        n /= np.linalg.norm(n)
        if abs(n[2]) > 0.999:  # a level face: a compartment's floor or ceiling
            floors.append(p[:, 2].mean())
    assert len(floors) >= 2 * 4  # four compartments, each level
    # they step: up towards the front by the grade over a compartment's length
    levels = np.unique(np.round(floors, 6))
    assert len(levels) >= 4
    # and the passenger at the front window, inside the front compartment, looking out level, 8° down
    assert eyes and eyes[0][0][0] > 2.5
    look = rot @ view[0]
    assert np.degrees(np.arcsin(-look[2])) == pytest.approx(8.0)


def test_a_flat_wagons_load_changes_with_its_number_and_models_are_shared_otherwise():
    tr = TrainSpec("t", 0, 30, length=14.0, width=3.0, height=3.5, wheels="railway", model="flat")
    keys = {models.model_key(tr, "car", k) for k in range(1, 31)}
    assert len(keys) == len(rv.CONTAINERS)
    box = TrainSpec("b", 0, 30, length=14.0, width=3.0, height=3.5, wheels="railway", model="wagon")
    assert len({models.model_key(box, "car", k) for k in range(1, 31)}) == 1


def test_a_train_of_vehicles_is_drawn_car_by_car_as_its_vehicles_are():
    """scenarios/freight.toml: a locomotive, 30 wagons and a rear locomotive ([[train.vehicle]] kind);
    each car drawn as its vehicle's kind (the wagons in blocks of box wagons, hoppers, flat wagons)
    at its vehicle's length, not as the lead vehicle's; an explicit ``model`` still wins."""
    from pathlib import Path

    from trackrider.render.spec import scene_from_scenario
    from trackrider.scenario import load_scenario

    sc = load_scenario(Path(__file__).resolve().parents[2] / "scenarios" / "freight.toml")
    spec = scene_from_scenario(sc)
    tr = spec.trains[0]
    # on bogies: the bodies are drawn as the vehicles, each wheel frame as its vehicle's bogie
    assert [spec.entity((tr.name, k))[1] for k in (1, 2, 64)] == ["bogie"] * 3
    assert spec.entity((tr.name, 2))[0] is spec.entity((f"{tr.name}.body", 1))[0]
    drawn = [spec.entity((f"{tr.name}.body", c))[0] for c in range(1, tr.cars + 1)]
    kinds = [d.vehicle(c) for c, d in enumerate(drawn, start=1)]
    assert kinds[0] == kinds[-1] == "locomotive"
    assert kinds[1:6] == ["wagon"] * 5 and kinds[6:11] == ["hopper"] * 5 and kinds[11:16] == ["flat"] * 5
    lengths = [v.length for v in sc.trains[0].vehicles for _ in range(v.count)]
    assert [d.length for d in drawn] == lengths and lengths[0] == 21.0 and lengths[1] == 15.0
    assert spec.box_of((f"{tr.name}.body", 2))[0] == (15.0, 3.0, 3.5)
    assert spec.box_of((tr.name, 3))[0] == (1.83, 3.0, 0.5)
    sc.trains[0].model = "coach"
    assert {d.vehicle(c) for c, d in enumerate(scene_from_scenario(sc).trains[0].per_car, start=1)} == {"coach"}


@pytest.mark.parametrize("wheels, model", [("railway", "auto"), ("railway", "locomotive"), ("coaster", "auto")])
def test_a_car_on_bogies_is_drawn_as_its_body_over_bogies_where_its_wheel_frames_are(wheels, model):
    """A car on bogies: its body drawn without running gear (nothing below the deck at the ends where
    a plain car's bogies or wheel assemblies are) and each wheel frame drawn as a bogie (a locomotive's
    with three axles, ``bogie_wheelbase`` long) or a coaster wheel assembly, centred on its pivot with
    its wheels on the rails ``rail_depth`` under the curve."""
    import dataclasses

    base = TrainSpec("b", 0, 2, length=14.0, width=3.0, height=3.5, cg_height=1.5, wheels=wheels, model=model)
    if wheels == "coaster":
        base = dataclasses.replace(base, length=2.4, width=1.2, height=1.0, cg_height=0.5, rider_height=0.9)
    spec = dataclasses.replace(base, bogies="two", bogie_spacing=0.6 * base.length, bogie_wheelbase=2.5)
    depth, gauge = 0.25, 1.435 if wheels == "railway" else 1.0
    plain = models.car_model(base, "car", gauge, depth, 0.07, False).quads.points
    body = models.car_model(spec, "carbody", gauge, depth, 0.07, False).quads.points
    gear = models.car_model(spec, "bogie", gauge, depth, 0.07, False, car=2).quads.points
    rail = -depth - base.cg_height
    assert plain[:, 2].min() < rail + 0.05 < body[:, 2].min()           # the body has no wheels
    # the frame's wheels on the rails (a coaster assembly's yoke reaches 0.16 m under the rail's tube)
    assert abs(gear[:, 2].min() - (-depth if wheels == "railway" else -depth - 2 * 0.07 - 0.16)) < 0.04
    assert np.all(np.abs(gear[:, 0]) < (2.0 if wheels == "coaster" else 0.5 * 2.5 + 0.8))
    assert abs(0.5 * (gear[:, 0].max() + gear[:, 0].min())) < 1e-9     # centred on its pivot
    if wheels == "railway":
        axles = 3 if spec.vehicle(1) == "locomotive" else 2
        assert models.model_key(spec, "bogie", 2) == ("bogie", axles == 3)
