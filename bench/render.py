"""Rendering speed: frames per second for a 7-car train, at 1280x720 and
640x360, split into rendering (scene update + render + read-back) and encoding
(H.264 through imageio-ffmpeg). Two scenes, measured in the same run: the full
scene (cars with seats, riders, restraints and wheels, a steel track with spine
and ties, supports with footers and heads, grass, the shadows of the cars and
the structure, FXAA, the overlay, the chase camera's planned shots) and the
simple scene rendering had before them (box cars, rails and ties, checker
ground, no overlay, no shadows); the ratio full / simple is printed.

    python bench/render.py                # the two sizes, normal quality, both scenes
    python bench/render.py --variants     # also draft and high (supersampled) quality, other cameras
    python bench/render.py --seconds 2    # a shorter clip

Uses the synthetic ride of ``trackrider.render.synthetic`` (an analytic oval
with two hills, 200 m, a tie every 1.2 m), so it runs without the simulator.
Software rendering (Mesa llvmpipe through EGL) when there is no GPU.
"""
from __future__ import annotations

import sys as _sys
from pathlib import Path as _Path

_sys.path.insert(0, str(_Path(__file__).resolve().parents[1]))  # measure this checkout, not an installed copy

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from trackrider.render import RenderStats, render_ride  # noqa: E402
from trackrider.render.synthetic import synthetic_ride  # noqa: E402


def _cpu():
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, kids.ru_utime + kids.ru_stime


def run(rec, spec, size, quality, fps, out_dir, encode=True, camera="chase", tag="full"):
    """Render one clip; returns (RenderStats, output path). ``stats.extra`` holds
    the CPU seconds of this process (renderer, llvmpipe threads) and of the
    ffmpeg child (encoder): figures that the load of a shared machine disturbs less."""
    stats = RenderStats()
    cpu0 = _cpu()
    out = Path(out_dir) / f"bench_{tag}_{size[0]}x{size[1]}.mp4"  # one file per scene: the size printed is its own"
    if encode:
        render_ride(None, out, camera=camera, fps=fps, size=size, quality=quality, recording=rec, scene=spec, stats=stats)
    else:  # rendering alone: frames go nowhere
        from trackrider.render.video import frame_times, render_frames

        t0 = time.perf_counter()
        times = frame_times(rec.t_start, rec.t_end, fps, 1.0)
        render_frames(rec, spec, times, camera, size, fps, 1.0, quality, lambda img: None, None, stats)
        stats.total_s = time.perf_counter() - t0
    cpu1 = _cpu()
    stats.extra["cpu_own_s"], stats.extra["cpu_encoder_s"] = cpu1[0] - cpu0[0], cpu1[1] - cpu0[1]
    return stats, out


def median_run(runs):
    """The run of median total time (the machine may be shared: the median is
    less at the mercy of one quiet or one busy moment than the best or worst)."""
    return sorted(runs, key=lambda r: r[0].total_s)[(len(runs) - 1) // 2]


def best(repeat, *args, **kw):
    """The median of ``repeat`` runs."""
    return median_run([run(*args, **kw) for _ in range(max(repeat, 1))])


def line(label, st, out=None):
    n = max(st.frames, 1)
    size = f", {os.path.getsize(out) / 1e6:.1f} MB" if out is not None and out.exists() else ""
    return (
        f"{label:<34} {st.frames / st.total_s:6.1f} frames/s overall | per frame: render {1e3 * st.render_s / n:5.1f} ms, "
        f"encode {1e3 * st.encode_s / n:5.1f} ms | CPU per frame: renderer {1e3 * st.extra['cpu_own_s'] / n:5.1f} ms, "
        f"ffmpeg {1e3 * st.extra['cpu_encoder_s'] / n:5.1f} ms{size}"
    )


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=4.0, help="ride length rendered, s (default 4)")
    ap.add_argument("--fps", type=float, default=30.0)
    ap.add_argument("--variants", action="store_true", help="also time draft and high quality, other cameras")
    ap.add_argument("--repeat", type=int, default=3, help="runs per figure; the median is shown (default 3)")
    args = ap.parse_args(argv)

    rec, spec = synthetic_ride(cars=7, duration=args.seconds)
    print(f"7-car train, {spec.tracks[0].geometry.length:.0f} m track, {args.seconds:g} s at {args.fps:g} fps, "
          f"camera chase; cores: {os.cpu_count()}; load average {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory() as tmp:
        # warm-up (first EGL context, shader compiles) is not measured
        run(rec, spec, (320, 180), None, args.fps, tmp)
        from trackrider.render.quality import Quality

        simple = Quality(simple=True)
        for size in ((1280, 720), (640, 360)):
            # full and simple alternate, so that a shared machine's load changes hit both alike
            runs = {"full": [], "simple": []}
            for _ in range(max(args.repeat, 1)):
                for label, q in (("full", None), ("simple", simple)):
                    runs[label].append(run(rec, spec, size, q, args.fps, tmp, tag=label))
            best_of = {k: median_run(v) for k, v in runs.items()}
            for label in ("full", "simple"):
                st, out = best_of[label]
                print(line(f"{size[0]}x{size[1]} {label} render+encode mp4", st, out))
            for label, q in (("full", None), ("simple", simple)):
                st, _ = best(args.repeat, rec, spec, size, q, args.fps, tmp, encode=False)
                print(line(f"{size[0]}x{size[1]} {label} render only", st))
            f, s_ = best_of["full"][0], best_of["simple"][0]
            fps_f, fps_s = f.frames / f.total_s, s_.frames / s_.total_s
            cpu = {k: (r[0].extra["cpu_own_s"] + r[0].extra["cpu_encoder_s"]) / max(r[0].frames, 1)
                   for k, r in best_of.items()}
            # each full run and the simple run after it saw about the same load: the median of their ratios
            pairs = sorted((a[0].frames / a[0].total_s) / (b[0].frames / b[0].total_s)
                           for a, b in zip(runs["full"], runs["simple"]))
            paired = pairs[(len(pairs) - 1) // 2]
            print(f"{size[0]}x{size[1]} render+encode: full scene {fps_f:.1f} frames/s, simple {fps_s:.1f} frames/s, "
                  f"ratio {fps_f / fps_s:.2f} (median of the {len(pairs)} paired ratios {paired:.2f}); CPU per frame (renderer + ffmpeg) full {1e3 * cpu['full']:.1f} ms, "
                  f"simple {1e3 * cpu['simple']:.1f} ms, ratio simple/full {cpu['simple'] / cpu['full']:.2f} "
                  "(the speed ratio where the CPU is the limit)")
        if args.variants:
            for label, q in (("1280x720 high (2 x 2 supersampled, medium)", "high"),
                             ("1280x720 draft (ultrafast)", "draft")):
                st, out = best(args.repeat, rec, spec, (1280, 720), q, args.fps, tmp, tag=q)
                print(line(label, st, out))
            for cam in ("onride", "overview"):
                st, _ = best(args.repeat, rec, spec, (1280, 720), None, args.fps, tmp, encode=False, camera=cam)
                print(line(f"1280x720 {cam} render only", st))


if __name__ == "__main__":
    main()
