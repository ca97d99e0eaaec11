"""The designer's report: one self-contained HTML page of a run or a sweep.

``write_report(results_dir, out_html, units="metric", compare=None, overwrite=False)``
reads a results folder (``summary.json``, ``timeseries.csv`` and, when it still
exists, the scenario file for the track and its sections) and writes one HTML
file whose figures are inline SVG (matplotlib, Agg): nothing is fetched from
outside the file and no script runs. See ``docs/report.md``.

Importing this package is light: matplotlib loads only when a report is drawn.
"""
from __future__ import annotations

from trackrider.report.units import Units

__all__ = ["Units", "write_report"]


def write_report(results_dir, out_html=None, units="metric", compare=None, overwrite=False):
    """Write the report of ``results_dir`` (a run's or a sweep's folder); see ``page``.

    A page written into the results folder itself is written holding the folder (as
    ``check --save`` does): refused while a run or a sweep writes there, so the page
    describes the results it sits beside."""
    import os
    from contextlib import nullcontext
    from pathlib import Path

    from trackrider.report.page import write_report as _write
    from trackrider.results_folder import held

    src = Path(results_dir)
    out = Path(out_html) if out_html is not None else src / "report.html"
    try:
        inside = os.path.samefile(out.parent, src)
    except (OSError, ValueError):
        inside = False
    with held(src, where="RESULTS_DIR") if inside else nullcontext():
        return _write(results_dir, out_html, units=units, compare=compare, overwrite=overwrite)
