"""The ``trackrider`` command line (typer): thin wrappers over library functions.

Exit codes: 0 success (a ride that stalls or derails still succeeded), 2 bad
input (one ``error:`` line on stderr, nothing written), 1 the simulation
failed or an internal error. Heavy modules (numba kernels, matplotlib,
pyvista) are imported inside the commands that need them; ``run`` never
imports vtk/pyvista. Set ``TRACKRIDER_DEBUG=1`` to see tracebacks of
unexpected errors.
"""
from __future__ import annotations

import math
import os
import sys
import time
import warnings
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Optional

import typer
from typer.core import TyperGroup

from trackrider import __version__
from trackrider.errors import InputError, SimulationError

class _OneLineErrors(TyperGroup):
    """The command group: usage errors (unknown option, a word for a number …) are one
    ``error:`` line with exit code 2 too, like every other bad input; ``--help`` lists
    each command's whole one-line summary and shows arguments by their names alone."""

    def get_command(self, ctx, cmd_name):
        command = super().get_command(ctx, cmd_name)
        if command is not None:
            _plain_help(command)
            _plain_values(command.get_params(ctx))   # its help option, made (once) with this context's names
        return command

    def get_params(self, ctx):
        params = super().get_params(ctx)
        _plain_values(params)
        return params

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        _quick_exit()
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        try:
            code = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except Exception as exc:  # noqa: BLE001 - click's own exceptions, told apart by duck typing
            if type(exc).__name__ == "NoArgsIsHelpError" and hasattr(exc, "show"):
                exc.show()
                sys.exit(2)
            if hasattr(exc, "format_message") and hasattr(exc, "exit_code"):
                hint = ""
                ctx = getattr(exc, "ctx", None)
                if ctx is not None:
                    hint = f" (see '{ctx.command_path} --help')"
                typer.echo(f"error: {_one_line(exc.format_message())}{hint}", err=True)
                sys.exit(exc.exit_code)
            if type(exc).__name__ == "Abort":
                typer.echo("error: aborted", err=True)
                sys.exit(1)
            raise
        sys.exit(code if isinstance(code, int) else 0)


def _quick_exit() -> None:
    """At the interpreter's exit, the objects alive then are left out of the garbage collector's
    last passes (``gc.freeze``). Those passes walk every object numba made (its types, typing
    templates, loaded kernels): 0.2 s of CPU after a ``run``, 0.05 s after a ``validate``, to free
    memory the process gives back by ending anyway. Files are closed and results renamed
    before a command returns; ``atexit`` handlers and buffered output are flushed as before."""
    global _QUICK_EXIT
    if not _QUICK_EXIT:
        import atexit
        import gc

        atexit.register(gc.freeze)
        _QUICK_EXIT = True


_QUICK_EXIT = False


app = typer.Typer(
    cls=_OneLineErrors,
    name="trackrider",
    help="Simulate trains and roller coasters on 3D spline tracks: G-forces, wheel loads, events, video.\n\n"
         "\b\nExample:\n  trackrider run scenarios/classic_coaster.toml",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _plain_help(command) -> None:
    """Help as a user reads it: the command list shows the docstring's whole first line
    (click cuts it at 45 characters), and an argument reads ``SCENARIO.toml`` in the usage
    line and its help, not ``{SCENARIO.toml}`` and ``SCENARIO.toml <str>`` (typer ≥ 0.26)."""
    if not getattr(command, "short_help", None) and command.help:
        command.short_help = command.help.strip().split("\n\n")[0].replace("\n", " ")
    for param in command.params:
        if getattr(param, "param_type_name", "") != "argument":
            continue
        name = param.metavar or (param.name or "").upper()
        if hasattr(param, "display_type_rich"):
            param.display_type_rich = lambda ctx=None: None
        if hasattr(param, "_usage_display_name"):
            param._usage_display_name = lambda name=name: name
    for param in command.params:   # an option that takes a value and names no placeholder
        if getattr(param, "param_type_name", "") == "option" and not getattr(param, "is_flag", True) \
                and param.metavar is None and param.name:
            param.metavar = param.name.upper()


_PLAIN = {str: str, float: float, int: int, bool: bool}


def _plain_values(params) -> None:
    """typer (≥ 0.29) converts each value given on the command line through a pydantic
    ``TypeAdapter``: importing pydantic and building the adapters costs every command 0.2–0.4 s
    (more than ``validate`` of a ride). trackrider's options are all ``str``, ``int``, ``float``,
    a list of ``str`` or a flag, converted here in plain Python with pydantic's messages; anything
    else (or a typer without this hook) keeps typer's own conversion."""
    try:
        from typer._coercion import RuntimeParam
    except ImportError:
        return
    for param in params:
        desc = getattr(param, "type_descriptor", None)
        if getattr(param, "_runtime_param", False) is not None or desc is None or desc.is_file:
            continue
        annotation = desc.annotation
        if getattr(annotation, "__origin__", None) is list and getattr(annotation, "__args__", ()) == (str,):
            kind = list
        elif annotation in _PLAIN and (annotation is not bool or getattr(param, "is_flag", False)):
            kind = _PLAIN[annotation]
        else:
            continue
        info = desc.parameter_info
        if info.parser is not None or info.min is not None or info.max is not None or desc.is_choice:
            continue
        param._runtime_param = _plain_runtime_param(RuntimeParam)(parameter_info=info, annotation=annotation,
                                                                  kind=kind)


_PLAIN_CLASS = None


def _plain_runtime_param(base):
    """typer's ``RuntimeParam`` converting a value to ``str``, ``int``, ``float`` or ``list[str]`` (a
    flag's value is already a ``bool``)."""
    global _PLAIN_CLASS
    if _PLAIN_CLASS is None:
        from dataclasses import dataclass

        from typer._click.exceptions import BadParameter

        @dataclass(frozen=True)
        class Plain(base):
            kind: type = str

            def _coerce_value(self, value, param, ctx):
                if self.kind is list:
                    return [str(v) for v in value]
                if self.kind is str:
                    return str(value)
                if self.kind is bool:
                    if isinstance(value, bool):
                        return value
                    raise BadParameter("Input should be a valid boolean", ctx=ctx, param=param)
                try:
                    if self.kind is float:
                        return float(value)
                    try:
                        return int(value)
                    except ValueError:
                        number = float(value)     # "3.0" is 3, as pydantic reads it
                        if number.is_integer():
                            return int(number)
                        raise
                except (TypeError, ValueError, OverflowError):
                    what = "a number" if self.kind is float else "an integer"
                    noun = "number" if self.kind is float else "integer"
                    raise BadParameter(f"Input should be a valid {noun}, unable to parse string as {what}",
                                       ctx=ctx, param=param) from None

        _PLAIN_CLASS = Plain
    return _PLAIN_CLASS


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _fail(message: str, code: int) -> None:
    typer.echo(f"error: {_one_line(message)}", err=True)
    raise typer.Exit(code)


@contextmanager
def _guard():
    """Turn every failure into one ``error:`` line and an exit code (no tracebacks).

    Warnings raised meanwhile (e.g. a curve file with repeated points) are shown
    as one ``warning:`` line each after a successful command, and dropped after
    a failed one (whose only line is the error).
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with _errors_to_exit_codes():
            yield
    seen = set()
    for w in caught:
        text = _one_line(str(w.message))
        if text not in seen:
            seen.add(text)
            typer.echo(f"warning: {text}", err=True)


@contextmanager
def _errors_to_exit_codes():
    try:
        yield
    except (typer.Exit, typer.Abort):
        raise
    except InputError as exc:
        _fail(str(exc), 2)
    except SimulationError as exc:
        where = []
        if exc.t is not None:
            where.append(f"t = {exc.t:.4f} s")
        if exc.entity:
            where.append(f"car {exc.entity}")
        _fail(f"simulation failed{' at ' + ', '.join(where) if where else ''}: {exc}", 1)
    except KeyboardInterrupt:
        _fail("interrupted", 130)
    except Exception as exc:  # noqa: BLE001 - the last line of defence against tracebacks
        if os.environ.get("TRACKRIDER_DEBUG") == "1":
            raise
        _fail(f"internal error: {type(exc).__name__}: {exc} (set TRACKRIDER_DEBUG=1 for a traceback)", 1)


def _parse_sets(sets) -> dict | None:
    """``--set KEY=VALUE`` options → ``load_scenario`` overrides (VALUE is a TOML value)."""
    if not sets:
        return None
    import tomllib

    from trackrider.inputs import TOO_DEEP, parse_nested

    overrides = {}
    for item in sets:
        key, sep, text = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise InputError(f"--set wants KEY=VALUE (e.g. train.red.car.mass=650), got {item!r}")
        try:
            doc = parse_nested(tomllib.loads, f"v = {text.strip()}")
        except tomllib.TOMLDecodeError:
            doc = TOO_DEEP
        # a bare word (wheels=railway) or too deep a value: a string; the scenario's check refuses it
        value = text.strip() if doc is TOO_DEEP else doc["v"]
        overrides[key] = value
    return overrides


SET_HELP = "Override a scenario key, e.g. --set train.red.car.mass=650 (repeatable; VALUE in TOML syntax)."


def _version(value: bool):
    if value:
        from trackrider.cache import cache_root

        typer.echo(f"trackrider {__version__}")
        typer.echo(f"compiled kernels: {cache_root()} (safe to delete; pip uninstall leaves it behind)")
        raise typer.Exit(0)


@app.callback()
def main(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                 help="Print the version and where compiled kernels are cached, and exit."),
):
    """Simulate trains and roller coasters on 3D spline tracks.

    \b
    Example:
      trackrider run scenarios/classic_coaster.toml
    """


# --------------------------------------------------------------------------- run


def _stderr_is_terminal() -> bool:
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def _summary_table(summary: dict, wall_s: float, out_dir: Path | None, kernel_s: float = 0.0,
                   units: str = "metric", section_names: dict | None = None):
    from rich.table import Table

    from trackrider.report.units import Units, top_speed

    u = Units(units)

    sim_s = float(summary.get("simulated_s", 0.0) or 0.0)
    wall = wall_s                        # what the user waited for: building, compiling, running
    events = summary.get("events", []) or []
    kinds: dict = {}
    for ev in events:
        kinds[ev.get("kind", "?")] = kinds.get(ev.get("kind", "?"), 0) + 1
    table = Table(title=f"trackrider: {summary.get('status', '?')}", show_header=True, header_style="bold")
    table.add_column("train")
    table.add_column("top speed", justify="right")
    table.add_column("G vertical min / max", justify="right")
    table.add_column("max |G lat|", justify="right")
    table.add_column("max |G long|", justify="right")
    table.add_column("airtime", justify="right")
    for name, t in (summary.get("trains") or {}).items():
        at = t.get("at") or {}

        def f(key, fmt="{:.2f}"):
            v = t.get(key)
            text = "—" if v is None or (isinstance(v, float) and math.isnan(v)) else fmt.format(v)
            s = (at.get(key) or {}).get("s") if text != "—" else None
            # where on the track it happened: s in the shown length unit
            return text if s is None else f"{text} (s {u.length(s):.0f} {u.length_unit})"
        vmax, vkey = top_speed(t)      # the largest |speed|: a train running towards −s counts too
        if vmax is None:
            speed = "—"
        elif u.system == "metric":
            speed = f(vkey, f"{vmax:.1f} m/s ({vmax * u.speed_factor:.1f} km/h)")
        else:
            speed = f(vkey, f"{vmax * u.speed_factor:.1f} mph")
        table.add_row(str(name), speed, f"{f('min_g_vertical')} / {f('max_g_vertical')}",
                      f("max_abs_g_lateral"), f("max_abs_g_longitudinal"), f("airtime_s", "{:.2f} s"))
    for name, b in (summary.get("bodies") or {}).items():
        vmax = b.get("max_speed")
        text = "—" if vmax is None else (f"{vmax:.1f} m/s" if u.system == "metric"
                                         else f"{vmax * u.speed_factor:.1f} mph")
        table.add_row(f"{name} (body)", text, "—", "—", "—", "—")
    ev_text = ", ".join(f"{k} ×{n}" for k, n in sorted(kinds.items())) or "none"
    if kernel_s > 0.5:      # compiling the kernels (a first run) says nothing of the speed: said apart
        running = wall - kernel_s
        timing = (f"simulated {sim_s:.2f} s in {wall:.2f} s wall time: {kernel_s:.1f} s compiling the kernels "
                  f"(first run only), then {running:.2f} s simulating "
                  f"({sim_s / running if running > 0 else float('inf'):.1f}× real time)")
    else:
        timing = (f"simulated {sim_s:.2f} s in {wall:.2f} s wall time "
                  f"({sim_s / wall if wall > 0 else float('inf'):.1f}× real time)")
    lines = [
        f"status: {summary.get('status', '?')}    events: {len(events)} ({ev_text})",
        f"{timing}, {summary.get('steps', '?')} steps",
    ]
    op = summary.get("operation")
    if op:      # a ride with stations / block sections: its capacity and holds
        tph, rph = op.get("throughput_trains_per_hour"), op.get("riders_per_hour")
        names = section_names or {}
        held = ", ".join(f"{names.get(k, k)} {v['held_s']:.0f} s"
                         for k, v in (op.get("block_sections") or {}).items() if v.get("held_s"))
        lines.append("operation: " + ("throughput not measured (no train dispatched a second time)"
                                      if tph is None else f"{tph:.1f} trains/h, {rph:.0f} riders/h")
                     + (f"; held: {held}" if held else ""))
    if summary.get("status") == "stalled" and summary.get("message"):
        lines.append(f"stalled: {summary['message']}")
    if summary.get("check"):      # the scenario's [check] envelope (docs/checking.md)
        from trackrider.check.results import status_lines

        lines.extend(status_lines(summary["check"]))
    if out_dir is not None:
        lines.append(f"outputs: {out_dir / 'timeseries.csv'}, {out_dir / 'summary.json'}")
    return table, lines


@app.command()
def run(
    scenario: str = typer.Argument(..., metavar="SCENARIO.toml", help="The scenario file."),
    out: Optional[str] = typer.Option(None, "--out", "-o", metavar="DIR",
                                      help="Output folder (default: results/<scenario stem>/)."),
    duration: Optional[float] = typer.Option(None, "--duration", "-d", metavar="SECONDS",
                                             help="Simulate SECONDS instead of the scenario's duration."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace the outputs in an existing DIR."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar and no summary table."),
    sets: Optional[list[str]] = typer.Option(None, "--set", metavar="KEY=VALUE", help=SET_HELP),
    report: bool = typer.Option(False, "--report", help="Also write DIR/report.html (see 'trackrider report')."),
    units: str = typer.Option("metric", "--units", help="metric (m, km/h) | imperial (ft, mph): what is "
                                                        "shown; the files stay SI."),
):
    """Simulate a scenario; write DIR/timeseries.csv and DIR/summary.json.

    \b
    Example:
      trackrider run scenarios/classic_coaster.toml --out results/classic --duration 20
    """
    with _guard():
        _check_units(units)
        from trackrider.scenario import load_scenario

        sc = load_scenario(scenario, _parse_sets(sets))
        if duration is not None:
            if not (math.isfinite(duration) and duration > 0):
                raise InputError(f"--duration must be a positive number of seconds, got {duration:g}")
            steps = duration / sc.simulation.dt
            if steps > 1e9:
                raise InputError(f"--duration {duration:g} s at dt = {sc.simulation.dt:g} s would take "
                                 f"{steps:.3g} steps (more than 1e+09)")
        out_dir = Path(out) if out else Path("results") / sc.name
        from trackrider.outputs import check_results_dir

        check_results_dir(out_dir, overwrite, report=report)
        from trackrider import cache
        from trackrider.sim import simulate

        t0 = time.perf_counter()
        c0 = cache.compile_seconds()
        if _stderr_is_terminal() and not quiet:
            result = _simulate_with_bar(simulate, sc, out_dir, duration, overwrite)
        else:
            cache.watch_compiles()
            result = simulate(sc, out_dir, duration=duration, overwrite=overwrite, progress=None, keep_inputs=True)
        wall = time.perf_counter() - t0
        compiled = cache.compile_seconds() - c0
        if cache.cache_problem():
            warnings.warn(cache.cache_problem())
        summary = getattr(result, "summary", None) or {}
        if not quiet:
            from trackrider.report.data import section_labels

            names = {f"section[{i}]": label for i, (label, sec) in enumerate(zip(section_labels(sc), sc.sections))
                     if not getattr(sec, "name", "")}
            _print_summary(*_summary_table(summary, wall, out_dir, compiled, units, names))
        if report:
            from trackrider.report import write_report

            written = write_report(out_dir, out_dir / "report.html", units=units, overwrite=overwrite)
            if not quiet:
                typer.echo(f"report: {written}")
        if summary.get("status") == "diverged" or getattr(result, "status", "") == "diverged":
            message = getattr(result, "message", "") or "simulation diverged"
            _fail(f"{message}; outputs recorded so far kept in {out_dir}", 1)


def _print_summary(table, lines) -> None:
    """The summary table and lines on stdout: on a terminal at its width; into a file or a pipe at the
    table's own width, so no cell is wrapped."""
    from rich.console import Console

    if sys.stdout.isatty():
        console = Console()
    else:
        console = Console(width=max(80, Console(width=10_000).measure(table).maximum))
    console.print(table)
    for line in lines:
        console.print(line, highlight=False, soft_wrap=True)


def _simulate_with_bar(simulate, sc, out_dir, duration, overwrite):
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    total = float(duration if duration is not None else sc.simulation.duration)
    columns = (TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed:.1f}/{task.total:.1f} s"),
               TimeElapsedColumn(), TimeRemainingColumn())
    from trackrider import cache

    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        # until the first chunk is done the kernels load from the cache, or compile (first run)
        task = bar.add_task("loading kernels", total=total)
        cache.watch_compiles(on_start=lambda: bar.update(
            task, description="compiling kernels (first run only, ~15 s)"))

        def progress(done, total_=None):
            # simulate reports (simulated seconds so far, total seconds)
            if total_:
                bar.update(task, completed=float(done), total=float(total_), description="simulating")
            else:
                bar.update(task, completed=float(done), description="simulating")

        try:
            return simulate(sc, out_dir, duration=duration, overwrite=overwrite, progress=progress,
                            keep_inputs=True)
        finally:
            cache.watch_compiles(on_start=None)


def _check_units(units: str) -> None:
    from trackrider.report.units import SYSTEMS

    if units not in SYSTEMS:
        raise InputError(f"--units must be one of {', '.join(SYSTEMS)}, got {units!r}")


# --------------------------------------------------------------------------- validate, curve


@app.command()
def validate(
    scenario: str = typer.Argument(..., metavar="SCENARIO.toml", help="The scenario file."),
    sets: Optional[list[str]] = typer.Option(None, "--set", metavar="KEY=VALUE", help=SET_HELP),
):
    """Check a scenario and every file it names, without simulating; prints ok.

    \b
    Example:
      trackrider validate scenarios/funicular.toml
    """
    _python_kernels_for_validate()
    with _guard():
        from trackrider.scenario import build_world, load_scenario

        # building the world (without running it) also catches what the physics refuses
        sc = load_scenario(scenario, _parse_sets(sets))
        build_world(sc)
        _warn_design(sc)
        typer.echo("ok")


def _warn_design(sc) -> None:
    """The design checks of a scenario's tracks, one ``warning:`` line each (docs/checking.md)."""
    from trackrider.check.design import design_warnings

    for text in design_warnings(sc):
        warnings.warn(text)


def _python_kernels_for_validate():
    """``validate`` builds the world once and never steps it, so in a process of its own it makes
    the kernels lazy (``trackrider.jit.lazy_kernels``): their Python originals run while the arrays
    are small, never importing numba (importing it and loading compiled kernels costs a process
    0.3–0.5 s, more than the whole check of a ride); a long point track switches to the compiled
    kernels (bench/startup.py). Only when this process was started as ``trackrider validate`` and
    has not loaded numba yet (never in a test runner or a program that imports trackrider)."""
    if "numba" not in sys.modules and sys.argv[1:2] == ["validate"]:
        from trackrider.jit import lazy_kernels

        lazy_kernels()


@app.command()
def curve(
    path: str = typer.Argument(..., metavar="CURVE_FILE|SCENARIO.toml",
                               help="A curve file (points CSV, NL2 CSV, JSON), or a scenario (its track)."),
    format: str = typer.Option("auto", "--format", "-f", metavar="FORMAT",
                               help="Input format of a curve file: auto | points | nl2 | json."),
    track: Optional[str] = typer.Option(None, "--track", metavar="NAME",
                                        help="The scenario's track (default: its first)."),
    export: Optional[str] = typer.Option(None, "--export", metavar="FILE",
                                         help="Write the track (a scenario's, or the curve file's) to FILE."),
    export_format: str = typer.Option("nl2", "--export-format", metavar="FORMAT",
                                      help="nl2 (NoLimits 2 CSV, default) | points | json."),
    plot: Optional[str] = typer.Option(None, "--plot", metavar="FILE.png",
                                       help="Also draw the track's side elevation and top view to FILE.png."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace an existing FILE (--export or --plot)."),
):
    """Print a track's length, heights, biggest drop, radii, bank, inversions (a curve file or a scenario's).

    With --export, write the track as a curve file instead; with --plot, also
    draw its side elevation and top view.

    \b
    Example:
      trackrider curve scenarios/classic_coaster.toml
      trackrider curve curves/first_drop.csv --plot first_drop.png
      trackrider curve scenarios/force_designed.toml --track main --export fvd.csv
    """
    with _guard():
        formats = ("auto", "points", "nl2", "json")
        if format not in formats:
            raise InputError(f"--format must be one of {', '.join(formats)}, got {format!r}")
        p = Path(path)
        if not p.exists():
            raise InputError("file not found", path=p)
        if p.is_dir():
            raise InputError("is a directory, not a curve file", path=p)
        from trackrider.curves.io import EXPORT_FORMATS, looks_like_curve_file
        from trackrider.outputs import atomic_file, check_out_file

        # every output checked before anything is read or written
        if plot is not None:
            if not plot.lower().endswith(".png"):
                raise InputError(f"--plot must name a .png file, got {plot!r}")
            check_out_file(plot, overwrite, where="--plot")
        if export is not None:
            if export_format not in EXPORT_FORMATS:
                raise InputError(f"--export-format must be one of {', '.join(EXPORT_FORMATS)}, got {export_format!r}")
            out = check_out_file(export, overwrite, where="--export", ours=looks_like_curve_file)
        tr, name, what, sc = _curve_of(p, format, track)
        if export is not None:      # the track as a curve file (a temporary name, then renamed)
            from trackrider.curves.io import save_curve

            with atomic_file(out) as tmp:
                save_curve(tr, tmp, export_format)
            typer.echo(f"wrote {out} ({export_format}, length {tr.length:.3f} m)")
        else:
            from trackrider.curves.io import format_curve_report, track_report

            typer.echo(format_curve_report(track_report(tr, name, what)))
            for text in _design_check(p, tr, sc, track):
                warnings.warn(text)
        if plot is not None:
            from trackrider.report.figures import plot_layout

            with atomic_file(plot) as tmp:
                plot_layout(tr, tmp, title=name)
            typer.echo(f"wrote {plot}")


def _curve_of(p: Path, format: str, track: Optional[str]):
    """The track of ``p`` (a scenario's named or first track, or a curve file), its name and how it
    was made, for ``curve``."""
    if p.suffix.lower() == ".toml":
        if format != "auto":
            raise InputError("--format is the input format of a curve file; the output's is --export-format")
        from trackrider.scenario import load_scenario

        sc = load_scenario(p)
        names = [t.name for t in sc.tracks]
        if not names:
            raise InputError("the scenario has no [[track]]", path=p, where="track")
        name = names[0] if track is None else track
        if name not in names:
            raise InputError(f"no track named {name!r} (tracks: {', '.join(names)})", path=p, where="--track")
        tc = sc.track_by_name(name)
        pieces = [seg for seg in tc.segments or [] if not (isinstance(seg, dict) and seg.get("type") == "start")]
        what = ("designed from forces" if getattr(tc.track, "design", None) is not None
                else f"{len(pieces)} segments" if tc.segments else f"curve file {tc.curve}")
        return tc.track, f"{p} track {name!r}", what, sc
    if track is not None:
        raise InputError("--track names a scenario's track; this is a curve file", path=p)
    from trackrider.curves import load_curve
    from trackrider.curves.io import file_format

    tr = load_curve(p, format=format)
    return tr, str(p), f"{file_format(p, format)}, {len(tr.points)} points", None


def _design_check(p: Path, tr, sc, track: Optional[str]) -> list:
    """The design checks' warnings (docs/checking.md) of the track ``curve`` shows: a scenario's
    track at its trains' speeds, a curve file's at the speed of a car cresting its highest point."""
    if sc is not None:
        from trackrider.check.design import design_warnings

        return design_warnings(sc, track if track is not None else sc.tracks[0].name)
    from trackrider.check.design import energy_speed, track_findings

    return [f.message for f in track_findings(tr, energy_speed(tr, None), label=f"{p}: design check")]


# --------------------------------------------------------------------------- plot, render


@app.command()
def plot(
    results_dir: str = typer.Argument(..., metavar="RESULTS_DIR", help="A folder written by 'trackrider run'."),
    out: str = typer.Option(..., "--out", "-o", metavar="FILE.png", help="The PNG to write."),
    car: int = typer.Option(1, "--car", metavar="N", help="Car number in the train (1 = lead car)."),
    train: Optional[str] = typer.Option(None, "--train", metavar="NAME",
                                        help="Train (or body) name (default: the first in the file)."),
    units: str = typer.Option("metric", "--units", help="metric (m, km/h) | imperial (ft, mph)."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace an existing FILE.png."),
):
    """Plot G-forces and speed against time and against track position (PNG).

    Given a sweep folder, plots each headline figure against each sweep axis.

    \b
    Example:
      trackrider plot results/classic_coaster --out ride.png --car 1
    """
    with _guard():
        _check_units(units)
        if not out.lower().endswith(".png"):
            raise InputError(f"--out must name a .png file, got {out!r}")
        from trackrider.outputs import check_out_file
        from trackrider.sweep import is_sweep_dir

        check_out_file(out, overwrite)

        if is_sweep_dir(results_dir):            # a sweep: each headline figure against each axis
            from trackrider.sweep import plot_sweep

            written = plot_sweep(results_dir, out)
        else:
            from trackrider.plot import plot_results

            written = plot_results(results_dir, out, car=car, train=train, units=units)
        typer.echo(f"wrote {written}")


@app.command()
def report(
    results_dir: str = typer.Argument(..., metavar="RESULTS_DIR",
                                      help="A folder written by 'trackrider run' (or 'trackrider sweep')."),
    out: Optional[str] = typer.Option(None, "--out", "-o", metavar="FILE.html",
                                      help="The page to write (default: RESULTS_DIR/report.html)."),
    units: str = typer.Option("metric", "--units", help="metric (m, km/h) | imperial (ft, mph)."),
    compare: Optional[str] = typer.Option(None, "--compare", metavar="OTHER_DIR",
                                          help="Another run's results, drawn dashed on the same axes."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace an existing report."),
):
    """Write one self-contained HTML page of a run (or a sweep): extremes, height profile, G, layout.

    \b
    Example:
      trackrider report results/classic_coaster --units imperial
    """
    with _guard():
        _check_units(units)
        from trackrider.report import write_report

        written = write_report(results_dir, out, units=units, compare=compare, overwrite=overwrite)
        typer.echo(f"wrote {written}")


@app.command()
def render(
    source: str = typer.Argument(..., metavar="SCENARIO.toml|RESULTS_DIR",
                                 help="A scenario (simulated first) or a results folder."),
    out: str = typer.Option(..., "--out", "-o", metavar="FILE", help="FILE.mp4, FILE.gif or FILE.png (a still)."),
    camera: str = typer.Option("chase", "--camera", metavar="NAME", help="onride | chase | overview."),
    fps: Optional[float] = typer.Option(None, "--fps", metavar="N", help="Frames per second (default 30 for mp4, 20 for gif)."),
    size: Optional[str] = typer.Option(None, "--size", metavar="WxH",
                                       help="Frame size in pixels (default 1280x720; gif 480x270)."),
    at_time: Optional[float] = typer.Option(None, "--time", metavar="SECONDS",
                                            help="png: the instant of the still; video: the start time, s."),
    speed: float = typer.Option(1.0, "--speed", metavar="FACTOR", help="Simulated seconds per video second."),
    quality: Optional[str] = typer.Option(None, "--quality", metavar="LEVEL", help="draft | normal | high, or 0..10."),
    duration: Optional[float] = typer.Option(None, "--duration", metavar="SECONDS",
                                             help="Render SECONDS of ride from --time (the video lasts SECONDS / --speed)."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace an existing FILE."),
    no_hud: bool = typer.Option(False, "--no-hud", help="No overlay (time, speed, height, G)."),
    units: str = typer.Option("metric", "--units", help="metric (km/h, m/s, m) | imperial (mph, ft)."),
    train: Optional[str] = typer.Option(None, "--train", metavar="NAME",
                                        help="Train the on-ride camera and the overlay follow (default: the first)."),
    car: Optional[int] = typer.Option(None, "--car", metavar="N", help="Car of that train (1 = lead car, the default)."),
):
    """Render the ride off screen to a video (mp4, gif) or one still (png).

    \b
    Example:
      trackrider render results/classic_coaster --out ride.mp4 --camera onride
    """
    with _guard():
        src = Path(source)
        if not src.exists():
            raise InputError("not found (give a scenario .toml or a results folder)", path=src)
        if Path(out).suffix.lower() not in (".mp4", ".gif", ".png"):
            raise InputError(f"--out must end in .mp4, .gif or .png, got {out!r}")
        from trackrider.outputs import check_out_file

        check_out_file(out, overwrite)
        q = quality
        if q is not None and q.strip().isdigit():
            q = int(q)
        from trackrider.render import render_ride

        written = render_ride(src, out, camera=camera, fps=fps, size=size, time=at_time, speed=speed,
                              quality=q, duration=duration,
                              progress=True if (_stderr_is_terminal() and not quiet) else None,
                              train=train, car=car, hud=not no_hud, units=units,
                              notice=lambda m: typer.echo(m, err=True))
        typer.echo(f"wrote {written or out}")


# --------------------------------------------------------------------------- check, compare


@app.command()
def check(
    results_dir: str = typer.Argument(..., metavar="RESULTS_DIR", help="A folder written by 'trackrider run'."),
    envelope: str = typer.Option(..., "--envelope", "-e", metavar="FILE.toml",
                                 help="The acceleration envelope (docs/checking.md)."),
    restraint: Optional[str] = typer.Option(None, "--restraint", metavar="CLASS",
                                            help="The envelope's restraint class to use ([restraint.CLASS])."),
    save: bool = typer.Option(False, "--save", help="Also record the check in RESULTS_DIR/summary.json "
                                                    "(its check block and envelope_exceeded events)."),
    as_json: bool = typer.Option(False, "--json", help="Print the check block as JSON instead of lines."),
):
    """Check a run's filtered rider G against an acceleration envelope; exit 3 when it is exceeded.

    \b
    Example:
      trackrider check results/classic_coaster --envelope docs/examples/envelope_example.toml
    """
    code = 0
    with _guard():
        from trackrider.check.envelope import load_envelope
        from trackrider.check.results import add_to_summary, check_results_dir, status_lines
        from trackrider.results_folder import held

        env = load_envelope(envelope, restraint)
        with held(results_dir) if save else nullcontext():     # no run replaces the results meanwhile
            result, summary = check_results_dir(results_dir, env, notice=lambda m: typer.echo(m, err=True))
            if save:
                from trackrider.record import write_summary

                write_summary(results_dir, add_to_summary(summary, result))
        if as_json:
            import json

            from trackrider.record import _json_clean

            typer.echo(json.dumps(_json_clean(result), indent=2))
        else:
            for line in status_lines(result):
                typer.echo(line)
        code = 0 if result["passed"] else 3
    if code:
        raise typer.Exit(code)


@app.command()
def compare(
    results_dir: str = typer.Argument(..., metavar="RESULTS_DIR", help="A folder written by 'trackrider run'."),
    measured: str = typer.Argument(..., metavar="MEASURED.csv", help="The measured trace (a CSV with a header)."),
    time_col: str = typer.Option(..., "--time", metavar="COLUMN", help="The time column (s)."),
    accel: str = typer.Option(..., "--accel", metavar="FWD,LEFT,UP",
                              help="The three acceleration columns in the sensor's forward, left and up axes; "
                                   "-NAME reverses one (write --accel=-ax,ay,az)."),
    units: str = typer.Option("g", "--units", metavar="UNITS", help="Of the accelerations: g | m/s2."),
    altitude: Optional[str] = typer.Option(None, "--altitude", metavar="COLUMN",
                                           help="An altitude column (m), compared up to a constant datum."),
    speed: Optional[str] = typer.Option(None, "--speed", metavar="COLUMN", help="A speed column (m/s)."),
    train: Optional[str] = typer.Option(None, "--train", metavar="NAME", help="The run's train (default: the first)."),
    car: int = typer.Option(1, "--car", metavar="N", help="Its car the sensor rode in (1 = lead car)."),
    rotate: bool = typer.Option(False, "--rotate", help="Fit a fixed sensor rotation by least squares."),
    plot: Optional[str] = typer.Option(None, "--plot", metavar="FILE.png", help="Also draw the comparison."),
    save: bool = typer.Option(False, "--save", help="Also write RESULTS_DIR/compare.json (the report shows it)."),
    as_json: bool = typer.Option(False, "--json", help="Print the comparison as JSON."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace an existing plot or compare.json."),
):
    """Compare a run with a measured ride: align in time (and rotation), RMS and peak error per axis.

    \b
    Example:
      trackrider compare results/classic_coaster ride.csv --time t --accel ax,ay,az --rotate --plot cmp.png
    """
    with _guard():
        from trackrider.check.compare import compare_lines, compare_run, plot_comparison, read_measured
        from trackrider.outputs import check_out_file, is_compare_json
        from trackrider.results_folder import held

        if plot is not None:
            if not plot.lower().endswith(".png"):
                raise InputError(f"--plot must name a .png file, got {plot!r}")
            check_out_file(plot, overwrite, where="--plot")
        target = Path(results_dir) / "compare.json"
        if save:
            check_out_file(target, overwrite, where="--save", ours=is_compare_json)
        meas = read_measured(measured, time_col, accel.split(","), units, altitude, speed)
        import json

        from trackrider.inputs_copy import load_results_scenario
        from trackrider.outputs import atomic_file
        from trackrider.record import _json_clean, read_summary

        with held(results_dir) if save else nullcontext():     # no run replaces the results meanwhile
            scenario, _ = load_results_scenario(results_dir, read_summary(results_dir))
            result = compare_run(results_dir, meas, train=train, car=car, rotate=rotate, scenario=scenario)
            if save:
                with atomic_file(target) as tmp:
                    tmp.write_text(json.dumps(_json_clean(result.as_dict())) + "\n", encoding="utf-8")
        if as_json:
            typer.echo(json.dumps(_json_clean(result.summary), indent=2))
        else:
            for line in compare_lines(result.summary):
                typer.echo(line)
        if plot is not None:
            typer.echo(f"wrote {plot_comparison(result.as_dict(), plot)}")
        if save:
            typer.echo(f"wrote {target}")


# --------------------------------------------------------------------------- sweep


@app.command()
def sweep(
    sweep_file: str = typer.Argument(..., metavar="SWEEP.toml", help="A sweep file (see docs/sweeps.md)."),
    jobs: Optional[int] = typer.Option(None, "--jobs", "-j", metavar="N", help="Worker processes (default: all cores)."),
    scheduler: Optional[str] = typer.Option(None, "--scheduler", metavar="ADDRESS",
                                            help="A Dask scheduler (tcp://host:8786) or 'local'."),
    out: Optional[str] = typer.Option(None, "--out", "-o", metavar="DIR",
                                      help="Sweep folder (default: results/<sweep stem>/)."),
    resume: bool = typer.Option(False, "--resume", help="Run only what an interrupted sweep left."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace an existing sweep folder."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar and no summary."),
):
    """Run one base scenario many times with keys overridden (grid, zip, random, LHS).

    \b
    Example:
      trackrider sweep scenarios/sweep_rollback.toml -j 2
    """
    with _guard():
        if jobs is not None and jobs < 1:
            raise InputError(f"--jobs must be ≥ 1, got {jobs}")
        from trackrider.sweep import sweep_command

        code = sweep_command(sweep_file, jobs=jobs, scheduler=scheduler, out=out, resume=resume,
                             overwrite=overwrite, quiet=quiet, echo=typer.echo)
    if code:
        raise typer.Exit(code)


if __name__ == "__main__":  # pragma: no cover
    app()
