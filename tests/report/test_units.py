"""trackrider.report.units: what the table and the report call a train's top speed."""
import pytest

from trackrider.report.units import Units, top_speed


def test_top_speed_is_the_largest_speed_either_way():
    # a coaster that rolled back a little: its top speed is forwards
    assert top_speed({"max_speed": 21.3, "min_speed": -2.0}) == (21.3, "max_speed")
    # a train running towards −s all the way: max_speed ≤ 0, its top speed is −min_speed
    assert top_speed({"max_speed": -0.0, "min_speed": -17.5}) == (17.5, "min_speed")
    assert top_speed({"max_speed": None, "min_speed": None}) == (None, None)
    assert top_speed({"max_speed": float("nan"), "min_speed": -3.0}) == (3.0, "min_speed")


def test_speeds_convert_to_the_shown_units():
    assert Units("metric").speed(10.0) == pytest.approx(36.0)
    assert Units("imperial").speed(1609.344 / 3600.0) == pytest.approx(1.0)
