"""The report in a real browser: Debian's chromium, headless, renders it without console messages
and without fetching anything but the page itself."""
from __future__ import annotations

import http.server
import subprocess
import threading
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import CHROMIUM

pytestmark = [pytest.mark.slow, pytest.mark.requires_chromium]

#: a headless browser that stays off the network and logs the page's console to stderr
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-extensions", "--enable-logging=stderr", "--v=0",
         "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"]


def screenshot(url: str, png: Path, tmp_path: Path, size="1280,2400") -> str:
    """Take a screenshot of ``url``; returns chromium's stderr (console messages are in it)."""
    proc = subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}", f"--screenshot={png}",
                           f"--window-size={size}", url], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert png.is_file(), proc.stderr[-2000:]
    return proc.stderr


def console_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if ":CONSOLE" in line]


def test_console_capture_works(tmp_path):
    """The check below can fail: a page that logs an error shows it in chromium's stderr."""
    page = tmp_path / "noisy.html"
    page.write_text('<!DOCTYPE html><html><body><p>x</p><script>console.error("boom")</script></body></html>')
    stderr = screenshot(page.as_uri(), tmp_path / "noisy.png", tmp_path, "300,200")
    assert any("boom" in line for line in console_lines(stderr))


#: drags across the middle of the first zoomable chart (the ride against time), then logs what it shows
_DRAG = """<script>
window.addEventListener("load", function () {
  var box = document.querySelector("div.zoom"), svg = box.querySelector("svg");
  var spec = JSON.parse(box.getAttribute("data-zoom")), b = spec.axes[0].box;
  var r = svg.getBoundingClientRect(), k = r.width / svg.viewBox.baseVal.width;
  var y = r.top + k * (b[1] + 10);
  function at(f) { return r.left + k * (b[0] + f * (b[2] - b[0])); }
  svg.dispatchEvent(new MouseEvent("mousedown", {clientX: at(0.5), clientY: y, button: 0, bubbles: true}));
  window.dispatchEvent(new MouseEvent("mousemove", {clientX: at(0.75), clientY: y, bubbles: true}));
  window.dispatchEvent(new MouseEvent("mouseup", {clientX: at(0.75), clientY: y, bubbles: true}));
  var hidden = document.getElementById(spec.axes[0].axis).style.display;
  console.log("zoomed: " + box.querySelector(".zr").textContent + " | axis " + hidden + " | ticks " +
              svg.querySelectorAll(".zticks text").length);
});
</script>"""


def test_a_drag_zooms_the_chart(classic_run, tmp_path):
    """The page's script in a real browser: a drag over the middle quarter of the time chart zooms the
    five panels to it, replacing matplotlib's x axis by the script's ticks; nothing else is logged."""
    import html
    import json
    import re

    page = (classic_run / "report.html").read_text(encoding="utf-8")
    (tmp_path / "drag.html").write_text(page.replace("</body>", _DRAG + "</body>"), encoding="utf-8")
    stderr = screenshot((tmp_path / "drag.html").as_uri(), tmp_path / "drag.png", tmp_path, "1280,1200")
    lines = console_lines(stderr)
    assert len(lines) == 1, lines
    spec = json.loads(html.unescape(re.search(r'data-zoom="([^"]*)"', page).group(1)))
    a, b = spec["lim"]
    shown = re.search(r"zoomed: showing (-?[\d.]+) … (-?[\d.]+) of time \(s\) \| axis none \| ticks (\d+)", lines[0])
    assert shown, lines[0]
    lo, hi, ticks = float(shown.group(1)), float(shown.group(2)), int(shown.group(3))
    assert lo == pytest.approx(a + 0.5 * (b - a), abs=0.1) and hi == pytest.approx(a + 0.75 * (b - a), abs=0.1)
    assert ticks >= 3


class _Logger(http.server.SimpleHTTPRequestHandler):
    requests: list[str] = []

    def log_message(self, *args):
        pass

    def do_GET(self):  # noqa: N802 - the handler's name in http.server
        type(self).requests.append(self.path)
        super().do_GET()


def test_report_renders_in_chromium(classic_run, tmp_path):
    import imageio.v3 as iio

    report = classic_run / "report.html"
    png = tmp_path / "report.png"
    stderr = screenshot(report.as_uri(), png, tmp_path)
    assert console_lines(stderr) == [], console_lines(stderr)
    img = iio.imread(png).astype(float)
    assert img.shape[0] == 2400 and img.shape[1] == 1280
    grey = img[..., :3].mean(axis=2)
    # not blank: the page has text, tables and figures (pixel variance, dark pixels, colours)
    assert grey.std() > 20.0
    assert np.mean(grey < 128) > 0.01
    colourful = np.ptp(img[..., :3], axis=2) > 60
    assert colourful.mean() > 0.003          # coloured lines and shading of the figures


def test_report_fetches_nothing_but_itself(classic_run, tmp_path):
    """Served over HTTP, the browser asks the server for the page and nothing else."""
    _Logger.requests = []

    def handler(*args, **kwargs):
        return _Logger(*args, directory=str(classic_run), **kwargs)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/report.html"
        stderr = screenshot(url, tmp_path / "served.png", tmp_path, "1280,1200")
    finally:
        server.shutdown()
        server.server_close()
    assert console_lines(stderr) == []
    assert [p for p in _Logger.requests if p != "/favicon.ico"] == ["/report.html"], _Logger.requests
