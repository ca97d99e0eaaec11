"""The build hook: a wheel ships the kernels compiled for its sources (``trackrider.prebuild``).

Everything else about the package is in ``pyproject.toml``. ``pip install .`` builds a wheel:
after the package is copied into the build folder, its numba kernels are compiled there, so the
first ``trackrider run`` loads them. The wheel then holds machine code: it is tagged for this
Python and platform. An editable install (``pip install -e .``) compiles nothing at build time
(the kernels compile on first use, into the per-user cache). ``TRACKRIDER_PREBUILD=0`` skips the
compile; if it fails the wheel is built without kernels (a warning says why).
"""
import os
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

HERE = Path(__file__).resolve().parent


def _prebuild_wanted() -> bool:
    return os.environ.get("TRACKRIDER_PREBUILD", "1").strip() not in ("0", "no", "false")


class BuildPyWithKernels(build_py):
    """``build_py``, then the kernels compiled into the built package (not for an editable install)."""

    def run(self):
        super().run()
        package = (Path(self.build_lib) / "trackrider").resolve()
        shutil.rmtree(package / "_kernel_cache", ignore_errors=True)  # an earlier build's
        if getattr(self, "editable_mode", False) or not _prebuild_wanted():
            return
        scenarios = sorted(str(p) for p in (HERE / "scenarios").glob("*.toml"))
        # prepended: pip's isolated build environment is on PYTHONPATH too
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(package.parent),
                                                                        os.environ.get("PYTHONPATH")])))
        try:
            subprocess.run([sys.executable, "-m", "trackrider.prebuild", str(package), *scenarios],
                           env=env, check=True, cwd=str(package.parent))
        except (OSError, subprocess.CalledProcessError) as exc:
            print(f"warning: trackrider's kernels were not compiled into the wheel ({exc}); "
                  "they compile on the first run instead", file=sys.stderr)


class BinaryDistribution(Distribution):
    """A wheel with compiled kernels is specific to its Python and platform."""

    def has_ext_modules(self):
        return _prebuild_wanted()


setup(cmdclass={"build_py": BuildPyWithKernels}, distclass=BinaryDistribution)
