"""A results folder is written by one run at a time, through no link, and changes in one step
(trackrider/results_folder.py; docs/outputs.md, "The results directory")."""
from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from trackrider.cli import app
from trackrider.errors import InputError

ROOT = Path(__file__).resolve().parents[1]
PENDULUM = ROOT / "scenarios" / "pendulum.toml"


def cli(*args, timeout=120, **kw):
    return subprocess.run([sys.executable, "-m", "trackrider.cli", *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout, **kw)


def one_error_line(stderr: str) -> bool:
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    return len(lines) == 1 and lines[0].startswith("error:") and "internal error" not in lines[0]


def listing(folder: Path) -> dict:
    """Every entry below ``folder`` (links as their target's text), with its bytes."""
    out = {}
    for p in sorted(folder.rglob("*")):
        key = str(p.relative_to(folder))
        out[key] = ("link", os.readlink(p)) if p.is_symlink() else (p.read_bytes() if p.is_file() else "dir")
    return out


def run_quiet(out, *extra, seconds=0.2):
    return CliRunner().invoke(app, ["run", str(PENDULUM), "--out", str(out), "--duration", str(seconds), "-q",
                                    *map(str, extra)])


def _start_long_run(out: Path) -> subprocess.Popen:
    """A run into ``out`` that lasts long enough (6000 s of pendulum: 6e6 steps, below the output
    limit, never done before the test kills it; 600 s could end within the refused commands' few
    seconds); returns once it has taken the folder (its stage exists)."""
    proc = subprocess.Popen([sys.executable, "-m", "trackrider.cli", "run", str(PENDULUM), "--out", str(out),
                             "--duration", "6000", "-q"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    deadline = time.monotonic() + 120
    while not (out.is_dir() and any(out.iterdir())):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the run never took its folder"
        time.sleep(0.05)
    return proc


# ------------------------------------------------------------------ item 2: one run at a time

@pytest.mark.slow
def test_a_second_run_into_a_folder_being_written_is_refused_and_a_killed_run_leaves_no_lock(tmp_path):
    out = tmp_path / "res"
    first = _start_long_run(out)
    try:
        before = sorted(out.iterdir())                   # the first run's stage, which it writes on
        second = cli("run", PENDULUM, "--out", out, "--duration", "0.2", "-q")
        assert second.returncode == 2 and one_error_line(second.stderr), second.stderr
        assert "another trackrider command" in second.stderr and str(out) in second.stderr
        with_overwrite = cli("run", PENDULUM, "--out", out, "--duration", "0.2", "-q", "--overwrite")
        assert with_overwrite.returncode == 2 and one_error_line(with_overwrite.stderr), with_overwrite.stderr
        sweep = cli("sweep", ROOT / "scenarios" / "sweep_tiny.toml", "--out", out, "--overwrite", "-j", "1", "-q")
        assert sweep.returncode == 2 and one_error_line(sweep.stderr), sweep.stderr
        assert sorted(out.iterdir()) == before            # the refused commands wrote nothing
    finally:
        first.send_signal(signal.SIGKILL)                 # kill -9: the kernel drops its lock
        first.wait()
    # no stale lock: the next run takes the folder and removes the killed run's stage
    after = cli("run", PENDULUM, "--out", out, "--duration", "0.2", "-q")
    assert after.returncode == 0, after.stderr
    assert sorted(p.name for p in out.iterdir()) == ["inputs", "summary.json", "timeseries.csv"]
    summary = json.loads((out / "summary.json").read_text())
    rows = (out / "timeseries.csv").read_text().count("\n") - 1
    assert rows == summary["samples"] * 2                 # a car and a body: one run's rows, whole


def test_a_sweep_holds_its_folder_and_a_run_or_sweep_into_it_is_refused(tmp_path):
    from trackrider.results_folder import FolderLock

    sweep_dir = tmp_path / "sw"
    with FolderLock(sweep_dir):          # as a running sweep (or run) holds it
        r = CliRunner().invoke(app, ["sweep", str(ROOT / "scenarios" / "sweep_tiny.toml"), "--out", str(sweep_dir),
                                     "-j", "1", "-q"])
        assert r.exit_code == 2 and one_error_line(r.stderr) and "another trackrider command" in r.stderr, r.stderr
        r = run_quiet(sweep_dir)
        assert r.exit_code == 2 and "another trackrider command" in r.stderr, r.stderr
        assert list(sweep_dir.iterdir()) == []
    with pytest.raises(InputError, match="another trackrider command"):
        with FolderLock(sweep_dir):
            FolderLock(sweep_dir)


# ------------------------------------------------------------------ item 3: links are never followed

def test_links_in_a_results_folder_are_never_written_through(tmp_path):
    victim = tmp_path / "victim"
    victim.mkdir()
    for name in ("a.txt", "b.txt", "c.txt", "d.txt"):
        (victim / name).write_text(f"precious {name}")
    out = tmp_path / "res"
    out.mkdir()
    (out / "timeseries.csv.part").symlink_to(victim / "a.txt")
    (out / "summary.json.part").symlink_to(victim / "b.txt")
    r = run_quiet(out)                    # links are not leftovers of a run: the folder is not empty
    assert r.exit_code == 2 and one_error_line(r.stderr), r.stderr
    before = listing(victim)

    res = tmp_path / "res2"
    assert run_quiet(res).exit_code == 0
    for name in ("timeseries.csv.part", "summary.json.part"):
        (res / name).symlink_to(victim / ("a.txt" if name.startswith("t") else "b.txt"))
    (res / "notes").symlink_to(victim)
    r = run_quiet(res, "--overwrite")
    assert r.exit_code == 0, r.stderr
    assert listing(victim) == before
    assert (res / "timeseries.csv.part").is_symlink() and (res / "notes").is_symlink()   # not ours: left alone

    # a link at a result's own name is replaced by the new file, its target untouched
    (res / "timeseries.csv").unlink()
    (res / "timeseries.csv").symlink_to(victim / "c.txt")
    (res / "summary.json").unlink()
    (res / "summary.json").symlink_to(victim / "d.txt")
    r = run_quiet(res, "--overwrite")     # a folder of links is not recognised as results
    assert r.exit_code == 2 and one_error_line(r.stderr), r.stderr
    assert listing(victim) == before
    (res / "summary.json").unlink()
    assert run_quiet(tmp_path / "res3").exit_code == 0
    os.replace(tmp_path / "res3" / "summary.json", res / "summary.json")
    r = run_quiet(res, "--overwrite")
    assert r.exit_code == 0, r.stderr
    assert not (res / "timeseries.csv").is_symlink() and (res / "timeseries.csv").read_text().startswith("t,train,")
    assert listing(victim) == before


def test_a_link_named_like_the_sweep_log_is_refused_not_appended_to(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    out = tmp_path / "sw"
    sweep = str(ROOT / "scenarios" / "sweep_tiny.toml")
    assert CliRunner().invoke(app, ["sweep", sweep, "--out", str(out), "-j", "1", "-q"]).exit_code == 0
    (out / "runs.jsonl").unlink()
    (out / "runs.jsonl").symlink_to(victim)
    r = CliRunner().invoke(app, ["sweep", sweep, "--out", str(out), "-j", "1", "-q", "--resume"])
    assert r.exit_code == 2 and one_error_line(r.stderr) and "link" in r.stderr, r.stderr
    assert victim.read_text() == "precious"


# ------------------------------------------------------------------ item 4: only trackrider's own leftovers go

def test_a_users_inputs_part_folder_or_link_is_not_a_leftover(tmp_path):
    out = tmp_path / "res"
    (out / "inputs.part").mkdir(parents=True)
    (out / "inputs.part" / "thesis.tex").write_text("years of work")
    r = run_quiet(out)
    assert r.exit_code == 2 and one_error_line(r.stderr), r.stderr
    assert (out / "inputs.part" / "thesis.tex").read_text() == "years of work"

    other = tmp_path / "other"
    other.mkdir()
    (other / "data.csv").write_text("mine")
    linked = tmp_path / "linked"
    linked.mkdir()
    (linked / "inputs.part").symlink_to(other)
    r = run_quiet(linked)
    assert r.exit_code == 2 and one_error_line(r.stderr), r.stderr
    assert (other / "data.csv").read_text() == "mine"

    # in a results folder, with --overwrite: left alone beside the new results
    res = tmp_path / "res2"
    assert run_quiet(res).exit_code == 0
    (res / "inputs.part").mkdir()
    (res / "inputs.part" / "thesis.tex").write_text("years of work")
    (res / "link.part").symlink_to(other)
    assert run_quiet(res, "--overwrite").exit_code == 0
    assert (res / "inputs.part" / "thesis.tex").read_text() == "years of work"
    assert (other / "data.csv").read_text() == "mine" and (res / "link.part").is_symlink()
    assert (res / "inputs" / "manifest.json").is_file()


# ------------------------------------------------------------------ item 5: results and inputs in one step

def test_results_and_their_inputs_copy_change_together_or_not_at_all(tmp_path, monkeypatch):
    import trackrider.inputs_copy as inputs_copy

    out = tmp_path / "res"
    assert run_quiet(out, seconds=0.2).exit_code == 0
    before = listing(out)

    def full_disk(scenario, where):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(inputs_copy, "keep_inputs", full_disk)
    r = run_quiet(out, "--overwrite", seconds=0.3)
    assert r.exit_code == 2 and one_error_line(r.stderr), r.stderr
    assert "No space left on device" in r.stderr
    assert listing(out) == before          # neither the new results nor a new copy: the old ones, whole


def test_a_commit_cut_short_is_finished_by_the_next_reader(tmp_path, monkeypatch):
    """A run killed between two renames of its commit: the next command to take the folder
    (here ``report``) finishes it, so the results and the inputs copy are the same run's."""
    import trackrider.results_folder as rf

    out = tmp_path / "res"
    assert run_quiet(out, seconds=0.2).exit_code == 0
    scenario = tmp_path / "changed.toml"
    scenario.write_text(PENDULUM.read_text().replace("duration = 12.0", "duration = 11.0"))
    finish = rf._finish
    monkeypatch.setattr(rf, "_finish", lambda folder, stage: None)      # "killed" right after COMMIT
    r = CliRunner().invoke(app, ["run", str(scenario), "--out", str(out), "--duration", "0.3", "-q", "--overwrite"])
    assert r.exit_code == 0, r.stderr
    assert json.loads((out / "summary.json").read_text())["simulated_s"] == pytest.approx(0.2)   # not yet swapped
    monkeypatch.setattr(rf, "_finish", finish)
    r = CliRunner().invoke(app, ["report", str(out)])
    assert r.exit_code == 0, r.stderr
    summary = json.loads((out / "summary.json").read_text())
    manifest = json.loads((out / "inputs" / "manifest.json").read_text())
    assert summary["simulated_s"] == pytest.approx(0.3) and summary["scenario"] == str(scenario)
    assert manifest["scenario"]["original"] == str(scenario)
    assert not any(rf.is_leftover(p) for p in out.iterdir())


# ------------------------------------------------------------------ check --save and compare --save

def test_check_and_compare_save_wait_for_no_run_and_a_rerun_moves_their_files_out(tmp_path):
    """They read the results and write beside them (``summary.json``, ``compare.json``): refused while
    a run holds the folder, so what they write describes the results they read; a later run moves the
    ``compare.json`` trackrider wrote out with the old results (a file of the user's stays)."""
    from trackrider.record import read_timeseries
    from trackrider.results_folder import FolderLock

    out = tmp_path / "res"
    assert run_quiet(out, seconds=6.0).exit_code == 0
    ts = read_timeseries(out)
    bead = ts["train"] == "bead"
    measured = tmp_path / "m.csv"
    measured.write_text("time,ax,ay,az\n" + "".join(
        f"{t:.3f},{a:.6f},{b:.6f},{c:.6f}\n" for t, a, b, c in zip(
            ts["t"][bead], ts["g_longitudinal"][bead], ts["g_lateral"][bead], ts["g_vertical"][bead])))
    check = ["check", out, "--envelope", ROOT / "docs" / "examples" / "envelope_example.toml", "--save"]
    compare = ["compare", out, measured, "--time", "time", "--accel", "ax,ay,az", "--save"]
    before = listing(out)
    with FolderLock(out):                 # as a run writing there holds it
        for args in (check, compare):
            r = CliRunner().invoke(app, [str(a) for a in args])
            assert r.exit_code == 2 and one_error_line(r.stderr) and "another trackrider command" in r.stderr, \
                (args[0], r.stderr)
    assert listing(out) == before
    r = CliRunner().invoke(app, [str(a) for a in check])
    assert r.exit_code in (0, 3), r.stderr
    assert "check" in json.loads((out / "summary.json").read_text())
    # as compare --save writes it (a pendulum's trace aligns equally well a period away: refused)
    (out / "compare.json").write_text(json.dumps({"measured": str(measured), "offset_s": 0.0, "train": "bead"}))

    assert run_quiet(out, "--overwrite", seconds=0.3).exit_code == 0
    assert not (out / "compare.json").exists()                    # it compared the old run
    assert "check" not in json.loads((out / "summary.json").read_text())
    (out / "compare.json").write_text('{"mine": true}')
    assert run_quiet(out, "--overwrite", seconds=0.2).exit_code == 0
    assert (out / "compare.json").read_text() == '{"mine": true}'  # not trackrider's: left alone


def test_a_report_into_the_results_folder_waits_for_no_run(tmp_path):
    """``report`` writing its page into the results folder holds the folder as ``check --save`` does:
    refused while a run writes there (the page would describe results being replaced); a page
    written elsewhere only reads, and goes ahead."""
    from trackrider.results_folder import FolderLock

    out = tmp_path / "res"
    assert run_quiet(out, seconds=0.5).exit_code == 0
    before = listing(out)
    elsewhere = tmp_path / "page.html"
    with FolderLock(out):                 # as a run writing there holds it
        r = CliRunner().invoke(app, ["report", str(out)])
        assert r.exit_code == 2 and one_error_line(r.stderr) and "another trackrider command" in r.stderr, r.stderr
        assert listing(out) == before
        r = CliRunner().invoke(app, ["report", str(out), "--out", str(elsewhere)])
        assert r.exit_code == 0, r.stderr
    assert elsewhere.is_file()
    r = CliRunner().invoke(app, ["report", str(out)])
    assert r.exit_code == 0, r.stderr
    assert (out / "report.html").is_file()


def test_a_runs_joints_csv_comes_in_with_its_results_and_goes_out_with_them(tmp_path):
    """A run with mechanisms brings ``joints.csv`` in with its results (through the stage); a later
    run without mechanisms moves the old one out (it described the old run); a file of the user's
    by that name stays."""
    out = tmp_path / "res"
    r = CliRunner().invoke(app, ["run", str(ROOT / "scenarios" / "drop_track.toml"), "--out", str(out),
                                 "--duration", "0.2", "-q"])
    assert r.exit_code == 0, r.stderr
    assert (out / "joints.csv").read_text().startswith("t,joint,kind,body,")
    assert not [p.name for p in out.iterdir() if p.name.startswith(".trackrider-")]
    assert run_quiet(out, "--overwrite").exit_code == 0
    assert not (out / "joints.csv").exists()
    (out / "joints.csv").write_text("mine\n")
    assert run_quiet(out, "--overwrite").exit_code == 0
    assert (out / "joints.csv").read_text() == "mine\n"


# ------------------------------------------------------------------ item 9: a full disk

def _file_size_limit(limit):
    def apply():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)      # a write past the limit fails (EFBIG), as on a full disk
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return apply


@pytest.mark.slow
def test_a_write_the_file_system_refuses_is_one_error_line_naming_the_file(tmp_path):
    out = tmp_path / "res"
    first = cli("run", PENDULUM, "--out", out, "--duration", "0.2", "-q")   # kernels compiled and cached
    assert first.returncode == 0, first.stderr
    before = listing(out)
    big = cli("run", PENDULUM, "--out", out, "--duration", "3", "-q", "--overwrite",
              preexec_fn=_file_size_limit(64 * 1024))
    assert big.returncode == 2 and one_error_line(big.stderr), big.stderr
    assert f"{out / 'timeseries.csv'}: cannot write: File too large" in big.stderr
    assert listing(out) == before                          # old results whole, no stage left behind
    png = tmp_path / "plot.png"
    p = cli("plot", out, "--out", png, preexec_fn=_file_size_limit(16 * 1024))
    assert p.returncode == 2 and one_error_line(p.stderr), p.stderr
    assert f"{png}: cannot write" in p.stderr and list(tmp_path.glob("*.png*")) == []
