"""``render_ride``: a scenario (simulated first) or a results directory (replayed)
to an MP4, a GIF or a PNG still, off screen.

VTK is imported only inside ``render_frames`` (via ``trackrider.render.scene``),
after the off-screen window has been selected and a subprocess probe has shown
that rendering works.
"""
from __future__ import annotations

import math
import queue
import sys
import threading
import tempfile
import time as _time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from trackrider.errors import InputError
from trackrider.render.cameras import CAMERAS, CHASE_UP, Follow, camera_path
from trackrider.render.probe import check_rendering
from trackrider.render.quality import Quality, quality_preset
from trackrider.render.recording import Recording, quat_to_matrix
from trackrider.render.spec import SceneSpec, scene_from_scenario

FORMATS = (".mp4", ".gif", ".png")
#: defaults when ``fps``/``size`` are None: video, GIF
DEFAULT_FPS = {".mp4": 30.0, ".gif": 20.0, ".png": 30.0}
DEFAULT_SIZE = {".mp4": (1280, 720), ".gif": (480, 270), ".png": (1280, 720)}
MAX_SIZE = 7680


@dataclass
class RenderStats:
    """Timings of one render, s: building the scene, rendering + reading back
    frames, encoding (time spent handing frames to the encoder and closing it)."""

    frames: int = 0
    build_s: float = 0.0
    render_s: float = 0.0
    encode_s: float = 0.0
    total_s: float = 0.0
    extra: dict = field(default_factory=dict)


def parse_size(size, out=None) -> tuple[int, int]:
    """``(w, h)`` or ``"WxH"`` → a pair of positive ints (px); errors quote what was given."""
    typed = size
    if isinstance(size, str):
        parts = size.lower().replace("×", "x").split("x")
        try:
            size = tuple(int(p) for p in parts)
        except ValueError:
            size = None
    try:
        w, h = (int(v) for v in size)
        if float(w) != float(size[0]) or float(h) != float(size[1]):
            raise ValueError
    except (TypeError, ValueError):
        raise InputError(f"size must be WxH in pixels (e.g. 1280x720), got {typed!r}", where="--size") from None
    if not (16 <= w <= MAX_SIZE and 16 <= h <= MAX_SIZE):
        raise InputError(f"size must be 16..{MAX_SIZE} pixels each way, got {w}x{h}", where="--size")
    return w, h


def _follow_for(spec: SceneSpec, labels, train: str | None = None, car: int | None = None,
                camera: str = "onride") -> Follow:
    """Follow ``train`` (default: the first train recorded, else the first
    entity), its car ``car`` (1 = the lead car; by default the last car for the
    chase camera, which rides behind it, else the lead car): the car the on-ride
    camera rides in, the chase camera keeps in view and the overlay reads.
    Raises InputError (``--train``, ``--car``) on a name or number the
    recording does not have."""
    names = [tr.name for tr in spec.trains if any(n == tr.name for n, _c in labels)]
    others = [n for n in dict.fromkeys(n for n, _c in labels) if n not in names and not n.endswith(".body")]
    if train is not None and train not in names + others:
        raise InputError(f"no train or body named {train!r} in the recording "
                         f"(names: {', '.join(names + others) or 'none'})", where="--train")
    name = train if train is not None else (names[0] if names else None)
    tr = next((t for t in spec.trains if t.name == name), None)
    if tr is None:  # a free body: followed in the world's axes
        idx = [i for i, (n, _c) in enumerate(labels) if n == name] if name else [0]
        if car is not None and not (1 <= car <= len(idx)):
            raise InputError(f"{name!r} has cars 1..{len(idx)}, got {car}", where="--car")
        ride = idx[0] if car is None else idx[car - 1]
        box = spec.box_of(labels[ride])
        size = tuple(box[0]) if box is not None else (0.5, 0.5, 0.5)
        return Follow(lead=idx[0], last=idx[-1], ride=ride, chase=ride, ahead=ride, free=True,
                      car_length=size[0], car_width=size[1], car_height=size[2], scale=_scale(size))
    idx = [i for i, (n, _c) in enumerate(labels) if n == tr.name]
    if car is not None and not (1 <= car <= len(idx)):
        raise InputError(f"train {tr.name!r} has cars 1..{len(idx)}, got {car}", where="--car")
    k = (len(idx) if camera == "chase" else 1) if car is None else int(car)
    anchor = ride = idx[k - 1]
    chase_up = CHASE_UP
    if tr.suspended or tr.bogies != "none":  # the riders sit in the bodies, recorded as <train>.body
        bodies = [i for i, (n, _c) in enumerate(labels) if n == f"{tr.name}.body"]
        hang = [i for i in bodies if labels[i][1] == tr.frame_car(labels[ride][1])]
        ride = hang[0] if hang else ride
    if tr.suspended:  # the chase camera follows the trolleys (the track's axes, not the swing), at the cars' level
        chase_up = 0.8 - tr.hang - tr.height
    size = (tr.length, tr.width, tr.height)
    return Follow(
        lead=idx[0],
        last=idx[-1],
        chase_up=chase_up,
        car_length=tr.length,
        car_width=tr.width,
        car_height=tr.height,
        rider_above_cg=tr.rider_height - tr.cg_height,
        ride=ride,
        chase=anchor,
        ahead=idx[k - 1 - min(k - 1, 3)],
        scale=_scale(size),
    )


def _scale(size) -> float:
    """The chase camera's scale for a car of ``size`` (l, w, h) m: 1 for a car 2 m long or larger,
    down to 0.1 (closer, nearer the structure) for a small one."""
    return float(np.clip(max(size) / 2.0, 0.1, 1.0))


def _entity_sizes(spec: SceneSpec, labels) -> list:
    """(length, width, height) m of every recorded entity the scene knows, else None."""
    out = []
    for label in labels:
        ent, role = spec.entity(label)
        if ent is None:
            out.append(None)
        elif role == "body":
            out.append(tuple(ent.size))
        elif role == "trolley":
            out.append((1.2, 0.8, 0.6))
        else:
            out.append((ent.length, ent.width, ent.height))
    return out


def _hud_entity(labels, follow: Follow, spec: SceneSpec | None = None) -> int:
    """The recorded row the overlay reads: the car followed (a suspended car's
    row, which carries its hanging body's G, rather than the body's own; a car
    on bogies: its front frame's, which carries its body's G)."""
    name, car = labels[follow.ride]
    if name.endswith(".body"):
        tr = next((t for t in spec.trains if t.name == name[: -len(".body")]), None) if spec is not None else None
        for i, (n, c) in enumerate(labels):
            if n == name[: -len(".body")] and (c == car if tr is None or tr.bogies == "none"
                                               else tr.frame_car(c) == car):
                return i
    return follow.ride


def _layout_points(recording: Recording, spec: SceneSpec) -> np.ndarray:
    """Points the overview must show: track samples and (a subsample of) the recorded positions, m."""
    step = max(len(recording.times) // 200, 1)
    pts = [recording.positions[::step].reshape(-1, 3)]
    for tr in spec.tracks:
        s = np.linspace(0.0, float(tr.geometry.length), 400)
        pts.append(np.asarray(tr.geometry.frames(s).position, dtype=float))
    allp = np.concatenate(pts)
    return allp[np.all(np.isfinite(allp), axis=1)]


def _scene_bounds(recording: Recording, spec: SceneSpec) -> np.ndarray:
    allp = _layout_points(recording, spec)
    return np.array([allp.min(axis=0), allp.max(axis=0)])


def frame_times(t_start: float, t_end: float, fps: float, speed: float) -> np.ndarray:
    """Simulated time of each video frame: ``t_start + i * speed / fps`` up to ``t_end`` (s)."""
    step = speed / fps
    n = int(math.floor((t_end - t_start) / step + 1e-9)) + 1
    return t_start + step * np.arange(max(n, 1))


@dataclass
class Prepared:
    """A ride ready to render: the ``scene`` (``RideScene``, to be closed), what the
    cameras ``follow``, the camera path ``cam`` and the poses ``positions``,
    ``rotations`` at the frame times padded by ``pad`` frames each side (frame i
    is index ``i + pad``), and the overlay's ``values`` per frame."""

    scene: object
    follow: Follow
    cam: object
    positions: np.ndarray
    rotations: np.ndarray
    pad: int
    values: list


def prepare_frames(recording, spec, times, camera, size, fps, speed, quality, train=None, car=None,
                   hud=True) -> Prepared:
    """Build the scene of ``recording`` and the camera path for the frame ``times`` (s)."""
    from trackrider.render import scene as scene_mod
    from trackrider.render.hud import hud_values

    q = quality if isinstance(quality, Quality) else quality_preset(quality)
    bounds = _scene_bounds(recording, spec)
    follow = _follow_for(spec, recording.labels, train, car, camera)
    ride_ent, _role = spec.entity(recording.labels[follow.ride])
    seat = None
    if camera == "onride" and ride_ent is not None and hasattr(ride_ent, "seat_layout"):
        rows, seats = ride_ent.seat_layout()
        seat = (0, (seats - 1) // 2)
    scene = scene_mod.RideScene(spec, recording.labels, bounds, size, q,
                                headless=follow.ride if seat is not None else None, eye_seat=seat,
                                hud=hud and not q.simple)
    try:
        model = scene.models[follow.ride]
        if seat is not None and model is not None and model.eyes:
            row = model.eyes[min(seat[0], len(model.eyes) - 1)]
            follow.eye = row[min(seat[1], len(row) - 1)]
            follow.view = model.view
        if camera == "chase":
            from trackrider.render.chase import ChaseScene, static_capsules

            structure, space = static_capsules(scene.static, spec)
            follow.scene = ChaseScene(structure, space, scene.ground, _entity_sizes(spec, recording.labels))
        # pad the camera path so that smoothing near the ends sees the real motion
        pad = int(math.ceil(2.5 * 1.0 * fps / max(speed, 1e-9))) if len(times) > 1 else int(math.ceil(2.5 * fps))
        step = speed / fps
        padded = np.concatenate([times[0] - step * np.arange(pad, 0, -1), times, times[-1] + step * np.arange(1, pad + 1)])
        pos_all, quat_all = recording.poses_at(padded)
        rot_all = quat_to_matrix(quat_all)
        cam = camera_path(camera, pos_all, rot_all, follow, scene.bounds, fps, speed,
                          points=_layout_points(recording, spec), aspect=size[0] / size[1])
        entity = _hud_entity(recording.labels, follow, spec)
        label = "{} · car {}".format(*recording.labels[entity])
        values = hud_values(recording, entity, times, scene.ground, label)
        followed = spec.entity(recording.labels[entity])[0]
        if getattr(followed, "role", "riders") == "counterweight":   # nobody rides it: no G shown
            for v in values:
                v.g_vertical = v.g_lateral = float("nan")
    except BaseException:
        scene.close()
        raise
    return Prepared(scene, follow, cam, pos_all, rot_all, pad, values)


def render_frames(recording, spec, times, camera, size, fps, speed, quality, consume, progress=None, stats=None,
                  train=None, car=None, hud=True, units="metric", scene_hook=None):
    """Render the recording at ``times`` (s) and hand each (h, w, 3) uint8 frame to
    ``consume(frame)``. ``progress(done, total)`` is called after every frame.
    ``train``, ``car``: what the cameras and the overlay follow; ``hud``:
    draw the overlay (``units`` metric or imperial); ``scene_hook(scene, follow,
    cam, hud_values, pad)``: called once before the first frame (tests)."""
    stats = stats if stats is not None else RenderStats()
    t0 = _time.perf_counter()
    pr = prepare_frames(recording, spec, times, camera, size, fps, speed, quality, train, car, hud)
    scene, cam, pad, values = pr.scene, pr.cam, pr.pad, pr.values
    try:
        if scene_hook is not None:
            scene_hook(scene, pr.follow, cam, values, pad)
        stats.build_s += _time.perf_counter() - t0
        total = len(times)
        if hasattr(consume, "fresh"):
            consume.fresh = scene.backdrop is not None
        # a consumer with its own thread finishes the frames there (backdrop, anti-aliasing, overlay)
        deferred = scene.backdrop is not None and getattr(consume, "deferred", False)
        for i in range(total):
            j = i + pad
            t1 = _time.perf_counter()
            scene.show_switches(float(times[i]))
            scene.show(pr.positions[j], pr.rotations[j], cam, j, values[i], units)
            img = scene.grab(deferred=deferred)
            t2 = _time.perf_counter()
            consume(img)
            stats.render_s += t2 - t1
            stats.encode_s += _time.perf_counter() - t2
            stats.frames += 1
            if progress is not None:
                progress(i + 1, total)
    finally:
        scene.close()
    return stats


class _Mp4Writer:
    """H.264 through imageio-ffmpeg. Frames are handed to ffmpeg's pipe from a
    background thread (the pipe write blocks while ffmpeg is busy and releases
    the GIL, so the next frame renders meanwhile); at most ``QUEUE`` frames wait."""

    QUEUE = 3

    def __init__(self, path, fps, quality, preset="veryfast", threaded=True):
        #: frames are new arrays the renderer does not reuse (set by render_frames): no copy
        self.fresh = False
        #: frames may come as callables that make them (in this writer's thread)
        self.deferred = threaded
        import imageio.v2 as iio

        self.w = iio.get_writer(
            str(path), format="FFMPEG", mode="I", fps=fps, codec="libx264", quality=quality,
            pixelformat="yuv420p", macro_block_size=1, ffmpeg_log_level="error",
            ffmpeg_params=["-preset", preset],
        )
        self.error = None
        self.queue = None
        if threaded:
            self.queue = queue.Queue(maxsize=self.QUEUE)
            self.thread = threading.Thread(target=self._drain, name="trackrider-mp4", daemon=True)
            self.thread.start()

    def _drain(self):
        while True:
            img = self.queue.get()
            if img is None:
                return
            if self.error is None:
                try:
                    self.w.append_data(img() if callable(img) else img)
                except Exception as exc:  # reported by the next __call__ or close()
                    self.error = exc

    def __call__(self, img):
        if self.error is not None:
            raise self.error
        if self.queue is None:
            self.w.append_data(img() if callable(img) else img)
        else:
            self.queue.put(img if self.fresh or callable(img) else np.array(img))  # else a copy: the renderer reuses its buffer

    def close(self):
        if self.queue is not None:
            self.queue.put(None)
            self.thread.join()
        self.w.close()
        if self.error is not None:
            raise self.error


def bayer(n: int = 8) -> np.ndarray:
    """The (n, n) ordered-dither (Bayer) matrix, n a power of two: thresholds evenly spread over
    (−0.5, 0.5), each n × n block holding every one once."""
    m = np.zeros((1, 1))
    while m.shape[0] < n:
        m = np.block([[4 * m, 4 * m + 2], [4 * m + 3, 4 * m + 1]])
    return (m + 0.5) / m.size - 0.5


class _GifWriter:
    """Frames quantised to a palette as they come (1 byte per pixel kept in memory). Before it, an
    ordered dither of ±``DITHER`` levels: a palette of 255 colours would cut the sky's gradient into
    visible bands; the fixed pattern does not crawl from frame to frame as error diffusion would."""

    DITHER = 4.0

    def __init__(self, path, fps):
        self.path, self.fps, self.frames = path, fps, []
        self._pattern = None

    def __call__(self, img):
        from PIL import Image

        h, w = img.shape[:2]
        if self._pattern is None or self._pattern.shape[:2] != (h, w):
            b = bayer(8)
            self._pattern = (2.0 * self.DITHER * np.tile(b, (h // 8 + 1, w // 8 + 1))[:h, :w, None]).astype(np.float32)
        dithered = np.clip(img + self._pattern, 0.0, 255.0).astype(np.uint8)
        self.frames.append(Image.fromarray(dithered).quantize(colors=255, method=Image.Quantize.FASTOCTREE,
                                                              dither=Image.Dither.NONE))

    def close(self):
        if self.frames:
            self.frames[0].save(
                self.path, format="GIF", save_all=True, append_images=self.frames[1:],
                duration=int(round(1000.0 / self.fps)), loop=0, optimize=False, disposal=1,
            )


class _PngWriter:
    def __init__(self, path):
        self.path, self.img = path, None

    def __call__(self, img):
        self.img = np.array(img)

    def close(self):
        import imageio.v3 as iio3

        iio3.imwrite(self.path, self.img, extension=".png")


def _load_scenario(path, overrides=None):
    from trackrider.scenario import load_scenario

    return load_scenario(path, overrides)


def _read_results(results: Path, notice=None):
    """(Recording, Scenario) of a results directory, read by ``trackrider.results_reader`` (as
    ``report`` and ``plot`` read it), the scenario as it was run: the one it names, or the copy
    kept in its ``inputs/`` when that one moved or changed (``notice`` is told)."""
    from trackrider.results_reader import read_results

    res = read_results(results)
    summary, summary_path = res.summary, results / "summary.json"
    scen = summary.get("scenario")
    if not scen:
        raise InputError("no scenario recorded: cannot rebuild the track", path=summary_path, where="scenario")
    scen_path = Path(scen)
    if not scen_path.is_absolute():
        summary = dict(summary, scenario=str((results / scen_path).resolve()))
    from trackrider.inputs_copy import load_results_scenario

    scenario, message = load_results_scenario(results, summary, notice, loader=_load_scenario)
    if scenario is None:
        raise InputError(message, path=summary_path, where="scenario")
    rec = Recording.from_timeseries(res.flat(), path=results / "timeseries.csv")
    rec.switches = summary.get("switches") or {}
    return rec, scenario


def _progress_bar(enabled):
    """``(bar, close)``: ``bar(label)`` returns a callable(done, total) that draws
    one task of a rich progress bar on stderr (or calls the user's callable);
    ``close()`` removes the bar. ``bar`` is None when there is nothing to show."""
    if enabled is None or enabled is False:
        return None, lambda: None
    if callable(enabled):
        return (lambda label: (lambda done, total: enabled(done, total)) if label == "rendering" else None), lambda: None
    if not sys.stderr.isatty():
        return None, lambda: None
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

    bar = Progress(
        TextColumn("{task.description}"), BarColumn(), TextColumn("{task.fields[what]}"), TimeRemainingColumn(),
        console=Console(stderr=True), transient=True,
    )
    bar.start()

    def task(label):
        ids = []

        def update(done, total):
            unit = "frames" if label == "rendering" else "s"
            what = f"{done:g}/{total:g} {unit}"
            if not ids:
                ids.append(bar.add_task(label, total=total, what=what))
            bar.update(ids[0], completed=done, what=what)

        return update

    return task, bar.stop


class _closing:
    def __init__(self, close):
        self.close = close

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


def render_ride(
    source,
    out,
    camera: str = "chase",
    fps: float | None = None,
    size=None,
    time: float | None = None,
    speed: float = 1.0,
    quality=None,
    duration: float | None = None,
    progress=None,
    *,
    recording: Recording | None = None,
    scene: SceneSpec | None = None,
    stats: RenderStats | None = None,
    train: str | None = None,
    car: int | None = None,
    hud: bool = True,
    units: str = "metric",
    notice=None,
) -> Path:
    """Render a ride to ``out`` (.mp4 H.264, .gif, or .png one still), off screen.

    Parameters
    ----------
    source : path
        A scenario ``.toml`` (simulated first, into a temporary directory, then
        replayed from its outputs) or a results directory (``timeseries.csv`` +
        ``summary.json``, whose ``"scenario"`` names the scenario that rebuilds
        the track). May be None when ``recording`` and ``scene`` are given.
    out : path
        Output file; its extension picks the format. Written atomically.
    camera : {"chase", "onride", "overview"}, default "chase"
    fps : frames per second, default 30 (MP4) / 20 (GIF).
    size : (w, h) or "WxH" px, default 1280x720 (MP4, PNG) / 480x270 (GIF).
        MP4 sizes are rounded down to even numbers (H.264 needs them).
    time : s. PNG: the instant of the still (default: the middle of the
        recording). Video: the start time (default: the start).
    speed : playback rate, simulated seconds per video second, default 1.0.
    quality : "draft", "normal" (default), "high" (4× MSAA, finer geometry) or
        a number 0..10 (the encoder's quality, default 7).
    duration : s. Video: render this much ride from ``time`` (the video lasts
        ``duration / speed``); a scenario is simulated only as far as needed.
    progress : None, True (a progress bar on a terminal) or callable(done, total).
    recording, scene : render this recording with this scene instead of ``source``.
    stats : a ``RenderStats`` to fill with timings.
    train, car : what the on-ride camera and the overlay follow (default: the
        first train, car 1 = the lead car).
    hud : draw the overlay (time, speed, height, G, G meter); units : "metric"
        (km/h and m/s, m) or "imperial" (mph, ft).
    notice : callable(str) told when a results folder's scenario moved or
        changed and the copy kept in its ``inputs/`` is used.

    Returns the output path. Raises ``InputError`` on bad input or when off-screen
    rendering is impossible on this machine (naming the missing system libraries).
    """
    out = Path(out)
    ext = out.suffix.lower()
    if ext not in FORMATS:
        raise InputError(f"output must end in .mp4, .gif or .png, got {out.name!r}", path=out, where="--out")
    if camera not in CAMERAS:
        raise InputError(f"camera must be one of {', '.join(CAMERAS)}, got {camera!r}", where="--camera")
    fps = DEFAULT_FPS[ext] if fps is None else fps
    try:
        fps = float(fps)
        speed = float(speed)
    except (TypeError, ValueError):
        raise InputError(f"fps and speed must be numbers, got {fps!r}, {speed!r}", where="--fps/--speed") from None
    if not (math.isfinite(fps) and 0 < fps <= 240):
        raise InputError(f"fps must be in (0, 240], got {fps:g}", where="--fps")
    if not (math.isfinite(speed) and speed > 0):
        raise InputError(f"speed must be > 0, got {speed:g}", where="--speed")
    w, h = parse_size(DEFAULT_SIZE[ext] if size is None else size)
    if ext == ".mp4":
        w, h = w - w % 2, h - h % 2
    if duration is not None and not (math.isfinite(float(duration)) and float(duration) > 0):
        raise InputError(f"duration must be > 0, got {duration!r}", where="--duration")
    if time is not None and not math.isfinite(float(time)):
        raise InputError(f"time must be a number of seconds, got {time!r}", where="--time")
    q = quality_preset(quality)
    if units not in ("metric", "imperial"):
        raise InputError(f"units must be metric or imperial, got {units!r}", where="--units")
    if car is not None and (isinstance(car, bool) or not isinstance(car, int) or car < 1):
        raise InputError(f"car must be a car number 1, 2, ..., got {car!r}", where="--car")
    if not out.parent.exists():
        raise InputError("the output's folder does not exist", path=out, where="--out")

    src = None if source is None else Path(source)
    if recording is None or scene is None:
        if src is None:
            raise InputError("nothing to render: give a scenario or a results directory")
        if not src.exists():
            raise InputError("no such file or directory", path=src)
        if not (src.is_dir() or src.suffix.lower() == ".toml"):
            raise InputError("expected a scenario .toml or a results directory", path=src)

    problem = check_rendering()
    if problem is not None:
        raise InputError(problem)

    bar, close_bar = _progress_bar(progress)
    with tempfile.TemporaryDirectory(prefix="trackrider-render-") as tmp, _closing(close_bar):
        if recording is None or scene is None:
            if src.is_dir():
                rec, scenario = _read_results(src, notice)
                spec = scene_from_scenario(scenario)
            else:
                from trackrider.sim import simulate

                scenario = _load_scenario(src)
                run_dir = Path(tmp) / "run"
                sim_to = None
                if duration is not None and ext != ".png":
                    sim_to = min(float(scenario.simulation.duration), float(duration) + (float(time or 0.0)))
                elif ext == ".png":
                    sim_to = duration
                simulate(scenario, out_dir=run_dir, duration=sim_to,
                         progress=bar("simulating") if bar is not None else None)
                rec, _ = _read_results(run_dir)
                spec = scene_from_scenario(scenario)
            spec.set_throws(rec.switches)
            recording = recording or rec
            scene = scene or spec
        t_start, t_end = recording.t_start, recording.t_end
        if ext == ".png":
            t_still = 0.5 * (t_start + t_end) if time is None else float(time)
            if 0.0 <= t_still < t_start:  # before the first sample (recorded after step 1): the start
                t_still = t_start
            if not (t_start - 1e-9 <= t_still <= recording.t_end + 1e-9):
                raise InputError(f"time must be within the recording, {t_start:g}..{recording.t_end:g} s, got {t_still:g}", where="--time")
            times = np.array([t_still])
        else:
            t0 = t_start if time is None else float(time)
            if 0.0 <= t0 < t_start:
                t0 = t_start
            if not (t_start - 1e-9 <= t0 < t_end):
                raise InputError(f"time must be within the recording, {t_start:g}..{t_end:g} s, got {t0:g}", where="--time")
            if duration is not None:
                # D seconds of ride from T: D * fps / speed frames (the video lasts D / speed),
                # fewer when the recording ends first
                n = max(int(round(float(duration) * fps / speed)), 1)
                times = t0 + (speed / fps) * np.arange(n)
                times = times[times <= t_end + 1e-9]
            else:
                times = frame_times(t0, t_end, fps, speed)

        tmp_out = Path(tmp) / ("frames" + ext)
        if ext == ".mp4":
            writer = _Mp4Writer(tmp_out, fps, q.encoder_quality, q.encoder_preset)
        elif ext == ".gif":
            writer = _GifWriter(tmp_out, fps)
        else:
            writer = _PngWriter(tmp_out)
        stats = stats if stats is not None else RenderStats()
        t_begin = _time.perf_counter()
        try:
            render_frames(recording, scene, times, camera, (w, h), fps, speed, q, writer,
                          bar("rendering") if bar is not None else None, stats,
                          train=train, car=car, hud=hud, units=units)
        except BaseException:
            try:  # stop ffmpeg; the temporary folder goes, nothing is written
                writer.close()
            except Exception:  # noqa: BLE001 - the first error is the one to report
                pass
            raise
        t_close = _time.perf_counter()
        writer.close()
        stats.encode_s += _time.perf_counter() - t_close
        stats.total_s = _time.perf_counter() - t_begin
        # atomic: the output appears complete or not at all (a fresh temporary beside it, no link followed)
        from trackrider.outputs import atomic_file

        with atomic_file(out) as tmp_final, open(tmp_out, "rb") as src_fh, open(tmp_final, "wb") as dst:
            while chunk := src_fh.read(1 << 20):
                dst.write(chunk)
    return out

