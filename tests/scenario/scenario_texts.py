"""Scenario texts shared by the scenario tests (a uniquely named module: every test folder has its own conftest)."""
from __future__ import annotations

import textwrap

#: a small valid scenario: a 60 m straight 10 m up, one 2-car train
BASE = textwrap.dedent(
    """
    [simulation]
    duration = 1.0
    dt = 0.001
    record_hz = 50

    [[track]]
    name = "main"
    segments = [{type = "start", position = [0.0, 0.0, 10.0]}, {type = "straight", length = 60.0}]

    [[train]]
    name = "red"
    track = "main"
    cars = 2
    start_s = 20.0
    start_speed = 3.0
    [train.car]
    mass = 500.0

    [[section]]
    type = "brake"
    track = "main"
    from = 40.0
    to = 50.0
    max_force = 20000.0

    [[body]]
    name = "bob"
    mass = 2.0
    size = [0.2, 0.2, 0.2]
    position = [0.0, 3.0, 5.0]

    [[joint]]
    type = "distance"
    a = "bob"
    b = "world"
    anchor_b = [0.0, 3.0, 8.0]
    """
)
