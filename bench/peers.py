"""trackrider's step beside MuJoCo's free-body chain, interleaved in one process.

    python bench/peers.py [--quick] [--cars 7,1000]

trackrider: ``bench/solver.py``'s train (600 kg cars, 2 m long, distance couplers 0.5 m, coasting
at 12 m/s on the hilly circle of R 500 m, dt = 1 ms): 5 track rows per car and one coupler row per
coupling, solved exactly each step.

MuJoCo (optional: ``pip install mujoco``; skipped with a line saying so when it cannot be
imported): the same number of 600 kg boxes, each on a free joint, neighbours joined by a
``connect`` equality (a ball joint: 3 rows per coupling) at the coupler points, no contacts,
gravity, dt = 1 ms, its default solver (Newton). That is the cheapest faithful stand-in MuJoCo has
for a train: it has no track joint, so the train here is a free chain (it falls; the cost per step
does not depend on where it is).

Both are timed in blocks of steps, alternating trackrider, MuJoCo, trackrider, … (``--rounds``
each), and the medians of CPU µs per step are printed with the median of the rounds' ratios. A block is long (200 000 car
steps: ~50 ms of trackrider) so that neither engine's cost per call from Python counts: a block is
one ``World.run`` (its ~0.25 ms of set-up spread over the block) and one ``mujoco.mj_step(m, d,
nstep=k)`` (MuJoCo's own loop; a Python loop of ``mj_step`` adds ~2 µs per step, a quarter of
MuJoCo's step at 7 cars). Both run on one thread:
trackrider's serial stages (``state.PARALLEL_BODIES`` raised here), as MuJoCo's step; a long
train's stages on both cores cost more CPU in all and less wall-clock time (``bench/solver.py
--threads``).
"""
from __future__ import annotations

import sys as _sys
from pathlib import Path as _Path

_sys.path.insert(0, str(_Path(__file__).resolve().parents[1]))  # measure this checkout, not an installed copy
_sys.path.insert(0, str(_Path(__file__).resolve().parent))

import argparse
import statistics
import time

import solver  # noqa: E402  (bench/solver.py: its train and its cache folder)

CAR_MASS, CAR_LENGTH, GAP, DT = 600.0, 2.0, 0.5, 1e-3


def mujoco_chain_xml(n_cars: int) -> str:
    """MJCF of ``n_cars`` 600 kg boxes (2 × 1.2 × 1 m) in a row along x, each on a free joint,
    neighbours joined by a ``connect`` equality at the coupler point midway between them."""
    pitch = CAR_LENGTH + GAP
    bodies = "\n".join(
        f'    <body name="c{i}" pos="{-i * pitch} 0 1"><freejoint/>'
        f'<geom type="box" size="{CAR_LENGTH / 2} 0.6 0.5" mass="{CAR_MASS}" contype="0" conaffinity="0"/></body>'
        for i in range(n_cars))
    links = "\n".join(f'    <connect body1="c{i}" body2="c{i + 1}" anchor="{-pitch / 2} 0 0"/>'
                      for i in range(n_cars - 1))
    return (f'<mujoco>\n  <option timestep="{DT}" gravity="0 0 -9.81"/>\n  <worldbody>\n{bodies}\n'
            f'  </worldbody>\n  <equality>\n{links}\n  </equality>\n</mujoco>\n')


def _mujoco():
    try:
        import mujoco
        mujoco.MjModel.from_xml_string(mujoco_chain_xml(2))
    except Exception as exc:  # noqa: BLE001 - an absent or broken optional dependency: skip it
        return None, f"{type(exc).__name__}: {exc}".splitlines()[0]
    return mujoco, None


def _cpu_per_step(step, steps: int) -> float:
    c0 = time.process_time()
    step(steps)
    return (time.process_time() - c0) / steps


def compare(n_cars: int, steps: int, rounds: int, track, mujoco) -> tuple[float, float | None, float | None]:
    """Median CPU µs per step of trackrider and (None without it) MuJoCo, ``rounds`` interleaved
    blocks of ``steps`` steps each, after a warm-up block; and the median of each round's ratio
    MuJoCo/trackrider (its two blocks run one right after the other: on a machine whose speed drifts,
    steadier than the ratio of the medians)."""
    w = solver.build(n_cars, track)
    w.run(20, 20)  # compile (or load) and settle
    tr_step = lambda k: w.run(k, k)  # noqa: E731
    mj_step = None
    if mujoco is not None:
        m = mujoco.MjModel.from_xml_string(mujoco_chain_xml(n_cars))
        d = mujoco.MjData(m)

        def mj_step(k):
            try:
                mujoco.mj_step(m, d, nstep=k)   # MuJoCo's own loop of k steps
            except TypeError:   # (a MuJoCo without nstep)
                for _ in range(k):
                    mujoco.mj_step(m, d)

        mj_step(20)
    tr, mj = [], []
    for _ in range(rounds):
        tr.append(_cpu_per_step(tr_step, steps))
        if mj_step is not None:
            mj.append(_cpu_per_step(mj_step, steps))
    if not mj:
        return statistics.median(tr) * 1e6, None, None
    return (statistics.median(tr) * 1e6, statistics.median(mj) * 1e6,
            statistics.median(b / a for a, b in zip(tr, mj)))


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer steps and rounds")
    ap.add_argument("--cars", default="7,100,1000", help="train lengths, comma-separated")
    ap.add_argument("--rounds", type=int, default=None, help="interleaved blocks per engine (default 9; quick 3)")
    args = ap.parse_args(argv)
    import analytic

    from trackrider.physics import state

    state.PARALLEL_BODIES = 10 ** 9   # one thread, as MuJoCo (the module docstring)
    mujoco, why = _mujoco()
    rounds = args.rounds or (3 if args.quick else 9)
    track = analytic.hilly_circle(R=500.0, amp=3.0, waves=12, n=40001)
    print(f"trackrider vs MuJoCo free-body chain: CPU µs/step, medians of {rounds} interleaved blocks, dt = 1 ms; "
          "MuJoCo/trackrider: the median of the rounds' ratios")
    if mujoco is None:
        print(f"MuJoCo skipped: it cannot be imported here ({why})")
    print(f"{'cars':>5} {'trackrider':>11} {'MuJoCo':>9} {'MuJoCo/trackrider':>18}")
    for n in (int(v) for v in args.cars.split(",")):
        steps = max(100, (200_000 if not args.quick else 40_000) // n)
        tr, mj, r = compare(n, steps, rounds, track, mujoco)
        ratio = f"{r:>18.2f}" if mj is not None else f"{'-':>18}"
        print(f"{n:>5} {tr:>11.1f} {mj if mj is not None else float('nan'):>9.1f} {ratio}")


if __name__ == "__main__":
    main()
