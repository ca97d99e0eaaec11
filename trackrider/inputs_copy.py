"""Results that stand alone: ``trackrider run`` keeps a copy of the scenario and of the
curve files (and the ``[check]`` envelope) it names in ``DIR/inputs/``, so that ``render``
(and other readers of a results folder) still work after the originals moved or changed.

``DIR/inputs/`` holds the scenario under its own name, each curve file at the
path the scenario gives it (relative to the scenario, as written), and
``manifest.json``: the original paths and the SHA-256 of every copied file.
A curve path that leaves the scenario's folder (``../x.csv``, absolute) is
copied to ``inputs/curves/<name>`` and the copied scenario's string rewritten
to match. The copy is the file as written; the run's ``--set`` overrides are
kept in ``summary.json`` (``overrides``) and applied again by ``load_results_scenario``,
which every reader of a results folder (render, report, plot) uses. Sweeps do not keep copies (their runs share
the sweep's base scenario). No heavy imports.
"""
from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

INPUTS = "inputs"
MANIFEST = "manifest.json"


def _sha(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def keep_inputs(scenario, out_dir) -> Path | None:
    """Copy the scenario file of a loaded ``Scenario`` and its curve files into
    ``out_dir/inputs/``; returns the copied scenario's path (None when the
    scenario has no file)."""
    src = getattr(scenario, "path", None)
    if not src:
        return None
    src = Path(src).resolve()
    if not src.is_file():
        return None
    final = Path(out_dir) / INPUTS
    dest = final.with_name(INPUTS + ".part")     # built beside the old copy, swapped in when complete
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    text = src.read_text()
    curves = []
    taken: set = set()
    files = [getattr(tr, "curve", None) for tr in getattr(scenario, "tracks", [])]
    files.append(getattr(getattr(scenario, "check", None), "envelope_path", None))   # [check]: kept alike
    for curve in files:
        if curve is None:
            continue
        curve = Path(curve).resolve()
        try:
            rel = curve.relative_to(src.parent)
        except ValueError:
            rel = None
        if rel is None:
            rel = Path("curves") / curve.name
            k = 1
            while rel.as_posix() in taken and not any(c["original"] == str(curve) for c in curves):
                k += 1                                   # two curves of one name from different folders
                rel = Path("curves") / f"{curve.stem}_{k}{curve.suffix}"
            for quoted in _spellings(curve, src.parent):
                text = text.replace(quoted, f'"{rel.as_posix()}"')
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(curve, target)
        taken.add(rel.as_posix())
        curves.append({"original": str(curve), "copy": rel.as_posix(), "sha256": _sha(curve)})
    copy = dest / src.name
    copy.write_text(text)
    manifest = {"scenario": {"original": str(src), "copy": src.name, "sha256": _sha(src)}, "curves": curves}
    (dest / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    if final.is_dir():
        shutil.rmtree(final)       # trackrider's own copy (check_results_dir refused any other)
    dest.rename(final)
    return final / src.name


def is_inputs_copy(path) -> bool:
    """Whether ``path`` is an inputs folder trackrider wrote (it holds our manifest)."""
    m = Path(path) / MANIFEST
    try:
        return m.is_file() and "scenario" in json.loads(m.read_text())
    except (OSError, ValueError):
        return False


def load_results_scenario(results, summary: dict, notice=None, loader=None):
    """The scenario a results folder was run from, as it was run: the original file
    when it and its curves are unchanged, else the copy kept in ``inputs/``, with the
    run's overrides applied (``summary.json`` ``overrides``). Returns
    ``(Scenario or None, note)``; ``notice(note)`` is called when the copy is used;
    ``loader(path, overrides)`` loads it (default ``load_scenario``)."""
    from trackrider.errors import InputError
    from trackrider.scenario import load_scenario

    path = summary.get("scenario") if isinstance(summary, dict) else None
    if not path:
        return None, "summary.json names no scenario"
    use, message = scenario_for_results(results, path)
    if use is None:
        return None, f"the scenario {path} no longer exists (and no copy was kept)"
    if message and notice is not None:
        notice(message)
    overrides = summary.get("overrides") if isinstance(summary.get("overrides"), dict) else None
    try:
        return (loader or load_scenario)(use, overrides), message or ""
    except InputError as exc:
        return None, f"the scenario no longer loads ({exc})"


def _spellings(curve: Path, base: Path) -> list[str]:
    """How a scenario may have written the path of ``curve`` (quoted TOML strings)."""
    import os

    out = {str(curve)}
    try:
        out.add(os.path.relpath(curve, base))
    except ValueError:
        pass
    return [f'"{p}"' for p in out] + [f"'{p}'" for p in out]


def scenario_for_results(results, scenario_path) -> tuple[Path | None, str | None]:
    """(scenario to load, message) for a results folder whose summary names
    ``scenario_path``: the original when it and its curve files are as they were
    at the run (or when no copy was kept); otherwise the copy in
    ``results/inputs/`` and a sentence saying why. (None, None) when neither exists."""
    results = Path(results)
    scenario_path = Path(scenario_path)
    mpath = results / INPUTS / MANIFEST
    if not mpath.is_file():
        return (scenario_path if scenario_path.is_file() else None), None
    try:
        manifest = json.loads(mpath.read_text())
        copy = results / INPUTS / manifest["scenario"]["copy"]
    except (OSError, ValueError, KeyError, TypeError):
        return (scenario_path if scenario_path.is_file() else None), None
    if not copy.is_file():
        return (scenario_path if scenario_path.is_file() else None), None
    where = results / INPUTS
    if not scenario_path.is_file():
        return copy, f"note: the scenario {scenario_path} no longer exists; using the copy kept in {where}"
    changed = []
    if _sha(scenario_path) != manifest["scenario"].get("sha256"):
        changed.append(str(scenario_path))
    for c in manifest.get("curves", []):
        p = Path(c.get("original", ""))
        if not p.is_file() or _sha(p) != c.get("sha256"):
            changed.append(str(p))
    if changed:
        return copy, (f"note: {', '.join(changed)} changed or moved since the run; using the copy kept in {where}")
    return scenario_path, None
