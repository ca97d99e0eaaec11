"""Every python code block of README.md and docs/*.md runs as written, in a fresh folder that holds a
copy of the checkout's scenarios/ and curves/ (the paths the docs use), and writes nothing into the
checkout. A block that is an outline, not a program, says so on its first line: ``# sketch: …``."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md"))
_BLOCK = re.compile(r"^```(?:python|py)[ \t]*\n(.*?)^```", re.MULTILINE | re.DOTALL)


def python_blocks(path: Path) -> list[tuple[int, str]]:
    """``(first line number, code)`` of each fenced python block of a Markdown file."""
    text = path.read_text(encoding="utf-8")
    return [(text[:m.start()].count("\n") + 2, m.group(1)) for m in _BLOCK.finditer(text)]


def is_sketch(code: str) -> bool:
    return code.lstrip().startswith("# sketch")


BLOCKS = [(p, line, code) for p in DOCS for line, code in python_blocks(p)]


def test_the_docs_have_python_blocks_and_the_sketches_say_so():
    runnable = [b for b in BLOCKS if not is_sketch(b[2])]
    assert len(runnable) >= 6 and {p.name for p, _, _ in runnable} >= {"README.md", "curves.md", "outputs.md"}
    for p, line, code in BLOCKS:
        if is_sketch(code):                         # a sketch says what it is
            assert re.match(r"# sketch: \S", code.lstrip()), f"{p.name}:{line}"
        else:
            compile(code, f"{p}:{line}", "exec")


def _checkout_files() -> set[str]:
    out = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=ROOT, capture_output=True,
                         text=True)
    return set(out.stdout.splitlines()) if out.returncode == 0 else set()


@pytest.mark.slow
@pytest.mark.parametrize("path, line, code", [pytest.param(p, n, c, id=f"{p.name}:{n}",
                                                           marks=[pytest.mark.render] if p.name == "rendering.md"
                                                           else [])
                                              for p, n, c in BLOCKS if not is_sketch(c)])
def test_doc_block_runs(path, line, code, tmp_path):
    for folder in ("scenarios", "curves"):
        shutil.copytree(ROOT / folder, tmp_path / folder)
    before = _checkout_files()
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.setdefault("VTK_DEFAULT_OPENGL_WINDOW", "vtkEGLRenderWindow")
    env["MPLBACKEND"] = "Agg"
    proc = subprocess.run([sys.executable, "-"], input=code, cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=900)
    assert proc.returncode == 0, f"{path.name}:{line}\n{code}\n{proc.stderr[-3000:]}"
    assert _checkout_files() == before, "the block wrote into the checkout"
