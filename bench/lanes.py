"""Cars in SIMD lanes: what numba vectorises of the track's frame evaluation, and what it saves.

    python bench/lanes.py

A step's per-car work is straight-line arithmetic written one car at a time (docs/physics.md,
"Speed and compile time"); a CPU's vector registers hold 4 (AVX2) or 8 (AVX-512) doubles. This
probe takes the largest piece of the integration, ``curves.compact.eval_track`` (the frame at
a car's s from two rows of the track's table), and times for 8 and 1000 cars at random s on a
closed track, in ns per car:

* ``scalar``: ``eval_track`` car by car, as the kernels call it;
* ``lanes, table read in place``: ``eval_track``'s own statements after its row lookup (read from
  its source, its loops unrolled: ``_Lanes``) for a batch of ``LANES`` cars, in one loop of
  ``LANES`` iterations that reads the two rows of each car from the table itself;
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

import ast  # noqa: E402
import copy  # noqa: E402
import inspect  # noqa: E402
import re  # noqa: E402
import statistics  # noqa: E402
import textwrap  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

from trackrider.curves import compact  # noqa: E402
from trackrider.curves.compact import NCOL, eval_track, segment, wrap_arc_length  # noqa: E402
from trackrider.jit import njit  # noqa: E402

LANES = 8
U0 = 2 * NCOL * LANES          # each lane's u in the buffer, after the two rows of every lane
O0 = U0 + LANES                # the frames, column by column

class _Lanes(ast.NodeTransformer):
    """``eval_track``'s body as lane ``i``'s: its loops over constant ranges unrolled, ``s`` and its
    row lookup replaced by lane ``i``'s ``u`` and row (``prologue``), ``data[a, c]`` and ``data[b, c]``
    read as ``row_a`` and ``row_b`` (format strings of c), ``out[c]`` as the lane's column c in the
    buffer."""

    def __init__(self, row_a, row_b):
        self.row_a, self.row_b, self.k = row_a, row_b, {}

    def visit_For(self, node):
        stop = [eval(ast.unparse(a), vars(compact)) for a in node.iter.args]   # noqa: S307 - constants
        body = []
        for k in range(*stop):
            self.k[node.target.id] = k
            body += [self.visit(copy.deepcopy(n)) for n in node.body]
        del self.k[node.target.id]
        return body

    def visit_Name(self, node):
        if node.id in self.k:
            return ast.Constant(self.k[node.id])
        if node.id.startswith("C_") or node.id == "NCOL":
            return ast.Constant(getattr(compact, node.id))
        return node

    def visit_Subscript(self, node):
        self.generic_visit(node)
        if ast.unparse(node.value) == "data":          # data[a, c] or data[b, c]
            row, col = node.slice.elts
            text = {"a": self.row_a, "b": self.row_b}[ast.unparse(row)]
        else:                                           # out[c]
            col, text = node.slice, "buf[O0 + {c} * LANES + i]"
        return ast.parse(text.format(c=eval(ast.unparse(col))), mode="eval").body   # noqa: S307 - constants


def _lane_kernel(name, args, prologue, row_a, row_b):
    """The lane loop ``name(args)``: ``eval_track``'s own statements after its row lookup, for each lane
    ``i`` (``_Lanes``)."""
    fn = ast.parse(textwrap.dedent(inspect.getsource(eval_track.py_func))).body[0]
    start = next(k for k, n in enumerate(fn.body) if ast.unparse(n) == "b = a + 1")
    lanes, body = _Lanes(row_a, row_b), []
    for n in fn.body[start + 1:]:
        v = lanes.visit(n)
        body += v if isinstance(v, list) else [v]
    src = (f"def {name}({args}):\n    for i in range(LANES):\n{prologue}"
           + textwrap.indent("\n".join(ast.unparse(n) for n in body), " " * 8) + "\n")
    scope = {"np": np, "LANES": LANES, "NCOL": NCOL, "U0": U0, "O0": O0}
    exec(compile(src, f"<bench/lanes.py {name}>", "exec"), scope)   # noqa: S102 - eval_track's own statements
    return njit(error_model="numpy", inline="always")(scope[name])


# the rows copied into the buffer: row a's column c of lane i at c * LANES + i, row a + 1's after them
_from_buffer = _lane_kernel("from_buffer", "buf, ds", "        u = buf[U0 + i]\n", "buf[{c} * LANES + i]",
                            "buf[(NCOL + {c}) * LANES + i]")
_in_place = _lane_kernel("in_place", "buf, rows, data, ds", "        u = buf[U0 + i]\n        a = rows[i]\n",
                         "data[a, {c}]", "data[a + 1, {c}]")


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
