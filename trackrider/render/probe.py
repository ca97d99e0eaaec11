"""Can this machine render off screen? Asked in a subprocess, because VTK
segfaults (rather than raising) when it finds no usable OpenGL.

``configure_offscreen()`` must run before ``vtk`` or ``pyvista`` is imported: on a
machine without a display it selects VTK's EGL render window, which renders with
Mesa's software driver (llvmpipe) when there is no GPU.
"""
from __future__ import annotations

import glob
import os
import subprocess
import sys

#: Debian/Ubuntu packages that provide EGL and Mesa's DRI (software) drivers.
SYSTEM_PACKAGES = "libegl1 libgl1-mesa-dri"

# The probe renders one tiny frame and prints a marker; any crash, hang or
# missing library shows up as a missing marker or a non-zero exit code.
_PROBE_MARKER = "trackrider-render-ok"
_PROBE_CODE = f"""
import trackrider.render.probe as p
p.configure_offscreen()
import pyvista as pv
pl = pv.Plotter(off_screen=True, window_size=(32, 24))
pl.add_mesh(pv.Cube(), color="red")
pl.render()
img = pl.screenshot(return_img=True)
pl.close()
assert img.shape == (24, 32, 3) and img.max() > 0
print("{_PROBE_MARKER}")
"""
PROBE_TIMEOUT_S = 120.0

_cached: list = []  # [result] once probed in this process


def has_display() -> bool:
    """True when an X11 or Wayland display is available (Linux), or not on Linux."""
    if not sys.platform.startswith("linux"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def configure_offscreen() -> None:
    """Select VTK's EGL window when there is no display (before VTK is imported).

    A user's own ``VTK_DEFAULT_OPENGL_WINDOW`` is respected.
    """
    if not has_display():
        os.environ.setdefault("VTK_DEFAULT_OPENGL_WINDOW", "vtkEGLRenderWindow")


def missing_libraries() -> list[str]:
    """Names of the Debian packages whose files look absent (best effort, Linux only)."""
    if not sys.platform.startswith("linux"):
        return []
    missing = []
    libdirs = ["/usr/lib", "/lib", "/usr/lib64", "/lib64"] + glob.glob("/usr/lib/*-linux-gnu") + glob.glob("/lib/*-linux-gnu")
    if not any(glob.glob(os.path.join(d, "libEGL.so.1")) for d in libdirs):
        missing.append("libegl1")
    dri = [p for d in libdirs for p in glob.glob(os.path.join(d, "dri", "*_dri.so"))]
    dri += glob.glob("/usr/lib/*-linux-gnu/dri/*") + glob.glob("/usr/lib/dri/*")
    if not dri:
        missing.append("libgl1-mesa-dri")
    return missing


def _run_probe(code: str, timeout: float) -> str | None:
    env = dict(os.environ)
    if not has_display():
        env.setdefault("VTK_DEFAULT_OPENGL_WINDOW", "vtkEGLRenderWindow")
    try:
        proc = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout, env=env
        )
    except subprocess.TimeoutExpired:
        return f"the rendering probe did not finish in {timeout:.0f} s"
    except OSError as exc:  # cannot start Python at all
        return f"the rendering probe could not start ({exc})"
    if proc.returncode == 0 and _PROBE_MARKER in proc.stdout:
        return None
    if proc.returncode < 0:
        how = f"crashed with signal {-proc.returncode}"
    else:
        last = [ln.strip() for ln in proc.stderr.splitlines() if ln.strip()]
        how = f"failed ({last[-1][:160]})" if last else f"failed with exit code {proc.returncode}"
    return f"the rendering probe {how}"


def check_rendering(refresh: bool = False) -> str | None:
    """Probe off-screen rendering in a subprocess.

    Parameters
    ----------
    refresh : bool, default False
        Probe again even if this process already has an answer (the answer is cached).

    Returns
    -------
    None when rendering works, else one line of text saying what is wrong and
    which system libraries to install (``libegl1 libgl1-mesa-dri`` on Debian).
    """
    if _cached and not refresh:
        return _cached[0]
    failure = _run_probe(_PROBE_CODE, PROBE_TIMEOUT_S)
    if failure is None:
        result = None
    else:
        missing = missing_libraries()
        named = " ".join(missing) if missing else SYSTEM_PACKAGES
        result = (
            f"off-screen rendering is not available: {failure}; it needs EGL and Mesa's DRI drivers "
            f"(missing: {named}; on Debian/Ubuntu: apt-get install {SYSTEM_PACKAGES})"
        )
    _cached[:] = [result]
    return result
