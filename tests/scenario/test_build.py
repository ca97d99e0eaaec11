"""build_world: a scenario's tables → World calls; only bad input becomes an ``error:`` line."""
from __future__ import annotations

import pytest

from tests.scenario.scenario_texts import BASE
from trackrider.errors import InputError
from trackrider.scenario import build_world, load_scenario


def test_an_input_error_of_the_world_names_the_file_and_table(write):
    path = write(BASE + '[[body]]\nname = "box"\nmass = 10.0\nsize = [0.2, 0.2, 0.2]\nposition = [0.0, 0.0, 30.0]\n'
                 '[[joint]]\ntype = "ball"\na = "red:1"\nb = "box"\n')
    with pytest.raises(InputError, match=r"s\.toml: joint\[1\]: the ball joint is violated at the start: its ends start"):
        build_world(load_scenario(path))


def test_a_bug_in_the_world_is_a_traceback_not_bad_input(write, monkeypatch):
    from trackrider.physics import World

    def broken(self, *args, **kwargs):
        raise TypeError("a bug in World.add_train")

    monkeypatch.setattr(World, "add_train", broken)
    with pytest.raises(TypeError, match="a bug in World.add_train"):
        build_world(load_scenario(write(BASE)))
