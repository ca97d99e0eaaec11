"""The kernel cache (trackrider.jit_cache) stays trustworthy: a process killed while it writes the
cache, two processes compiling into one folder at once, and a damaged entry leave a cache from which
a later run gets the right results (a damaged entry compiles again; nothing partial is loaded)."""
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from trackrider import cache

ROOT = Path(__file__).resolve().parents[1]

# a kernel compiled for two signatures, allocating (so numba's runtime helpers are needed, and are
# compiled and saved in the kernel folder too); the process prints its results, then how many
# signatures were loaded from the cache and how many compiled
_CHILD = textwrap.dedent("""
    import os, signal, sys, time
    kill_at, how = int(sys.argv[1]), sys.argv[2]
    go = os.environ.get("GO_FILE")
    while go and not os.path.exists(go):    # start compiling together with the other process
        time.sleep(0.01)
    replace, writes = os.replace, [0]

    def killing_replace(src, dst):          # every cache file is written as a temporary one, then renamed
        n = writes[0]
        writes[0] += 1
        if n == kill_at and how == "during":     # killed half-way through writing it
            with open(src, "r+b") as f:
                f.truncate(os.path.getsize(src) // 2)
            os.kill(os.getpid(), signal.SIGKILL)
        replace(src, dst)
        if n == kill_at and how == "after":      # killed right after it is in place
            os.kill(os.getpid(), signal.SIGKILL)

    os.replace = killing_replace
    import numpy as np
    from trackrider.jit import njit

    @njit(cache=True)
    def ramp(n, k):
        return np.arange(n) * k + 1

    order = (2.0, 3) if sys.argv[3:] != ["reversed"] else (3, 2.0)
    print([float(ramp(4, k).sum()) for k in order])
    print(sum(ramp.stats.cache_hits.values()), sum(ramp.stats.cache_misses.values()), writes[0])
    """)


def _start(cache_dir, *args, go=None):
    env = dict(os.environ, TRACKRIDER_CACHE_DIR=str(cache_dir))
    env.pop("NUMBA_DISABLE_JIT", None)
    if go is not None:
        env["GO_FILE"] = str(go)
    return subprocess.Popen([sys.executable, "-c", _CHILD, *map(str, args)], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _finish(proc):
    out, err = proc.communicate(timeout=600)
    return proc.returncode, out.split("\n"), err


def _right(lines, order=(2.0, 3)):
    sums = {2.0: 4 * 1 + 2.0 * 6, 3: 4 * 1 + 3 * 6}
    return lines[0] == str([float(sums[k]) for k in order])


def _in_batches(procs_of, items, width=4):
    done = []
    for i in range(0, len(items), width):
        done += [_finish(p) for p in [procs_of(item) for item in items[i:i + width]]]
    return done


@pytest.mark.slow
def test_a_process_killed_at_any_point_of_writing_the_cache_leaves_one_that_runs_right(tmp_path):
    """The first process's cache writes, in order: the remembered sources hash, numba's runtime
    helpers (data, index), and each of two signatures of a kernel (data, index). A process killed
    while writing each of them (half the file written) and right after each is in place leaves a
    cache from which the next process gets the right results, and after which the cache is whole."""
    code, lines, err = _finish(_start(tmp_path / "whole", -1, "none"))
    assert code == 0 and _right(lines), err
    writes = int(lines[1].split()[2])
    assert lines[1].split()[:2] == ["0", "2"] and writes >= 6          # compiled, and saved: 6 or 7 files
    points = [(n, how) for n in range(writes) for how in ("during", "after")]
    killed = _in_batches(lambda p: _start(tmp_path / f"{p[0]}-{p[1]}", p[0], p[1]), points)
    assert all(code == -9 for code, _, _ in killed), [k[2][-500:] for k in killed if k[0] != -9]
    after = _in_batches(lambda p: _start(tmp_path / f"{p[0]}-{p[1]}", -1, "none"), points)
    for point, (code, lines, err) in zip(points, after):
        assert code == 0 and _right(lines), (point, err)
    healed = _in_batches(lambda p: _start(tmp_path / f"{p[0]}-{p[1]}", -1, "none"), points)
    for point, (code, lines, err) in zip(points, healed):
        assert code == 0 and _right(lines) and lines[1].split()[:2] == ["2", "0"], (point, lines, err)
    assert not [p for p in tmp_path.rglob("*") if ".tmp." in p.name and p.stat().st_size == 0]


def test_two_processes_compiling_into_one_empty_cache_at_once(tmp_path):
    """A sweep's workers compile into one folder at once, here each kernel's two signatures in the
    opposite order: neither fails, and a later process loads both signatures, right."""
    go = tmp_path / "go"
    procs = [_start(tmp_path / "c", -1, "none", go=go), _start(tmp_path / "c", -1, "none", "reversed", go=go)]
    time.sleep(1.0)
    go.touch()
    (c1, l1, e1), (c2, l2, e2) = [_finish(p) for p in procs]
    assert c1 == 0 and _right(l1), e1
    assert c2 == 0 and _right(l2, (3, 2.0)), e2
    code, lines, err = _finish(_start(tmp_path / "c", -1, "none"))
    assert code == 0 and _right(lines) and lines[1].split()[:2] == ["2", "0"], (lines, err)


@pytest.fixture
def user_cache(monkeypatch, tmp_path):
    for var in ("TRACKRIDER_CACHE_DIR", "NUMBA_CACHE_DIR", "XDG_CACHE_HOME"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(cache, "_CHECKED", None)
    monkeypatch.setattr(cache, "_PROBLEM", None)
    monkeypatch.setattr(cache, "_KERNELS", {})
    monkeypatch.setenv("TRACKRIDER_CACHE_DIR", str(tmp_path))
    return tmp_path


def _eight_times(x):
    return 8.0 * x


def _compiled():
    from trackrider import jit

    return jit._compiled(_eight_times, (), {"cache": True})


@pytest.mark.parametrize("damage", ["truncated data", "garbage data", "truncated index", "garbage index",
                                    "empty index", "another entry's data"])
def test_a_damaged_entry_is_compiled_again_not_loaded(user_cache, damage):
    first = _compiled()
    assert first(1.0) == 8.0 and first(np.float32(1.0)) == 8.0      # two entries saved
    index, = user_cache.rglob("*_eight_times*.nbi")
    data = sorted(index.parent.glob("*_eight_times*.nbc"))
    assert len(data) == 2
    if damage == "truncated data":
        data[0].write_bytes(data[0].read_bytes()[:-100])
    elif damage == "garbage data":
        blob = bytearray(data[0].read_bytes())
        blob[len(blob) // 2] ^= 0xFF
        data[0].write_bytes(bytes(blob))
    elif damage == "truncated index":
        index.write_bytes(index.read_bytes()[:len(index.read_bytes()) // 2])
    elif damage == "garbage index":
        index.write_bytes(os.urandom(len(index.read_bytes())))
    elif damage == "empty index":
        index.write_bytes(b"")
    else:                       # each signature's file holding the other's code (a race's outcome)
        a, b = data[0].read_bytes(), data[1].read_bytes()
        data[0].write_bytes(b)
        data[1].write_bytes(a)
    again = _compiled()
    assert again(2.0) == 16.0 and again(np.float32(2.0)) == 16.0
    hits, misses = sum(again.stats.cache_hits.values()), sum(again.stats.cache_misses.values())
    assert misses >= 1 and hits + misses == 2
    healed = _compiled()                                             # saved again: both load
    assert healed(3.0) == 24.0 and healed(np.float32(3.0)) == 24.0
    assert sum(healed.stats.cache_hits.values()) == 2 and not healed.stats.cache_misses


def test_entries_saved_by_two_writers_at_once_keep_each_others(tmp_path):
    """Two writers (processes) that read the index before either saved: both entries are kept, each
    in its own file (numba would give both the same numbered file, and the index might name the
    other's code), and each loads its own."""
    from trackrider.jit_cache import _Entries

    a, b = _Entries(str(tmp_path), "f-1.py311", "stamp"), _Entries(str(tmp_path), "f-1.py311", "stamp")
    a.save(("sig-a",), b"code of a")
    b.save(("sig-b",), b"code of b")
    assert a.load(("sig-a",)) == b"code of a" and a.load(("sig-b",)) == b"code of b"
    assert len(list(tmp_path.glob("*.nbc"))) == 2
    assert _Entries(str(tmp_path), "f-1.py311", "other stamp").load(("sig-a",)) is None


def test_a_wheels_kernels_are_copied_whole_without_temporary_or_lock_files(tmp_path):
    from trackrider.prebuild import ship

    built = tmp_path / "build" / "kernels-0123456789abcdef"
    (built / "trackrider.physics.kernels").mkdir(parents=True)
    for name in ("a.nbi", "a.x.nbc", "a.nbi.tmp.0123", ".lock"):
        (built / "trackrider.physics.kernels" / name).write_bytes(b"x")
    package = tmp_path / "trackrider"
    (package / cache.SHIPPED / "kernels-old").mkdir(parents=True)             # an earlier build's
    dest = ship(built, package)
    assert dest == package / cache.SHIPPED / built.name
    assert sorted(p.name for p in (package / cache.SHIPPED).rglob("*")) == sorted(
        [built.name, "trackrider.physics.kernels", "a.nbi", "a.x.nbc"])
    assert sorted(p.name for p in package.iterdir()) == [cache.SHIPPED]


def test_a_kernel_only_kernels_call_makes_no_machine_code_and_links_from_the_cache(tmp_path):
    """A kernel without an entry point for Python (``no_cpython_wrapper``) is compiled to an
    optimized module its callers link, not to machine code of its own (``jit_cache._Library``); its
    cache entry is that module, which a caller compiled in a later process links: same results."""
    code = textwrap.dedent("""
        import sys
        import numpy as np
        from trackrider.jit import njit

        @njit(cache=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True)
        def inner(a, i):
            return a[i] * 2.0 + 1.0

        @njit(cache=True, error_model="numpy", _nrt=False)
        def outer(a, k):
            s = 0.0
            for i in range(a.size):
                s += inner(a, i) * k
            return s

        @njit(cache=True, error_model="numpy", _nrt=False)
        def other(a):
            return inner(a, 1) - 1.0

        fn = other if sys.argv[1] == "other" else outer
        args = (np.arange(5.0),) if fn is other else (np.arange(5.0), 2.0)
        print(fn(*args), sum(fn.stats.cache_hits.values()), sum(inner.stats.cache_hits.values()),
              sum(inner.stats.cache_misses.values()))
        for sig in inner.signatures:
            lib, name = inner.overloads[sig].library, inner.overloads[sig].fndesc.mangled_name
            print(type(lib).__name__, lib._codegen._engine.is_symbol_defined(name))
        """)
    env = dict(os.environ, TRACKRIDER_CACHE_DIR=str(tmp_path))
    env.pop("NUMBA_DISABLE_JIT", None)
    runs = [subprocess.run([sys.executable, "-c", code, which], capture_output=True, text=True, cwd=ROOT,
                           env=env, timeout=600) for which in ("outer", "outer", "other")]
    for proc in runs:
        assert proc.returncode == 0, proc.stderr
    first, warm, other = [proc.stdout.split("\n") for proc in runs]
    assert first[0].split() == ["50.0", "0", "0", "1"] and first[1].split() == ["_Library", "False"]
    assert warm[0].split() == ["50.0", "1", "0", "0"]                  # loaded: inner not even needed
    assert other[0].split() == ["2.0", "0", "1", "0"] and other[1].split() == ["_LinkLater", "False"]
    entry, = tmp_path.rglob("*.inner-*.nbc")
    assert b"\x7fELF" not in entry.read_bytes()                        # a module, no object code


def test_a_function_named_as_a_link_only_kernel_still_gets_machine_code(tmp_path):
    """A function callable from Python whose name is that of a kernel only kernels call (here both
    ``twice``) is not taken for that kernel: it gets its machine code and runs (numba 0.68 mangles
    the name of the CPython wrapper that tells them apart; without the machine code the call jumped to
    address 0)."""
    (tmp_path / "linked.py").write_text(textwrap.dedent("""
        from trackrider.jit import njit

        @njit(error_model="numpy", _nrt=False, no_cpython_wrapper=True)
        def twice(x):
            return 2.0 * x

        @njit(error_model="numpy", _nrt=False)
        def user(x):
            return twice(x) + 1.0
        """))
    code = textwrap.dedent("""
        import linked
        from trackrider.jit import njit

        @njit(error_model="numpy", _nrt=False)
        def twice(x):
            return 2.0 * x

        print(linked.user(3.0), twice(3.0))
        """)
    env = dict(os.environ, TRACKRIDER_CACHE_DIR=str(tmp_path / "cache"),
               PYTHONPATH=os.pathsep.join([str(tmp_path), str(ROOT), os.environ.get("PYTHONPATH", "")]))
    env.pop("NUMBA_DISABLE_JIT", None)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=env,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split() == ["7.0", "6.0"]


def test_a_called_kernel_gets_only_the_arguments_it_reads():
    """A kernel linked into its caller's machine code keeps only the arguments it reads
    (``jit_cache.drop_dead_arguments``): here one of three arrays and the index, where numba passes
    every word of every array; its own module (which other callers link) keeps them all, and the
    results are the same."""
    from llvmlite import binding as ll

    from trackrider.jit import njit

    @njit(error_model="numpy", _nrt=False, no_cpython_wrapper=True)
    def picked(a, b, c, i):
        s = 0.0
        for k in range(i):
            x = b[k] * 3.0 + 1.0
            for p in range(12):   # too much to be inlined into its caller by LLVM (llvmlite 0.50 inlines
                # a loop of one square root and one division)
                x = np.sqrt(abs(x * (1.0 + 0.1 * p) - 0.3 * p)) + np.sin(x) / (1.0 + p + k)
            s += x / (1.0 + k)
        return s

    @njit(error_model="numpy", _nrt=False)
    def caller(a, b, c, n):
        s = 0.0
        for i in range(n):
            s += picked(a, b, c, i % 7)
        return s

    a, b, c = np.arange(8.0), np.linspace(0.0, 1.0, 8), np.ones((2, 3))
    assert caller(a, b, c, 50) == pytest.approx(sum(picked.py_func(a, b, c, i % 7) for i in range(50)), rel=1e-13)
    (sig,), (own,) = caller.signatures, picked.signatures
    name = picked.overloads[own].fndesc.mangled_name
    linked = caller.overloads[sig].library._final_module.get_function(name)
    alone = picked.overloads[own].library._get_module_for_linking().get_function(name)
    assert linked.linkage == ll.Linkage.internal and alone.linkage == ll.Linkage.linkonce_odr
    # numba's words: a status pointer, an exception pointer, 7 per 1-d array, 9 for the 2-d one, the index
    assert len(list(alone.arguments)) == 2 + 7 + 7 + 9 + 1
    assert len(list(linked.arguments)) <= 2 + 2 + 1     # b's data and its stride (at most), the index


# a copy of the package gets two kernel modules: ``sizes`` defines a kernel (the process's sources are
# hashed then) and ``fill`` is imported later (as trackrider imports physics modules inside functions);
# its kernel writes SIZE elements into an array the caller makes SIZE long
_FILL = textwrap.dedent("""
    from trackrider.jit import njit

    SIZE = {size}

    @njit(cache=True)
    def fill(out):
        for i in range(SIZE):
            out[i] = i
        return out
    """)
_SIZES = textwrap.dedent("""
    from trackrider.jit import njit

    @njit(cache=True)
    def size(a):
        return a.size
    """)
_EDITED_CHILD = textwrap.dedent("""
    import os, sys, time
    import numpy as np
    import trackrider.sizes                          # its kernel defined: this process's sources hashed
    go = os.environ.get("GO_FILE")
    if go:
        open(go + ".imported", "w").close()
        while not os.path.exists(go):                # the parent edits fill.py meanwhile
            time.sleep(0.01)
    from trackrider import fill
    out = fill.fill(np.full(fill.SIZE, -1.0))
    print(fill.SIZE, float(out.sum()))
    """)


def test_a_kernel_file_edited_while_a_process_starts_never_gives_another_process_its_code(tmp_path):
    """Two processes, one cache folder, a kernel's source edited between one process's import of the
    package and its import of that kernel's module: what that process compiled (the new code, under
    the hash of the sources it saw first) is not cached, so a later process with the first sources
    (the edit taken back, as by ``git checkout``) compiles its own instead of loading code that writes
    past its array (a crash)."""
    import shutil

    copy = tmp_path / "src"
    shutil.copytree(ROOT / "trackrider", copy / "trackrider",
                    ignore=shutil.ignore_patterns("__pycache__", "_kernel_cache"))
    small, large = 4, 2_000_000
    (copy / "trackrider" / "sizes.py").write_text(_SIZES)
    fill = copy / "trackrider" / "fill.py"
    fill.write_text(_FILL.format(size=small))
    env = dict(os.environ, TRACKRIDER_CACHE_DIR=str(tmp_path / "cache"), PYTHONPATH=str(copy),
               PYTHONDONTWRITEBYTECODE="1")
    env.pop("NUMBA_DISABLE_JIT", None)
    go = tmp_path / "go"

    def child(**extra):
        return subprocess.Popen([sys.executable, "-c", _EDITED_CHILD], cwd=tmp_path, env=dict(env, **extra),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    first = child(GO_FILE=str(go))
    while not Path(str(go) + ".imported").exists():
        assert first.poll() is None, first.communicate()
        time.sleep(0.01)
    fill.write_text(_FILL.format(size=large))          # edited after the process started
    go.touch()
    out, err = first.communicate(timeout=600)
    assert first.returncode == 0, err
    assert out.split() == [str(large), str(float(large * (large - 1) // 2))]

    fill.write_text(_FILL.format(size=small))          # and taken back: the first sources again
    time.sleep(0.01)
    second = child()
    out, err = second.communicate(timeout=600)
    assert second.returncode == 0, f"exit code {second.returncode}: {err}"
    assert out.split() == [str(small), "6.0"]
