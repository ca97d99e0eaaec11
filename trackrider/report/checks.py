"""The report's "Design checks" section: the design warnings, the envelope check (its violations,
the worst margins, the envelope drawn over G against duration with the ride's points) and the
comparison with a measured ride (``compare.json``). docs/checking.md says what each means."""
from __future__ import annotations

import json
import math

import numpy as np

from trackrider.report.page import _e, _figure_html
from trackrider.report.page import _num as _f

#: violations listed one by one at most
MAX_LISTED = 40


def envelope_figure(check: dict) -> str | None:
    """G against duration, one panel per axis with limits: the envelope (a line, log duration) and the
    ride's points (each stay's length at its least level), violations in red."""
    from trackrider.report.figures import _figure, to_svg

    limits = (check.get("envelope") or {}).get("durations") or {}
    points = check.get("ride_points") or {}
    axes = [a for a in limits if limits[a].get("points")]
    if not axes:
        return None
    fig = _figure(3.4 * min(len(axes), 3), 3.0 * math.ceil(len(axes) / 3))
    grid = fig.subplots(math.ceil(len(axes) / 3), min(len(axes), 3), squeeze=False)
    for ax in grid.ravel()[len(axes):]:
        ax.set_visible(False)

    for ax, axis in zip(grid.ravel(), axes):
        pts = np.asarray(limits[axis]["points"], dtype=float)          # [level, duration]
        d_lo = min(float(pts[:, 1].min()) / 10, 0.01)
        d_hi = float(pts[:, 1].max()) * 10
        lv, du = pts[:, 0], pts[:, 1]
        # the allowed region's edge: the highest level a stay of each duration may reach
        line_d = np.concatenate([[d_lo], [du[-1]], du[::-1], [du[0]], [d_hi]])
        line_l = np.concatenate([[lv[-1]], [lv[-1]], lv[::-1], [lv[0]], [lv[0]]])
        ax.plot(line_d, line_l, color="#333333", lw=1.6, label="envelope")
        ride = np.asarray(points.get(axis) or [], dtype=float).reshape(-1, 2)
        if len(ride):
            ax.plot(np.maximum(ride[:, 0], d_lo), ride[:, 1], "o", ms=3, color="#1f77b4", label="the ride")
        for v in check.get("violations") or []:
            if v.get("test") == "duration" and v["axis"] == axis:
                ax.plot(max(v["duration_s"], d_lo), v["level_g"], "x", ms=7, mew=2, color="#d62728")
        ax.set_xscale("log")
        ax.set_xlim(d_lo, d_hi)
        ax.set_title(axis, fontsize=10)
        ax.set_xlabel("duration at or beyond the level, s")
        ax.set_ylabel("G")
        ax.grid(alpha=0.3, which="both")
    grid.ravel()[0].legend(fontsize=7, loc="best")
    return to_svg(fig, "envelope")


def comparison_figure(cmp: dict) -> str | None:
    """The run and the measured trace (aligned), vertical, lateral, longitudinal."""
    from trackrider.report.figures import _figure, to_svg

    ser = cmp.get("series") or {}
    if not ser.get("t"):
        return None
    t = np.asarray(ser["t"])
    run, meas = np.asarray(ser["run"]), np.asarray(ser["measured"])
    fig = _figure(10, 6)
    axes = fig.subplots(3, 1, sharex=True)
    for ax, k, name in zip(axes, (2, 1, 0), ("vertical", "lateral", "longitudinal")):
        ax.plot(t, run[:, k], color="#1f77b4", lw=1.1, label="run")
        ax.plot(t, meas[:, k], color="#d62728", lw=0.9, ls="--", label="measured")
        ax.set_ylabel(f"{name} G")
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=8, loc="upper right")
    axes[-1].set_xlabel("run time, s")
    return to_svg(fig, "compare")


def _violation_rows(check: dict) -> str:
    from trackrider.check.results import violation_words

    rows = check.get("violations") or []
    out = ["<ul>"] + [f"<li>{_e(violation_words(v))}</li>" for v in rows[:MAX_LISTED]]
    more = int(check.get("violations_total") or 0) - min(len(rows), MAX_LISTED)
    if more > 0:
        out.append(f"<li>… and {more} more (summary.json check.violations)</li>")
    return "".join(out + ["</ul>"])


def _margins(check: dict) -> str:
    m = check.get("margins") or {}
    rows = ['<table><tr><th class="l">limit</th><th>worst margin</th><th>there</th><th>time (s)</th>'
            '<th class="l">train, car</th><th>s (m)</th><th class="l">section</th></tr>']
    for kind, unit in (("durations", "g"), ("onset", "g/s"), ("combined", "")):
        for axis, e in (m.get(kind) or {}).items():
            if kind == "durations":
                there = f"{_f(e.get('level_g'))} g for {_f(e.get('duration_s'), '{:.3g}')} s"
                name = axis
            elif kind == "onset":
                there = f"{_f(e.get('rate_g_per_s'), '{:+.1f}')} g/s"
                name = f"onset {axis}"
            else:
                there = f"{_f(e.get('ratio'))} of the ellipse"
                name = axis
            rows.append(f'<tr><td class="l">{_e(name)}</td><td>{_f(e.get("margin"), "{:+.2f}")} {unit}</td>'
                        f'<td>{_e(there)}</td><td>{_f(e.get("t"))}</td>'
                        f'<td class="l">{_e(e.get("train"))} {_e(e.get("car"))}</td><td>{_f(e.get("s"), "{:.1f}")}</td>'
                        f'<td class="l">{_e(e.get("section") or "—")}</td></tr>')
    return "".join(rows) + "</table>"


def checks_html(run) -> str:
    """The section (empty when there is nothing to say)."""
    s = run.summary
    design = [w for w in s.get("warnings") or [] if "design check" in w]
    check = s.get("check")
    cmp = None
    path = run.path / "compare.json"
    if path.is_file():
        try:
            cmp = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            cmp = None
    if not design and not check and not cmp:
        return ""
    body = ['<h2 id="checks">Design checks</h2>']
    if design:
        body.append("<h3>Warnings of the design checks</h3><ul>"
                    + "".join(f"<li>{_e(w.split('design check: ', 1)[-1])}</li>" for w in design) + "</ul>")
    if check:
        env = check.get("envelope") or {}
        name = env.get("name") or str(env.get("file", "?")).rsplit("/", 1)[-1]
        filt = check.get("filter") or {}
        verdict = "passed" if check.get("passed") else f"{check.get('violations_total', 0)} violations"
        body.append(f"<h3>Envelope: {_e(name)}{' (restraint ' + _e(env['restraint']) + ')' if env.get('restraint') else ''}"
                    f" — {_e(verdict)}</h3>")
        body.append(f'<p class="meta">Checked on every rider car\'s G filtered at {_f(filt.get("cutoff_hz"), "{:g}")} '
                    f"Hz (4-pole Butterworth, zero phase), on its track; file {_e(env.get('file', '?'))}.</p>")
        if not check.get("passed"):
            body.append(_violation_rows(check))
        body.append(_margins(check))
        body.append(_figure_html(envelope_figure(check),
                                 "Each axis's envelope (the longest stay allowed at or beyond each level, log "
                                 "duration) and the ride's points: every stay's length at its least level; "
                                 "crosses: the violations."))
    if cmp:
        body.append(f"<h3>Compared with a measured ride: {_e(str(cmp.get('measured', '?')).rsplit('/', 1)[-1])}</h3>")
        rot = cmp.get("rotation")
        body.append(f"<p>Offset {_f(cmp.get('offset_s'), '{:+.3f}')} s (run time = measured time + offset), "
                    f"correlation {_f(cmp.get('correlation'), '{:.3f}')}, overlap {_f(cmp.get('overlap_s'), '{:.1f}')} s"
                    + (f"; sensor rotation {_f(rot.get('angle_deg'))}°" if rot else "") + ".</p>")
        rows = ['<table><tr><th class="l">stretch</th><th class="l">axis</th><th>RMS error (g)</th>'
                '<th>peak error (g)</th><th>at t (s)</th></tr>']
        for label, table in [("whole ride", cmp.get("whole") or {})] + list((cmp.get("sections") or {}).items()):
            for axis in ("vertical", "lateral", "longitudinal"):
                e = table.get(axis) or {}
                rows.append(f'<tr><td class="l">{_e(label)}</td><td class="l">{axis}</td>'
                            f'<td>{_f(e.get("rms_g"), "{:.3f}")}</td><td>{_f(e.get("peak_g"), "{:+.3f}")}</td>'
                            f'<td>{_f(e.get("t"))}</td></tr>')
        body.append("".join(rows) + "</table>")
        body.append(_figure_html(comparison_figure(cmp), "The run's filtered G (solid) and the measured trace, "
                                                         "filtered the same way and aligned (dashed)."))
    return "\n".join(body)
