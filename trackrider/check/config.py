"""The scenario's ``[check]`` table: an envelope to check every run against, and the design checks' thresholds."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from trackrider.check.design import G_STEP, JERK, ROLL_RATE_STEP
from trackrider.settings import STRING, setting


@dataclass
class CheckConfig:
    """``[check]`` (docs/scenarios.md, docs/checking.md).

    Parameters
    ----------
    envelope : str or None
        An envelope file (path relative to the scenario): ``run`` checks the ride against it.
    restraint : str or None
        The envelope's restraint class to use (``[restraint.NAME]`` in the envelope file).
    g_step, roll_rate_step, jerk : float
        Thresholds of the design checks: a G step at a joint (g), a roll-rate step (°/s), the jerk
        along the track (g/s), all at the design speed.
    """

    envelope: str | None = setting(None, kind=STRING)
    restraint: str | None = setting(None, kind=STRING)
    g_step: float = setting(G_STEP, unit="g", ge=0, le=100)
    roll_rate_step: float = setting(ROLL_RATE_STEP, unit="°/s", ge=0, le=1e6)
    jerk: float = setting(JERK, unit="g/s", ge=0, le=1e6)
    #: the loader's: the envelope file's absolute path and the loaded ``Envelope``
    envelope_path: Any = None
    loaded: Any = None


def check_config(scenario) -> CheckConfig:
    """The scenario's ``[check]`` (defaults when it has none)."""
    return getattr(scenario, "check", None) or CheckConfig()


def load_check(table: dict, scenario_path, error) -> CheckConfig:
    """``[check]`` of a scenario file, its envelope loaded (errors name the envelope file and key);
    ``error(where, message)`` makes the scenario's own errors."""
    from pathlib import Path

    from trackrider.check.envelope import load_envelope
    from trackrider.settings import build

    cfg = build(CheckConfig, table, "check", scenario_path, from_file=True)
    if cfg.envelope is None:
        if cfg.restraint is not None:
            raise error("check.restraint", "applies to an envelope: give check.envelope too")
        return cfg
    path = (Path(scenario_path).parent / cfg.envelope).resolve()
    if not path.exists():
        raise error("check.envelope", f"envelope file not found: {path}")
    env = load_envelope(path)
    if cfg.restraint is not None:
        if cfg.restraint not in env.restraints:
            raise error("check.restraint", f"the envelope {path.name} has no restraint class {cfg.restraint!r} "
                        f"(classes: {', '.join(env.restraints) or 'none'})")
        env = load_envelope(path, cfg.restraint)
    cfg.envelope_path, cfg.loaded = path, env
    return cfg
