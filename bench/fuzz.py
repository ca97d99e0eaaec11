"""The long seeded fuzz run, outside CI: 10 000 mutants of the bundled inputs and results.

    python bench/fuzz.py [--cases 10000] [--seed 20261124] [--chunk 1000] [--jobs 1] [--record FILE.jsonl]

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
import concurrent.futures
import json
import tempfile
import time
from pathlib import Path

import test_fuzz as fuzz


def _chunk_outcome(k, res, wall) -> dict:
    """What one chunk's worker answered, as a JSON-able record (see ``--record``)."""
    counts: collections.Counter = collections.Counter()
    bad, slowest = [], []
    for run in res["runs"]:           # valid mutants run for a few seconds: possible numbers
        why = fuzz.impossible(run)
        counts["run/" + ("unexpected" if why else "ok")] += 1
        if why:
            bad.append((["run", run["path"]], why))
    for c in res["cases"]:
        why = fuzz.unexpected(c)
        answer = "unexpected" if why else ("ok" if c["code"] == 0 else "error")
        counts[c["args"][0] + "/" + answer] += 1
        slowest.append((c["cpu"], " ".join(c["args"][:2])))
        if why:
            bad.append((c["args"], why))
    return {"chunk": k, "counts": dict(counts), "bad": bad, "slowest": sorted(slowest)[-3:],
            "peak_bytes": res["peak_bytes"], "wall": wall}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=fuzz.SEED)
    ap.add_argument("--chunk", type=int, default=1_000)
    ap.add_argument("--jobs", type=int, default=1, help="chunks run at once (one worker process each)")
    ap.add_argument("--record", metavar="FILE.jsonl",
                    help="append each chunk's outcome to FILE and skip the chunks it already holds for the "
                         "same --cases, --seed and --chunk: a long run can be stopped and resumed")
    args = ap.parse_args(argv)
    n_results = args.cases // 20
    n_curves = args.cases // 5
    n_scenarios = args.cases - n_curves - n_results
    key = {"cases": args.cases, "seed": args.seed, "chunk": args.chunk}
    done: dict[int, dict] = {}
    if args.record and Path(args.record).exists():
        for line in Path(args.record).read_text().splitlines():
            rec = json.loads(line)
            if rec.get("key") == key:
                done[rec["chunk"]] = rec
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="trackrider-fuzz-") as tmp:
        cases = fuzz.make_cases(Path(tmp), n_scenarios, n_curves, n_results, seed=args.seed)
        todo = [k for k in range(0, len(cases), args.chunk) if k // args.chunk not in done]
        if done:
            print(f"{len(done)} chunks already recorded in {args.record}", flush=True)

        def one(k):
            part = Path(tmp) / f"chunk{k // args.chunk:03d}"
            part.mkdir()
            res, wall = fuzz.run_cases(cases[k:k + args.chunk], part, timeout=6 * 3600)
            return _chunk_outcome(k // args.chunk, res, wall)

        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            for rec in pool.map(one, todo):
                done[rec["chunk"]] = rec
                if args.record:
                    with open(args.record, "a") as f:
                        f.write(json.dumps({"key": key, **rec}) + "\n")
                n_bad = sum(len(r["bad"]) for r in done.values())
                print(f"chunk {rec['chunk']} done: {len(done)}/{-(-len(cases) // args.chunk)} chunks, "
                      f"{time.perf_counter() - t0:.0f} s, {n_bad} unexpected", flush=True)
    counts: collections.Counter = collections.Counter()
    bad, slowest, peak = [], [], 0
    for rec in done.values():
        counts.update(rec["counts"])
        bad += rec["bad"]
        slowest += [tuple(x) for x in rec["slowest"]]
        peak = max(peak, rec["peak_bytes"])
    counts = collections.Counter({tuple(k.split("/")): v for k, v in counts.items()})
    n_done = sum(min(args.chunk, len(cases) - r["chunk"] * args.chunk) for r in done.values())
    cpu_wall = sum(r["wall"] for r in done.values())
    print(f"\nseed {args.seed}: {n_done} of {len(cases)} cases answered in {cpu_wall:.0f} s of workers' wall time, "
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
    return 1 if bad or n_done < len(cases) else 0


if __name__ == "__main__":
    raise SystemExit(main())
