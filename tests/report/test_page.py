"""``trackrider report``: the page's content, its self-containment, units, compare, overwrite, errors."""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from trackrider.cli import app
from trackrider.report.units import FT, KMH, MPH

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()

#: a reference that leaves the page: src/href = "...", url(...) or @import to http(s):, file:, //host or /abs
_REF = re.compile(r"""(?:\b(?:src|href)\s*=\s*["']?\s*|url\(\s*["']?\s*|@import\s+(?:url\(\s*)?["']?\s*)"""
                  r"""(https?:|file:|//|/|[A-Za-z]:\\)""", re.IGNORECASE)


def outside_references(text: str) -> list[str]:
    """Every src, href, url() or @import of ``text`` that points outside the page (an SVG's xmlns is not one)."""
    return [text[max(0, m.start() - 30): m.end() + 40] for m in _REF.finditer(text)]


def test_the_reference_check_can_fail():
    for bad in ('<img src="http://example.com/a.png">', "<a href='https://x.org'>", '<link href="/abs/x.css">',
                'style="background:url(file:///etc/x)"', "@import 'https://fonts/x.css';",
                '<image xlink:href="/tmp/a.png"/>', '<script src="//cdn.x/y.js">', "url( '/a.png' )"):
        assert outside_references(bad), bad
    for good in ('<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink">',
                 '<use xlink:href="#m1"/>', 'clip-path="url(#p1)"', '<a href="#run-0001">',
                 '<image xlink:href="data:image/png;base64,AAAA"/>', '<a href="runs/0001/report.html">'):
        assert not outside_references(good), good


def test_run_report_is_self_contained(classic_run):
    page = (classic_run / "report.html").read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>")
    assert outside_references(page) == []
    lowered = page.lower()
    for tag in ("<link", "<iframe", "<object", "<embed"):
        assert tag not in lowered, tag
    # one script, inline: the page's own (zoom, the time / track-position toggle), which fetches nothing
    from trackrider.report.script import SCRIPT

    assert lowered.count("<script") == 1 and f"<script>{SCRIPT}</script>" in page
    for word in ("fetch(", "xmlhttprequest", "import(", "http:", "https:", "src", "eval(", "localstorage"):
        assert word not in SCRIPT.lower().replace("http://www.w3.org/2000/svg", ""), word
    # every figure is inline SVG; a raster layer inside one is a data: URI
    assert lowered.count("<svg") >= 4
    for m in re.finditer(r'href="([^"]+)"', page):
        assert m.group(1).startswith(("#", "data:image/png;base64,")), m.group(1)


def test_run_report_content(classic_run):
    page = (classic_run / "report.html").read_text(encoding="utf-8")
    summary = json.loads((classic_run / "summary.json").read_text())
    red = summary["trains"]["red"]
    assert "Classic coaster: lift hill, first drop, vertical loop, brake run" in page
    assert 'class="status completed"' in page
    assert "Train red: 3 cars, coaster wheels" in page
    # extremes with their time, car, track position and section
    at = red["at"]["max_g_vertical"]
    row = re.search(r"<tr><td class=\"l\">highest vertical G</td>(.*?)</tr>", page).group(1)
    cells = re.findall(r"<td[^>]*>(.*?)</td>", row)
    assert cells[0] == f"{red['max_g_vertical']:+.2f} g"
    assert cells[1:4] == [f"{at['t']:.2f}", str(at["car"]), f"{at['s']:.1f}"]
    crest = re.search(r"<tr><td class=\"l\">lowest speed over a crest \(off the sections\)</td>(.*?)</tr>",
                      page).group(1)
    assert re.findall(r"<td[^>]*>(.*?)</td>", crest)[0] == f"{red['min_crest_speed'] * KMH:.1f} km/h"
    for label in ("airtime (any car below 0 g)", "largest wheel load", "largest L/V", "highest speed",
                  "lowest speed", "largest |lateral G|", "largest |longitudinal G|", "lowest vertical G"):
        assert label in page, label
    # the sections are shaded and named on the height profile (SVG text, not paths)
    assert page.count("chain lift") >= 3 and page.count("brake run") >= 2
    for heading in ("Statistics", "Height profile and speed", "The layout", "The ride: G, roll rate and jerk",
                    "G–G diagram"):
        assert heading in page


def test_report_units_imperial(classic_run, tmp_path):
    out = tmp_path / "imperial.html"
    result = runner.invoke(app, ["report", str(classic_run), "--out", str(out), "--units", "imperial"])
    assert result.exit_code == 0, result.stderr
    page = out.read_text(encoding="utf-8")
    red = json.loads((classic_run / "summary.json").read_text())["trains"]["red"]
    assert f"{red['max_speed'] * MPH:.1f} mph" in page
    assert f"<td>{red['at']['max_speed']['s'] * FT:.1f}</td>" in page
    assert "km/h" not in page and "s (ft)" in page and "height z (ft)" in page


def test_report_compare_overlays_two_runs(classic_run, tmp_path):
    heavier = tmp_path / "heavier"
    result = runner.invoke(app, ["run", str(ROOT / "scenarios" / "classic_coaster.toml"), "--out", str(heavier),
                                 "--duration", "32", "-q", "--set", "resistance.drag_area=1.5"])
    assert result.exit_code == 0, result.stderr
    out = tmp_path / "compare.html"
    result = runner.invoke(app, ["report", str(classic_run), "--compare", str(heavier), "--out", str(out)])
    assert result.exit_code == 0, result.stderr
    page = out.read_text(encoding="utf-8")
    assert "value in heavier" in page and "Compared with" in page
    assert outside_references(page) == []
    # both runs drawn: solid and dashed lines on the same axes
    assert "stroke-dasharray" in page
    a = json.loads((classic_run / "summary.json").read_text())["trains"]["red"]["max_speed"]
    b = json.loads((heavier / "summary.json").read_text())["trains"]["red"]["max_speed"]
    assert b < a                                   # more drag, slower
    assert f"{(b - a) * KMH:+.1f} km/h" in page      # the change column


def test_report_refuses_to_overwrite(classic_run, tmp_path):
    out = tmp_path / "r.html"
    assert runner.invoke(app, ["report", str(classic_run), "--out", str(out)]).exit_code == 0
    before = out.read_bytes()
    result = runner.invoke(app, ["report", str(classic_run), "--out", str(out)])
    assert result.exit_code == 2 and result.stderr.startswith("error:") and "--overwrite" in result.stderr
    assert out.read_bytes() == before
    assert runner.invoke(app, ["report", str(classic_run), "--out", str(out), "--overwrite"]).exit_code == 0
    # the same inputs give the same page
    assert out.read_bytes() == before
    # --overwrite replaces only a page trackrider wrote
    foreign = tmp_path / "mine.html"
    foreign.write_text("<html>my notes</html>")
    result = runner.invoke(app, ["report", str(classic_run), "--out", str(foreign), "--overwrite"])
    assert result.exit_code == 2 and "not a file trackrider wrote" in result.stderr
    assert foreign.read_text() == "<html>my notes</html>"


@pytest.mark.parametrize("args, words", [
    (["{missing}"], "not a results folder"),
    (["{empty}"], "no summary.json"),
    (["{run}", "--units", "furlongs"], "--units must be one of metric, imperial"),
    (["{run}", "--out", "{tmp}/r.pdf"], "ending in .html"),
    (["{run}", "--out", "{run}/summary.json/r.html"], "is not a folder"),
    (["{run}", "--out", "{tmp}/x.html", "--compare", "{missing}"], "not a results folder"),
])
def test_report_bad_input_is_one_error_line(classic_run, tmp_path, args, words):
    (tmp_path / "empty").mkdir()
    sub = {"missing": str(tmp_path / "missing"), "empty": str(tmp_path / "empty"), "run": str(classic_run),
           "tmp": str(tmp_path)}
    result = runner.invoke(app, ["report"] + [a.format(**sub) for a in args])
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and words in lines[0], lines
    assert not list(tmp_path.glob("*.html")) and not list(tmp_path.glob(".*tmp*"))


def test_report_without_the_scenario_draws_the_cars_path(classic_run, tmp_path):
    moved = tmp_path / "moved"
    shutil.copytree(classic_run, moved)
    shutil.rmtree(moved / "inputs", ignore_errors=True)     # and no copy kept with the results
    summary = json.loads((moved / "summary.json").read_text())
    summary["scenario"] = str(tmp_path / "gone.toml")
    (moved / "summary.json").write_text(json.dumps(summary))
    out = tmp_path / "r.html"
    result = runner.invoke(app, ["report", str(moved), "--out", str(out)])
    assert result.exit_code == 0, result.stderr
    page = out.read_text(encoding="utf-8")
    assert "no longer exists" in page and "height of the lead car" in page


def test_events_in_words(classic_run):
    from trackrider.report.data import load_run
    from trackrider.report.page import events_in_words
    from trackrider.report.units import Units

    run = load_run(classic_run)
    i = int((abs(run.t - 12.0)).argmin())   # on the chain lift
    s = float(run.trains[0].series["s"][i, 1])
    run.summary["events"] = [{"t": float(run.t[i]), "train": "red", "car": 2, "kind": "rolled_back"},
                             {"t": 21.0, "train": "red", "car": 1, "kind": "something_new"}]
    text = events_in_words(run, Units("metric"))
    assert f"At {run.t[i]:.2f} s, car 2 of red rolled back at s = {s:.1f} m, in chain lift." in text
    assert "had the event &#x27;something_new&#x27;" in text


def test_sweep_folder_gets_its_own_page(tmp_path):
    out = tmp_path / "sweep"
    result = runner.invoke(app, ["sweep", str(ROOT / "scenarios" / "sweep_tiny.toml"), "--out", str(out),
                                 "-j", "1", "-q"])
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["report", str(out)])
    assert result.exit_code == 0, result.stderr
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "Sweep sweep: 12 runs" in page
    assert page.count('<h3 id="run-') == 12 and '<a href="#run-0011">0011</a>' in page
    assert "train.red.car.mass" in page and "<svg" in page
    # the sweep figure has a legend
    assert ">ok</text>" in page
    assert outside_references(page) == []
    # seeds are whole numbers, written in full (not 2.483e+09)
    from trackrider.sweep import read_table

    _, rows = read_table(out / "sweep.csv")
    assert all(f"<td>{int(r['seed'])}</td>" in page for r in rows) and "e+09" not in page
    # where the runs fail: the outcome over each pair of the three numeric axes
    assert "<h2>Where the runs fail</h2>" in page and page.count('id="outcome-axes_') == 3
    result = runner.invoke(app, ["report", str(out), "--compare", str(out), "--out", str(tmp_path / "c.html")])
    assert result.exit_code == 2 and "compares two runs" in result.stderr


SCENARIOS = sorted(p.name for p in (ROOT / "scenarios").glob("*.toml") if not p.name.startswith("sweep_"))


@pytest.mark.slow
@pytest.mark.parametrize("name", SCENARIOS)
def test_every_bundled_scenario_gets_a_report(name, tmp_path):
    out = tmp_path / "res"
    result = runner.invoke(app, ["run", str(ROOT / "scenarios" / name), "--out", str(out), "--duration", "2",
                                 "-q", "--report", "--units", "imperial"])
    assert result.exit_code == 0, result.stderr
    assert "warning" not in result.stderr
    page = (out / "report.html").read_text(encoding="utf-8")
    summary = json.loads((out / "summary.json").read_text())
    assert outside_references(page) == []
    for train in summary["trains"]:
        assert f"Train {train}:" in page
    if not summary["trains"]:
        assert "No trains in this run" in page
    if any(t["wheels"] == "railway" for t in summary["trains"].values()):
        assert "Along the train" in page and "coupler force" in page


def test_a_valleyed_run_is_not_badged_completed(tmp_path):
    """Runs that completed with a train that failed a hill say so, in the counts, on their heading, and on
    the map of where the runs fail, whose boundary is drawn between the two outcomes."""
    from trackrider.report.figures import outcome_map
    from trackrider.report.page import sweep_outcome

    rows = [{"run": f"{i:04d}", "seed": 2483000000 + i, "a": float(a), "b": float(b), "status": "completed",
             "valleyed": a + b > 3} for i, (a, b) in enumerate((a, b) for a in range(4) for b in range(4))]
    assert [sweep_outcome(r) for r in rows].count("valleyed") == 6
    svg, facts = outcome_map(rows, ["a", "b"], {})
    assert facts == "6 of 16 runs valleyed or failed; the dashed line is the boundary."
    assert svg.count("<svg") == 1
    # with one outcome only there is no boundary to draw
    every_pass = [r for r in rows if r["valleyed"] is False]
    _, none = outcome_map(every_pass, ["a", "b"], {})
    assert none.endswith("every run passed: no boundary.")
    assert outcome_map(rows, ["a"], {}) == (None, "")        # one numeric axis: no map
