"""Compiled kernels are cached in the user's cache folder (trackrider.cache), never inside the
package; commands import only what they use."""
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from trackrider import cache

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "trackrider"
PENDULUM = ROOT / "scenarios" / "pendulum.toml"


@pytest.fixture
def fresh_cache_state(monkeypatch):
    for var in ("TRACKRIDER_CACHE_DIR", "NUMBA_CACHE_DIR", "XDG_CACHE_HOME"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(cache, "_CHECKED", None)
    monkeypatch.setattr(cache, "_PROBLEM", None)
    monkeypatch.setattr(cache, "_CHANGED", None)
    yield


def test_cache_root_precedence(fresh_cache_state, monkeypatch, tmp_path):
    if sys.platform.startswith("linux"):
        assert cache.cache_root() == Path.home() / ".cache" / "trackrider"
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
        assert cache.cache_root() == tmp_path / "xdg" / "trackrider"
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "numba"))
    assert cache.cache_root() == tmp_path / "numba"
    monkeypatch.setenv("TRACKRIDER_CACHE_DIR", str(tmp_path / "tr"))
    assert cache.cache_root() == tmp_path / "tr"


def test_unwritable_cache_compiles_in_memory(fresh_cache_state, monkeypatch, tmp_path):
    blocker = tmp_path / "a_file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("TRACKRIDER_CACHE_DIR", str(blocker / "cache"))
    from trackrider.jit import njit

    @njit(cache=True)
    def twice(x):
        return 2.0 * x

    assert twice(1.5) == 3.0
    assert twice._cache.__class__.__name__ == "NullCache"       # nothing written anywhere
    assert "cannot cache the compiled kernels" in cache.cache_problem()
    assert not (blocker.parent / "cache").exists()


def test_njit_cache_goes_to_the_cache_folder_only(fresh_cache_state, monkeypatch, tmp_path):
    import numba

    monkeypatch.setenv("TRACKRIDER_CACHE_DIR", str(tmp_path / "kernels"))
    before = numba.config.CACHE_DIR
    from trackrider.jit import njit

    @njit(cache=True)
    def thrice(x):
        return 3.0 * x

    assert thrice(2.0) == 6.0
    assert numba.config.CACHE_DIR == before                     # numba's own setting untouched
    assert list((tmp_path / "kernels").rglob("*.nbi")), "no cache index written"
    assert str(thrice._cache._cache_path).startswith(str(tmp_path / "kernels"))


def _package_files():
    return {p for p in PACKAGE.rglob("*") if p.is_file() and p.suffix != ".pyc"}


def test_a_run_writes_nothing_under_the_package(tmp_path):
    before = _package_files()
    cache_dir = Path(os.environ.get("NUMBA_CACHE_DIR", "/tmp/numba_tests"))
    env = dict(os.environ, TRACKRIDER_CACHE_DIR=str(cache_dir))
    env.pop("TRACKRIDER_DEBUG", None)
    proc = subprocess.run([sys.executable, "-m", "trackrider.cli", "run", str(PENDULUM), "--out",
                           str(tmp_path / "r"), "--duration", "0.2", "--quiet"],
                          capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert _package_files() == before
    assert not list(PACKAGE.rglob("*.nbi")) and not list(PACKAGE.rglob("*.nbc"))
    assert list(cache_dir.rglob("*.nbi"))


def test_version_names_the_cache(tmp_path):
    env = dict(os.environ, TRACKRIDER_CACHE_DIR=str(tmp_path / "c"))
    proc = subprocess.run([sys.executable, "-m", "trackrider.cli", "--version"], capture_output=True,
                          text=True, env=env, cwd=tmp_path, timeout=120)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("trackrider ")
    assert str(tmp_path / "c") in lines[1]


def _imported_by(args, tmp_path):
    code = textwrap.dedent(f"""
        import sys
        from trackrider.cli import app
        try:
            app({args!r})
        except SystemExit as exc:
            assert not exc.code, exc.code
        print(sorted({{m.split(".")[0] if m.split(".")[0] != "scipy" else ".".join(m.split(".")[:2])
                      for m in sys.modules}}))
        """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                          env=dict(os.environ, NUMBA_CACHE_DIR=os.environ.get("NUMBA_CACHE_DIR", "/tmp/numba_tests")),
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    return set(eval(proc.stdout.strip().splitlines()[-1]))


def test_help_imports_no_numeric_library(tmp_path):
    mods = _imported_by(["--help"], tmp_path)
    assert not mods & {"numba", "scipy", "matplotlib", "numpy", "vtk", "vtkmodules", "pyvista"}


@pytest.mark.parametrize("args", [["validate", "scenarios/classic_coaster.toml"], ["curve", "curves/first_drop.csv"]])
def test_validate_and_curve_import_no_plotting_rendering_or_filtering(args, tmp_path):
    mods = _imported_by(args, tmp_path)
    assert not mods & {"matplotlib", "vtk", "vtkmodules", "pyvista", "scipy.signal"}


def test_validate_in_its_own_process_loads_no_compiled_kernel_and_answers_alike(tmp_path):
    """``trackrider validate`` in a process of its own runs the kernels' Python originals (numba is
    not even imported): same answers as a compiled build, in a test runner's process too (where
    the switch is off)."""
    from typer.testing import CliRunner

    from trackrider.cli import app

    bad = tmp_path / "bad.toml"
    bad.write_text((ROOT / "scenarios" / "two_train_coaster.toml").read_text().replace(
        "start_s = 27.0", "start_s = 640.0"))
    for path, rc in ((ROOT / "scenarios" / "two_train_coaster.toml", 0), (bad, 2)):
        code = ("import sys; sys.argv = ['trackrider', 'validate', %r]; from trackrider.cli import app\n"
                "try:\n    app()\nfinally:\n    print('numba imported', 'numba' in sys.modules, file=sys.stderr)\n"
                % str(path))
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300)
        assert proc.returncode == rc, proc.stderr
        assert "numba imported False" in proc.stderr
        inproc = CliRunner().invoke(app, ["validate", str(path)])
        assert inproc.exit_code == rc
        assert proc.stdout.strip() == inproc.output.strip() or proc.stderr.splitlines()[0] == inproc.output.strip()


def test_lazy_kernels_switch_to_compiled_ones_on_a_large_array(tmp_path):
    """In lazy mode (``validate``) a kernel runs in Python until one is given a large array; then
    every kernel is compiled (or loaded), callees included, and answers alike."""
    code = textwrap.dedent("""
        import sys
        import numpy as np
        from trackrider import jit
        jit.lazy_kernels()
        from trackrider.curves import _kernels as k
        breaks = np.linspace(0.0, 10.0, 11)
        coef = np.random.default_rng(1).normal(size=(10, 6, 3))
        small = np.linspace(0.0, 10.0, 50)
        out_py = np.empty((50, 4, 3))
        k.ppoly_eval(breaks, coef, small, out_py)
        assert "numba" not in sys.modules and isinstance(k.ppoly_eval, jit._Lazy)
        big = np.linspace(0.0, 10.0, jit.LAZY_ELEMENTS + 1)
        out = np.empty((big.shape[0], 4, 3))
        k.ppoly_eval(breaks, coef, big, out)
        assert "numba" in sys.modules and not isinstance(k.ppoly_eval, jit._Lazy)
        assert not isinstance(k.__dict__["find_span"], jit._Lazy)
        again = np.empty((50, 4, 3))
        k.ppoly_eval(breaks, coef, small, again)
        assert np.array_equal(again, out_py), np.max(np.abs(again - out_py))
        print("ok")
        """)
    env = dict(os.environ, TRACKRIDER_CACHE_DIR=os.environ.get("TRACKRIDER_CACHE_DIR", str(tmp_path / "c")))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=env,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok"


def test_shipped_kernels_are_loaded_from_any_path_and_never_written(fresh_cache_state, monkeypatch, tmp_path):
    """Kernels compiled into one folder (as ``trackrider.prebuild`` does for a wheel) and shipped
    elsewhere are loaded from there, whatever the install's path: nothing compiles, nothing is
    written to the per-user folder; a kernel not shipped compiles into the per-user folder."""
    from trackrider import jit

    def five_times(x):
        return 5.0 * x

    def six_times(x):
        return 6.0 * x

    monkeypatch.setattr(cache, "_KERNELS", {})
    monkeypatch.setenv("TRACKRIDER_CACHE_DIR", str(tmp_path / "build"))
    built = jit._compiled(five_times, (), {"cache": True})
    assert built(1.0) == 5.0
    folder = tmp_path / "build" / f"kernels-{cache.source_fingerprint()}"
    assert list(folder.rglob("*.nbi"))

    shipped = tmp_path / "site" / "trackrider" / cache.SHIPPED / folder.name
    shipped.parent.mkdir(parents=True)
    folder.rename(shipped)
    monkeypatch.setattr(cache, "shipped_dir", lambda: shipped)
    monkeypatch.setattr(cache, "_KERNELS", {})
    monkeypatch.setattr(cache, "_CHECKED", None)
    monkeypatch.setenv("TRACKRIDER_CACHE_DIR", str(tmp_path / "user"))
    loaded = jit._compiled(five_times, (), {"cache": True})
    assert loaded(2.0) == 10.0
    assert sum(loaded.stats.cache_hits.values()) == 1 and not loaded.stats.cache_misses
    assert not list((tmp_path / "user").rglob("*.nb*"))
    other = jit._compiled(six_times, (), {"cache": True})
    assert other(1.0) == 6.0
    written = [p.name.split("-")[0] for p in (tmp_path / "user").rglob("*.nbi")]
    assert len(written) == 1 and written[0].endswith(".six_times")


def test_kernels_are_kept_per_version_of_the_sources(fresh_cache_state, monkeypatch, tmp_path):
    """numba checks only a kernel's own file: a change to a kernel it calls (another file) must
    not load the old machine code, so each version of the sources has its own folder, and only
    the newest ``KEEP_VERSIONS`` are kept."""
    import shutil

    copy = tmp_path / "pkg"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    before = cache.source_fingerprint(copy)
    assert before == cache.source_fingerprint(copy)                        # stable
    callee = copy / "physics" / "couplings.py"
    callee.write_text(callee.read_text() + "\n# a changed callee\n")
    changed = cache.source_fingerprint(copy)
    assert changed != before
    assert cache.source_fingerprint() == cache.source_fingerprint(PACKAGE)
    constants = copy / "physics" / "channels.py"        # no njit in it: its constants are compiled in
    constants.write_text(constants.read_text() + "\n# changed constants\n")
    assert cache.source_fingerprint(copy) != changed
    changed = cache.source_fingerprint(copy)
    page = copy / "report" / "page.py"                  # nothing a kernel imports: same kernels
    page.write_text(page.read_text() + "\n# a changed report\n")
    assert cache.source_fingerprint(copy) == changed

    root = tmp_path / "cache"
    for k in range(5):                                                    # five older versions
        old = root / f"kernels-{k:016x}"
        old.mkdir(parents=True)
        os.utime(old, (1000.0 + k, 1000.0 + k))
    monkeypatch.setattr(cache, "_FINGERPRINT", "f" * 16)
    here = cache.kernels_dir(root)
    assert here == root / ("kernels-" + "f" * 16) and here.is_dir()
    kept = sorted(p.name for p in root.glob("kernels-*"))
    assert len(kept) == cache.KEEP_VERSIONS
    assert kept == sorted([here.name, "kernels-0000000000000004", "kernels-0000000000000003"])

    monkeypatch.setenv("TRACKRIDER_CACHE_DIR", str(root))
    monkeypatch.setattr(cache, "_KERNELS", {})
    from trackrider.jit import njit

    @njit(cache=True)
    def four_times(x):
        return 4.0 * x

    assert four_times(1.0) == 4.0
    assert str(four_times._cache._cache_path).startswith(str(here))


def test_kernels_compiled_for_the_generic_cpu_are_loaded_on_this_one(fresh_cache_state, monkeypatch, tmp_path):
    """A portable wheel's kernels (``NUMBA_CPU_NAME=generic`` at build time) are found by a process
    compiling for its own CPU: nothing compiles, nothing is written to the per-user folder."""
    import numpy as np

    from trackrider import jit
    from trackrider.curves import _kernels as k

    code = "import numpy as np; from trackrider.curves._kernels import find_span; find_span(np.arange(5.0), 2.5)"
    env = dict(os.environ, NUMBA_CPU_NAME="generic", TRACKRIDER_CACHE_DIR=str(tmp_path / "build"))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=env,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    shipped = tmp_path / "build" / f"kernels-{cache.source_fingerprint()}"
    assert list(shipped.rglob("*.nbi"))
    monkeypatch.setattr(cache, "shipped_dir", lambda: shipped)
    monkeypatch.setattr(cache, "_KERNELS", {})
    monkeypatch.setenv("TRACKRIDER_CACHE_DIR", str(tmp_path / "user"))
    py_func = getattr(k.find_span, "py_func", k.find_span)
    loaded = jit._compiled(py_func, (), {"cache": True})
    assert loaded(np.arange(5.0), 2.5) == 2
    assert sum(loaded.stats.cache_hits.values()) == 1 and not loaded.stats.cache_misses
    assert not list((tmp_path / "user").rglob("*.nb*"))


def test_a_loaded_kernel_parses_its_link_module_only_when_linked(fresh_cache_state, monkeypatch, tmp_path):
    """A kernel loaded from the cache is ready without numba's parse of its module for linking
    (``trackrider.jit_cache._LinkLater``); a kernel compiled later in the process that calls it
    links it all the same."""
    import numba

    from trackrider import jit
    from trackrider.jit_cache import _LinkLater

    def seven_times(x):
        return 7.0 * x

    monkeypatch.setattr(cache, "_KERNELS", {})
    monkeypatch.setenv("TRACKRIDER_CACHE_DIR", str(tmp_path))
    assert jit._compiled(seven_times, (), {"cache": True})(1.0) == 7.0          # compiled, saved
    loaded = jit._compiled(seven_times, (), {"cache": True})
    assert loaded(2.0) == 14.0
    assert sum(loaded.stats.cache_hits.values()) == 1 and not loaded.stats.cache_misses
    library = loaded.overloads[loaded.signatures[0]].library
    assert isinstance(library, _LinkLater) and library._bitcode is not None    # not parsed
    caller = numba.njit(lambda x: loaded(x) + 1.0)
    assert caller(3.0) == 22.0
    assert library._bitcode is None and library._shared_module is not None    # parsed to link


def test_the_sources_hash_is_remembered_until_a_source_changes(fresh_cache_state, monkeypatch, tmp_path):
    """Hashing the kernel sources costs a process 40–50 ms: it is kept in the cache folder beside a
    stamp of the package's files (sizes, inodes, time stamps) and worked out again when any changes;
    never kept while a file has only just changed (a second change could leave the stamp as it was)."""
    import shutil

    copy = tmp_path / "pkg"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setenv("TRACKRIDER_CACHE_DIR", str(tmp_path / "cache"))
    hashed = []
    hash_sources = cache._hash_sources
    monkeypatch.setattr(cache, "_hash_sources", lambda pkg: hashed.append(pkg) or hash_sources(pkg))

    monkeypatch.setattr(cache, "SETTLED_NS", 10 ** 12)                     # the copy is new: not kept
    first = cache._remembered(copy)
    assert first == hash_sources(copy) and not list((tmp_path / "cache").glob("sources-*"))
    monkeypatch.setattr(cache, "SETTLED_NS", 0)
    assert cache._remembered(copy) == first and len(hashed) == 2          # worked out, now kept
    memo, = (tmp_path / "cache").glob("sources-*")
    assert cache._remembered(copy) == first and len(hashed) == 2          # read back
    callee = copy / "physics" / "couplings.py"
    callee.write_text(callee.read_text() + "\n# a changed callee\n")
    changed = cache._remembered(copy)
    assert changed == hash_sources(copy) != first and len(hashed) == 3
    assert cache._remembered(copy) == changed and len(hashed) == 3
    assert memo.read_text().split()[1] == changed
    other = tmp_path / "other"                                             # another copy: its own memo
    shutil.copytree(copy, other)
    assert cache._remembered(other) == changed and len(list((tmp_path / "cache").glob("sources-*"))) == 2
    assert not list((tmp_path / "cache").glob(".sources-*"))              # no temporary file left
    assert cache._CHANGED is None                    # another copy's new files: this process's code is as hashed

    blocker = tmp_path / "a_file"                                         # no cache folder: worked out
    blocker.write_text("not a folder")
    monkeypatch.setenv("TRACKRIDER_CACHE_DIR", str(blocker / "cache"))
    n = len(hashed)
    assert cache._remembered(copy) == changed and cache._remembered(copy) == changed and len(hashed) == n + 2


def test_numbas_runtime_is_loaded_from_the_cache_folder(tmp_path):
    """numba's runtime helpers (reference counts), which numba compiles in every process, are
    compiled once into the per-user folder and loaded by the next process; kernels that allocate
    run with them, loaded or newly compiled (linked against the loaded helpers)."""
    code = textwrap.dedent("""
        import numpy as np
        from numba.core.runtime import nrtdynmod
        compiled = []
        create = nrtdynmod.create_nrt_module
        nrtdynmod.create_nrt_module = lambda ctx: compiled.append(1) or create(ctx)
        from trackrider.curves._kernels import find_span
        from trackrider.jit import njit
        assert find_span(np.arange(5.0), 2.5) == 2

        @njit(cache=True)
        def ramp(n):
            return np.arange(n) * 2.0

        import numba
        fresh = numba.njit(lambda n: np.ones(n).sum() + ramp(n).sum())   # compiled here, linked with both
        assert ramp(4).tolist() == [0.0, 2.0, 4.0, 6.0] and fresh(3) == 9.0
        print(len(compiled))
        """)
    env = dict(os.environ, TRACKRIDER_CACHE_DIR=str(tmp_path / "c"))
    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=env,
                           timeout=600) for _ in range(2)]
    for proc in runs:
        assert proc.returncode == 0, proc.stderr
    assert [proc.stdout.split()[-1] for proc in runs] == ["1", "0"]
    assert list((tmp_path / "c").glob("kernels-*/numba.runtime/nrt.nbi"))


def test_a_source_changed_after_import_turns_the_disk_cache_off(monkeypatch, tmp_path):
    """trackrider.cache.sources_as_hashed: a trackrider module whose file changed after the package was
    imported (its status change time) turns loading and saving kernels off, with a reason; a file's
    modification time alone (an archive's, a clock ahead) does not."""
    import time
    import types

    import trackrider

    old, new = tmp_path / "old.py", tmp_path / "new.py"
    old.write_text("x = 1\n")
    os.utime(old, ns=(time.time_ns() + 10**12, time.time_ns() + 10**12))    # modified "in the future"
    monkeypatch.setattr(trackrider, "_IMPORTED_NS", time.time_ns())
    monkeypatch.setattr(cache, "_CHANGED", None)
    monkeypatch.setattr(cache, "_MODULES_SEEN", [0, set()])
    monkeypatch.setitem(sys.modules, "trackrider._test_old", types.SimpleNamespace(__file__=str(old)))
    assert cache.sources_as_hashed()
    time.sleep(0.01)
    new.write_text("x = 2\n")                           # changed after the import
    monkeypatch.setitem(sys.modules, "trackrider._test_new", types.SimpleNamespace(__file__=str(new)))
    assert not cache.sources_as_hashed()
    assert "changed while this process ran" in cache.cache_problem()
