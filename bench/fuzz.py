"""The long seeded fuzz run, outside CI: 10 000 mutants of the bundled inputs and results.

    python bench/fuzz.py [--cases 10000] [--seed 20261124] [--chunk 1000]

The cases are those of ``tests/test_fuzz.py`` (its CI test runs a few hundred): mutated
scenarios through ``validate`` (75 %), mutated curve files through ``curve`` (20 %) and
mutated results folders through ``plot`` and ``report`` (5 %, which must agree; what they
refuse ``render`` must refuse too, where the machine renders), and in each
chunk a dozen valid scenario mutants run for 3 s (finite figures, possible speeds). They run
``--chunk`` at a time, each chunk in a worker process of its own (its peak memory is the
largest any of its cases needed). Every case must be answered: ``ok`` (exit 0, only
``warning:`` lines) or one ``error:`` line with exit 2, within ``CASE_LIMIT_S`` of CPU, with the
worker's peak memory under ``MEMORY_LIMIT``. Prints the answers by command and kind, the
slowest cases, the peak memory, and every unexpected outcome (there should be none); exits
1 when there is one. The same seed gives the same cases.

Set ``TRACKRIDER_CACHE_DIR`` to a private directory on a shared machine.
"""
from __future__ import annotations

import sys as _sys
from pathlib import Path as _Path

_sys.path.insert(0, str(_Path(__file__).resolve().parents[1]))  # this checkout, not an installed copy
_sys.path.insert(0, str(_Path(__file__).resolve().parents[1] / "tests"))

import argparse
import collections
import tempfile
import time
from pathlib import Path

import test_fuzz as fuzz


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=fuzz.SEED)
    ap.add_argument("--chunk", type=int, default=1_000)
    args = ap.parse_args(argv)
    n_results = args.cases // 20
    n_curves = args.cases // 5
    n_scenarios = args.cases - n_curves - n_results
    counts: collections.Counter = collections.Counter()
    bad, slowest, peak = [], [], 0
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="trackrider-fuzz-") as tmp:
        cases = fuzz.make_cases(Path(tmp), n_scenarios, n_curves, n_results, seed=args.seed)
        for k in range(0, len(cases), args.chunk):
            part = Path(tmp) / f"chunk{k // args.chunk:03d}"
            part.mkdir()
            res, wall = fuzz.run_cases(cases[k:k + args.chunk], part, timeout=6 * 3600)
            peak = max(peak, res["peak_bytes"])
            for run in res["runs"]:       # valid mutants run for a few seconds: possible numbers
                counts[("run", "unexpected" if fuzz.impossible(run) else "ok")] += 1
                if fuzz.impossible(run):
                    bad.append((["run", run["path"]], fuzz.impossible(run)))
            for c in res["cases"]:
                why = fuzz.unexpected(c)
                answer = "unexpected" if why else ("ok" if c["code"] == 0 else "error")
                counts[(c["args"][0], answer)] += 1
                slowest.append((c["cpu"], " ".join(c["args"][:2])))
                if why:
                    bad.append((c["args"], why))
            print(f"{min(k + args.chunk, len(cases))}/{len(cases)} cases, {time.perf_counter() - t0:.0f} s, "
                  f"{len(bad)} unexpected", flush=True)
    print(f"\nseed {args.seed}: {len(cases)} cases in {time.perf_counter() - t0:.0f} s, "
          f"worker peak {peak / 2**20:.0f} MB (limit {fuzz.MEMORY_LIMIT / 2**20:.0f} MB)")
    for command in ("validate", "curve", "results", "run"):
        print(f"  {command:9s} ok {counts[(command, 'ok')]:5d}   error {counts[(command, 'error')]:5d}   "
              f"unexpected {counts[(command, 'unexpected')]}")
    print("  slowest: " + ", ".join(f"{w:.1f} s CPU ({what.split('/')[-1]})" for w, what in sorted(slowest)[-3:]))
    print(f"{len(bad)} unexpected outcomes")
    for args_, why in bad:
        print("  ", args_, why)
    if peak >= fuzz.MEMORY_LIMIT:
        print("worker peak memory above the limit")
        return 1
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
