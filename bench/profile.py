"""Where a real step goes: the compiled functions of a coasting train's steps, sampled by ``perf``.

    python bench/profile.py [--cars 1000] [--steps 20000]

``bench/stages.py`` runs each stage alone, again and again, so that a stage finds its data in the
caches; in a real step of a long train it does not (at 1000 cars a step's arrays outgrow the CPU's
caches and its tables of pages: docs/physics.md "Large pages"). This runs ``bench/solver.py``'s
coasting train (serial stages, one sample per 100 steps) under ``perf record`` (Linux; ``perf`` must
be installed and allowed to sample this process) and prints each compiled function's share of the
steps' samples, most first, and the µs per step that share stands for (CPU). Functions inlined into
another count as it (``kernels.step_chunk`` holds the next step's start and the copies of its track
rows; ``run_chunk`` the joint rows, the warm start and the bookkeeping). With ``--asm N`` it also
prints the N hottest instructions of the hottest function (the line after a load that waited on
memory is where such a wait shows).

perf needs the functions' addresses: the script compiles the kernel afresh in a temporary cache
folder (a few minutes), which leaves numba the compiled module's function names, and writes perf's
map of them (``/tmp/perf-PID.map``).
"""
from __future__ import annotations

import sys as _sys
from pathlib import Path as _Path

_sys.path.insert(0, str(_Path(__file__).resolve().parents[1]))  # measure this checkout, not an installed copy
_sys.path.insert(0, str(_Path(__file__).resolve().parent))

import argparse  # noqa: E402
import os  # noqa: E402
import re  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from collections import Counter  # noqa: E402


def child(n_cars: int, steps: int, code_file: str) -> None:
    """In the process perf samples: build, compile, map the functions, then step."""
    import ctypes
    import pickle

    import solver  # noqa: I001  (first: it puts the tests' analytic tracks on the path)
    import analytic
    from trackrider.physics import kernels as kn
    from trackrider.physics import state

    state.PARALLEL_BODIES = 10**9
    w = solver.build(n_cars, analytic.hilly_circle(R=500.0, amp=3.0, waves=12, n=40001))
    w.run(20, 20)
    d = getattr(kn.run_chunk, "dispatcher", None) or kn.run_chunk
    found = set()
    for cres in d.overloads.values():
        lib = cres.library
        for fn in lib._final_module.functions:
            if not fn.is_declaration:
                addr = lib.get_pointer_to_function(fn.name)
                if addr:
                    found.add((addr, fn.name))
    ents = sorted(found)
    code = {}
    with open(f"/tmp/perf-{os.getpid()}.map", "w") as f:
        for (a, name), (b, _) in zip(ents, ents[1:] + [(ents[-1][0] + 65536, "")]):
            f.write(f"{a:x} {b - a:x} {name}\n")
            code[name] = (a, ctypes.string_at(a, min(b - a, 1 << 20)))
    with open(code_file, "wb") as f:
        pickle.dump(code, f)
    print("STEPPING", flush=True)
    c0 = time.process_time()
    done = 0
    while done < steps:
        w.run(100, 100)
        done += 100
    print(f"CPU {(time.process_time() - c0) / done * 1e6:.2f} us/step", flush=True)


def short(name: str) -> str:
    """``module.function`` of a numba symbol (``_ZN10trackrider7physics7kernels9run_chunkB…``)."""
    parts, i = [], name.find("_ZN") + 3
    while 0 <= i < len(name) and name[i].isdigit():
        j = i
        while name[j].isdigit():
            j += 1
        k = int(name[i:j])
        parts.append(name[j:j + k])
        i = j + k
    return ".".join(parts[-2:]) if parts else name[:60]


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cars", type=int, default=1000)
    ap.add_argument("--steps", type=int, default=20000)
    ap.add_argument("--asm", type=int, default=0, help="print the N hottest instructions of the hottest function")
    a = ap.parse_args(argv)
    if shutil.which("perf") is None:
        print("perf is not installed: nothing to measure")
        return
    tmp = tempfile.mkdtemp(prefix="trackrider-profile-")
    env = dict(os.environ, NUMBA_CACHE_DIR=tmp, TRACKRIDER_CACHE_DIR=tmp)
    data, code_file = os.path.join(tmp, "perf.data"), os.path.join(tmp, "code.pkl")
    try:
        out = subprocess.run(["perf", "record", "-e", "cpu-clock", "-F", "2000", "-o", data, _sys.executable,
                              __file__, "--child", str(a.cars), str(a.steps), code_file],
                             env=env, capture_output=True, text=True)
        cpu = re.search(r"CPU ([0-9.]+) us/step", out.stdout)
        if cpu is None:
            print("the profiled run failed:", "\n".join((out.stderr + out.stdout).strip().splitlines()[-5:]))
            return
        script = subprocess.run(["perf", "script", "-i", data, "-F", "ip,sym"], capture_output=True, text=True).stdout
        syms, ips = Counter(), Counter()
        for line in script.splitlines():
            p = line.split(None, 1)
            if len(p) == 2 and "_ZN10trackrider" in p[1]:
                syms[short(p[1])] += 1
                ips[(short(p[1]), int(p[0], 16))] += 1
        total = sum(syms.values())
        step = float(cpu.group(1))
        print(f"{a.cars} cars, {a.steps} steps: {step:.1f} CPU µs per step; compiled functions' samples {total}, "
              f"load {os.getloadavg()[0]:.2f}")
        for name, n in syms.most_common():
            print(f"  {name:40s} {100 * n / total:5.1f} %  {step * n / total:8.2f} µs")
        if a.asm and syms:
            hot_asm(syms.most_common(1)[0][0], ips, code_file, a.asm)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def hot_asm(name: str, ips: Counter, code_file: str, n: int) -> None:
    """The ``n`` hottest instructions of ``name`` (objdump of its machine code), with the one before each."""
    import pickle

    if shutil.which("objdump") is None:
        return
    with open(code_file, "rb") as f:
        code = pickle.load(f)
    full = next((k for k in code if short(k) == name), None)
    if full is None:
        return
    addr, raw = code[full]
    with tempfile.NamedTemporaryFile(suffix=".bin") as f:
        f.write(raw)
        f.flush()
        asm = subprocess.run(["objdump", "-D", "-b", "binary", "-m", "i386:x86-64", f"--adjust-vma={addr}", f.name],
                             capture_output=True, text=True).stdout.splitlines()
    rows = [(int(m.group(1), 16), ln) for ln in asm if (m := re.match(r"\s*([0-9a-f]+):\s", ln))]
    mine = {ip: c for (s, ip), c in ips.items() if s == name}
    total = sum(mine.values())
    at = {ip: i for i, (ip, _) in enumerate(rows)}
    print(f"hottest instructions of {name}:")
    for ip, c in sorted(mine.items(), key=lambda x: -x[1])[:n]:
        i = at.get(ip)
        if i is not None:
            before = rows[i - 1][1].split(None, 1)[-1].strip()
            print(f"  {100 * c / total:5.1f} %  {rows[i][1].strip()}   (before it: {before})")


if __name__ == "__main__":
    if len(_sys.argv) > 1 and _sys.argv[1] == "--child":
        child(int(_sys.argv[2]), int(_sys.argv[3]), _sys.argv[4])
    else:
        main()
