"""Cars in SIMD lanes: what numba vectorises of the track's frame evaluation, and what it saves.

    python bench/lanes.py

A step's per-car work is straight-line arithmetic written one car at a time (docs/physics.md,
"Speed and compile time"); a CPU's vector registers hold 4 (AVX2) or 8 (AVX-512) doubles. This
probe takes the largest piece of the integration, ``curves.compact.eval_track`` (the frame at
a car's s from two rows of the track's table), and times for 8 and 1000 cars at random s on a
closed track, in ns per car:

* ``scalar``: ``eval_track`` car by car, as the kernels call it;
* ``lanes, table read in place``: the same arithmetic over a batch of ``LANES`` cars, in one
  loop of ``LANES`` iterations that reads the two rows of each car from the table itself;
* ``lanes, rows copied into a buffer``: each batch first copies its cars' two rows into one flat
  buffer, lane by lane (``buf[k * LANES + lane]``), and the arithmetic reads and writes only that
  buffer; the frames are then copied back car by car (``… no copy back``: left in the buffer, as
  for a consumer that reads lanes).

and counts the packed instructions (ymm / zmm registers) in each batched kernel's machine code,
and checks each batched result is bitwise the scalar one (the same operations in the same order;
``fastmath={"contract"}`` fuses the same multiply-adds in a lane as in a scalar).

What it shows on the 2-core AMD EPYC (AVX-512) with numba 0.68 (load ~1): only the buffer form
vectorises (150 zmm instructions, none in the in-place form), and only with
``error_model="numpy"`` as the kernels have it (Python's error model checks each division for zero,
a branch per lane). numba passes each array as a pointer that may alias any other, so LLVM
vectorises a loop only where it can prove the loads and stores apart: within one array at constant
offsets (a loop of a constant trip count over a flat buffer), not a table read at a car's own row
(a gather) beside stores elsewhere. Per car, 8 cars / 1000 cars: scalar 32.0 / 36.8 ns, in place
35.0 / 39.2, buffer 29.9 / 35.7, buffer without the copy back 22.8 / 27.1: the arithmetic is a few
ns; copying 40 numbers per car in (and 20 back) is most of what is left. Cars in lanes pay only
where their state stays in lanes from stage to stage.
"""
from __future__ import annotations

import sys as _sys
from pathlib import Path as _Path

_sys.path.insert(0, str(_Path(__file__).resolve().parents[1]))  # measure this checkout, not an installed copy

import re  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

from trackrider.curves.compact import NCOL, eval_track, segment, wrap_arc_length  # noqa: E402
from trackrider.jit import njit  # noqa: E402

LANES = 8
U0 = 2 * NCOL * LANES          # each lane's u in the buffer, after the two rows of every lane
O0 = U0 + LANES                # the frames, column by column

# eval_track's arithmetic for lane i, its inputs as A(k) (row a, column k) and B(k) (row a + 1)
_ARITH = """
        u = buf[U0 + i]
        u2 = u * u
        u3 = u2 * u
        h00 = 2.0 * u3 - 3.0 * u2 + 1.0
        h10 = (u3 - 2.0 * u2 + u) * ds
        h01 = -2.0 * u3 + 3.0 * u2
        h11 = (u3 - u2) * ds
        tn = 0.0
        p0 = h00 * A(0) + h10 * A(3) + h01 * B(0) + h11 * B(3)
        t0 = h00 * A(3) + h10 * A(16) + h01 * B(3) + h11 * B(16)
        tn += t0 * t0
        p1 = h00 * A(1) + h10 * A(4) + h01 * B(1) + h11 * B(4)
        t1 = h00 * A(4) + h10 * A(17) + h01 * B(4) + h11 * B(17)
        tn += t1 * t1
        p2 = h00 * A(2) + h10 * A(5) + h01 * B(2) + h11 * B(5)
        t2 = h00 * A(5) + h10 * A(18) + h01 * B(5) + h11 * B(18)
        tn += t2 * t2
        tn = 1.0 / np.sqrt(tn)
        t0 *= tn
        t1 *= tn
        t2 *= tn
        oa0, oa1, oa2, ob0, ob1, ob2 = A(12), A(13), A(14), B(12), B(13), B(14)
        na0, na1, na2, nb0, nb1, nb2 = A(6), A(7), A(8), B(6), B(7), B(8)
        n0 = h00 * na0 + h10 * (oa1 * na2 - oa2 * na1) + h01 * nb0 + h11 * (ob1 * nb2 - ob2 * nb1)
        n1 = h00 * na1 + h10 * (oa2 * na0 - oa0 * na2) + h01 * nb1 + h11 * (ob2 * nb0 - ob0 * nb2)
        n2 = h00 * na2 + h10 * (oa0 * na1 - oa1 * na0) + h01 * nb2 + h11 * (ob0 * nb1 - ob1 * nb0)
        d = n0 * t0 + n1 * t1 + n2 * t2
        n0 -= d * t0
        n1 -= d * t1
        n2 -= d * t2
        nn = 1.0 / np.sqrt(n0 * n0 + n1 * n1 + n2 * n2)
        n0 *= nn
        n1 *= nn
        n2 *= nn
        w = 1.0 - u
        out = (p0, p1, p2, t0, t1, t2, n0, n1, n2, t1 * n2 - t2 * n1, t2 * n0 - t0 * n2, t0 * n1 - t1 * n0,
               w * A(12) + u * B(12), w * A(13) + u * B(13), w * A(14) + u * B(14),
               w * A(15) + u * B(15), w * A(16) + u * B(16), w * A(17) + u * B(17),
               w * A(18) + u * B(18), w * A(19) + u * B(19))
"""
_STORE = "".join(f"        buf[O0 + {k} * LANES + i] = out[{k}]\n" for k in range(NCOL))


def _lane_kernel(name, args, prologue, a, b):
    """The lane loop ``name(args)``: ``_ARITH`` with A(k), B(k) written as ``a``, ``b`` (format strings of k)."""
    body = re.sub(r"A\((\d+)\)", lambda m: a.format(k=m.group(1)), _ARITH)
    body = re.sub(r"B\((\d+)\)", lambda m: b.format(k=m.group(1)), body)
    src = f"def {name}({args}):\n    for i in range(LANES):\n{prologue}{body}{_STORE}"
    scope = {"np": np, "LANES": LANES, "NCOL": NCOL, "U0": U0, "O0": O0}
    exec(compile(src, f"<bench/lanes.py {name}>", "exec"), scope)   # noqa: S102 - the probe's own template
    return njit(error_model="numpy", inline="always")(scope[name])


# the rows copied into the buffer: row a's column k of lane i at k * LANES + i, row a + 1's after them
_from_buffer = _lane_kernel("from_buffer", "buf, ds", "", "buf[{k} * LANES + i]", "buf[(NCOL + {k}) * LANES + i]")
_in_place = _lane_kernel("in_place", "buf, rows, data, ds", "        ra = rows[i]\n", "data[ra, {k}]",
                         "data[ra + 1, {k}]")


@njit(error_model="numpy")
def _probe_in_place(buf, rows, data, ds):
    _in_place(buf, rows, data, ds)


@njit(error_model="numpy")
def _probe_from_buffer(buf, ds):
    _from_buffer(buf, ds)


@njit(error_model="numpy")
def scalar(reps, data, ds, length, s, out):
    nrows = data.shape[0]
    for _ in range(reps):
        for c in range(s.shape[0]):
            eval_track(data, 0, nrows, ds, length, True, s[c], out[c])


@njit(error_model="numpy", inline="always")
def _lane_rows(c0, data, ds, length, s, buf, rows, copy):
    """Lane i's u (and its row in ``rows``; with ``copy`` its two rows into ``buf``) for car c0 + i
    (the last batch repeats its last car)."""
    nrows = data.shape[0]
    for i in range(LANES):
        c = min(c0 + i, s.shape[0] - 1)
        a, u = segment(wrap_arc_length(s[c], length, True), ds, nrows, 0)
        buf[U0 + i] = u
        rows[i] = a
        if copy:
            for k in range(NCOL):
                buf[k * LANES + i] = data[a, k]
                buf[(NCOL + k) * LANES + i] = data[a + 1, k]


@njit(error_model="numpy")
def batched(reps, mode, data, ds, length, s, out, buf, rows):
    """mode 0: table read in place; 1: rows copied into the buffer; 2: … and the frames left there."""
    n = s.shape[0]
    for _ in range(reps):
        for c0 in range(0, n, LANES):
            _lane_rows(c0, data, ds, length, s, buf, rows, mode > 0)
            if mode == 0:
                _in_place(buf, rows, data, ds)
            else:
                _from_buffer(buf, ds)
            if mode < 2:
                for i in range(min(LANES, n - c0)):
                    for k in range(NCOL):
                        out[c0 + i, k] = buf[O0 + k * LANES + i]
            else:
                out[c0 // LANES, 0] += buf[O0]     # one read, so the batch is not optimised away


def _packed(asm):
    return (len(re.findall(r"\bv\w+pd\s+[^\n]*%ymm", asm)), len(re.findall(r"\bv\w+pd\s+[^\n]*%zmm", asm)))


def main():
    rng = np.random.default_rng(1)
    nrows, ds = 30001, 0.1
    data = rng.normal(size=(nrows, NCOL))
    data[:, 3:6] /= np.linalg.norm(data[:, 3:6], axis=1)[:, None]
    length = ds * (nrows - 1)
    labels = ("scalar", "lanes, table read in place", "lanes, rows copied into a buffer", "... no copy back")
    print(f"eval_track in lanes of {LANES} cars: ns per car (median of 5); packed instructions (ymm, zmm) in "
          "each kernel's machine code; bitwise equal to scalar")
    for n in (8, 1000):
        s = rng.uniform(0.0, length, n)
        ref = np.zeros((n, NCOL))
        outs = [np.zeros((n, NCOL)) for _ in range(3)]
        buf, rows = np.zeros(O0 + NCOL * LANES), np.zeros(LANES, np.int64)
        reps = 2_000_000 // n
        scalar(1, data, ds, length, s, ref)
        for mode in range(3):
            batched(1, mode, data, ds, length, s, outs[mode], buf, rows)
        times = [[] for _ in range(4)]
        for _ in range(5):
            t0 = time.perf_counter()
            scalar(reps, data, ds, length, s, ref)
            times[0].append(time.perf_counter() - t0)
            for mode in range(3):
                t0 = time.perf_counter()
                batched(reps, mode, data, ds, length, s, outs[mode], buf, rows)
                times[mode + 1].append(time.perf_counter() - t0)
        print(f"{n} cars:")
        for k, label in enumerate(labels):
            same = "" if k in (0, 3) else f"  bitwise equal: {np.array_equal(outs[k - 1], ref)}"
            print(f"  {label:34s} {statistics.median(times[k]) / reps / n * 1e9:6.1f} ns/car{same}")
    asm = batched.inspect_asm(batched.signatures[0])
    print("packed instructions (ymm, zmm): the batched kernel %d, %d" % _packed(asm), end="")
    _probe_in_place(buf, rows, data, ds)
    _probe_from_buffer(buf, ds)
    print("; the lane loop reading the table in place %d, %d" % _packed(_probe_in_place.inspect_asm(
        _probe_in_place.signatures[0])), end="")
    print("; reading the buffer %d, %d" % _packed(_probe_from_buffer.inspect_asm(_probe_from_buffer.signatures[0])))


if __name__ == "__main__":
    main()
