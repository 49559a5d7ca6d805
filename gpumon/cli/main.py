"""Command line: parse arguments, choose the source, print one snapshot or open the window.

``gpumon lesson`` prints the GPU-computing lesson in the terminal (its text comes from
:mod:`gpumon.cli.lesson`); ``gpumon dmon`` and ``gpumon topo`` print activity rows and the
topology matrix (:mod:`gpumon.cli.gpu_tools`). ``--once`` never imports Qt or torch, and
``lesson`` never imports Qt: the window module is imported only when needed.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
from typing import TYPE_CHECKING

from gpumon import __version__, ending, extras, i18n
from gpumon.cli import remote as remote_cli
from gpumon.cli import replay as replay_cli
from gpumon.cli import report
from gpumon.cli.argtypes import (
    MAX_SIMULATED_GPUS,
    OneLineParser,
    add_gpm_argument,
    add_lang_argument,
    lang_from_argv,
    seconds,
)
from gpumon.cli.argtypes import gpu_count as _gpu_count
from gpumon.i18n import tr
from gpumon.interval import SAMPLING
from gpumon.telemetry.choice import make_source

if TYPE_CHECKING:
    from gpumon.telemetry.model.types import Snapshot

_interval = seconds(SAMPLING)
TOOLS = ("dmon", "topo")  # gpumon dmon, gpumon topo: cli/gpu_tools.py parses their options


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="gpumon",
        description=tr("A live monitor for NVIDIA GPUs, with a PyTorch device playground."),
    )
    parser.add_argument("--once", action="store_true",
                        help=tr("print one nvidia-smi-like snapshot as text and exit"))
    parser.add_argument("--simulate", type=_gpu_count, metavar="N", default=None,
                        help=tr("show N simulated GPUs (1 to {most}) instead of reading real "
                                "ones", most=MAX_SIMULATED_GPUS))
    parser.add_argument("--seed", type=int, default=None,
                        help=tr("seed of the simulated GPUs (default 0; only with --simulate)"))
    parser.add_argument("--interval", type=_interval, metavar="SECONDS", default=None,
                        help=tr("seconds between readings, {low} to {high} (default: the last "
                                "one used, else 1.0)",
                                low=f"{SAMPLING.low:g}", high=f"{SAMPLING.high:g}"))
    report.add_arguments(parser, _interval)
    add_gpm_argument(parser)
    parser.add_argument("--prometheus", metavar="URL", default=None,
                        help=tr("show every GPU a Prometheus server knows (gpumon exporters, "
                                "dcgm-exporters), e.g. http://server:9090"))
    parser.add_argument("--exporter", metavar="URL[,URL...]", default=None,
                        help=tr("show the GPUs of these gpumon exporters or dcgm-exporters, "
                                "read from their /metrics without a Prometheus server, e.g. "
                                "http://node1:9401,http://node2:9400 (--prometheus-header "
                                "applies to them)"))
    parser.add_argument("--prometheus-header", metavar="'NAME: VALUE'", action="append",
                        default=[], help=tr("an HTTP header for the Prometheus server, e.g. "
                                            "'Authorization: Bearer TOKEN'; @FILE reads it "
                                            "from a file"))
    remote_cli.add_arguments(parser)
    replay_cli.add_arguments(parser)
    add_lang_argument(parser)
    parser.add_argument("--version", action="version", version=f"gpumon {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    lesson = commands.add_parser(
        "lesson", help=tr("run the GPU-computing lesson in the terminal and print every step"),
        description=tr("Run the GPU-computing lesson (Dive into Deep Learning, 'GPUs') on this "
                       "machine: each step's code and what torch answered, errors included."))
    # SUPPRESS keeps `gpumon --simulate 2 lesson` working: the top-level value is not reset.
    lesson.add_argument("--simulate", type=_gpu_count, metavar="N", default=argparse.SUPPRESS,
                        help=tr("step 1 (nvidia-smi) shows N simulated GPUs"))
    lesson.add_argument("--seed", type=int, default=argparse.SUPPRESS,
                        help=tr("seed of the simulated GPUs (default 0)"))
    lesson.add_argument("--step", type=int, metavar="K", default=None,
                        help=tr("run only step K (the steps before it run quietly first)"))
    add_lang_argument(lesson, default=argparse.SUPPRESS)
    # Listed for --help; main() hands `gpumon exporter ...` to exporter_cli before parsing.
    commands.add_parser("exporter", help=tr("serve this machine's GPU numbers to Prometheus "
                                            "(gpumon exporter --help)"))
    commands.add_parser("stream", help=tr("print a header line, then a JSON snapshot a line: "
                                          "what gpumon --ssh reads (gpumon stream --help)"))
    commands.add_parser("kernel", help=tr("run the playground's kernel process on stdin and "
                                          "stdout, as gpumon --ssh starts it on the other "
                                          "machine (--stdio)"))
    commands.add_parser("dmon", help=tr("print a line of activity per GPU every second, like "
                                        "nvidia-smi dmon --gpm-metrics (gpumon dmon --help)"))
    commands.add_parser("topo", help=tr("print how the GPUs are joined, like nvidia-smi topo "
                                        "-m (gpumon topo --help)"))
    return parser


def _lesson_snapshot(simulate: int | None, seed: int) -> Snapshot | None:
    """One telemetry Snapshot for the lesson's step 1; None when NVML support cannot load."""
    from gpumon.telemetry.sources.sampler import Sampler

    try:
        source = make_source(simulate, seed)
    except ImportError:
        return None
    sampler = Sampler(source)
    try:
        return sampler.tick()
    finally:
        sampler.close()


def _run_lesson(parser: argparse.ArgumentParser, simulate: int | None, seed: int,
                step: int | None) -> int:
    """Print the lesson, or one step; 0 when every step ran, whatever torch answered."""
    from gpumon.cli.lesson import format_step
    from gpumon.playground.kernel.engine import Engine
    from gpumon.playground.kernel.lesson_runner import LessonRunner
    from gpumon.playground.lesson.steps import LESSON

    total = len(LESSON)
    if importlib.util.find_spec("torch") is None:  # a plain install: no playground extra
        print("gpumon: " + extras.lesson_needs_torch(), file=sys.stderr)
        return 1
    if step is not None and not 1 <= step <= total:
        parser.exit(2, "gpumon lesson: error: "
                    + tr("--step must be from 1 to {total}, got {step}", total=total, step=step)
                    + "\n" + tr("Try '{prog} --help' for usage.", prog="gpumon lesson") + "\n")
    runner = LessonRunner(Engine(), lambda: _lesson_snapshot(simulate, seed))
    try:
        results = runner.run_all() if step is None else iter([runner.run_step(step)])
        for i, result in enumerate(results):
            sys.stdout.write(("\n" if i else "") + format_step(result, total))
            sys.stdout.flush()
    except BrokenPipeError:  # the reader went away (`gpumon lesson | head`): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except Exception as exc:  # a runner bug: say so briefly, exit non-zero
        print("gpumon: " + tr("the lesson runner failed ({error}).",
                              error=f"{type(exc).__name__}: {exc}"), file=sys.stderr)
        return 1
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``gpumon`` and ``python -m gpumon``; returns the exit status."""
    argv = sys.argv[1:] if argv is None else argv
    i18n.set_language(lang_from_argv(argv) or i18n.detect())
    if argv[:1] == ["exporter"]:
        from gpumon.cli import exporter as exporter_cli

        return exporter_cli.main(argv[1:])
    if argv[:1] == ["stream"]:
        from gpumon.cli import stream as stream_cli

        return stream_cli.main(argv[1:])
    if argv[:1] == ["kernel"]:  # a window on another machine runs its playground here
        from gpumon.cli import kernel as kernel_cli

        return kernel_cli.main(argv[1:])
    if argv[:1] and argv[0] in TOOLS:
        from gpumon.cli import gpu_tools

        return gpu_tools.main(argv[0], argv[1:])
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.seed is not None and args.simulate is None:
        parser.error(tr("--seed only applies to simulated GPUs: use it with --simulate N"))
    seed = args.seed or 0
    if args.command == "lesson":
        return _run_lesson(parser, args.simulate, seed, args.step)
    complaint = report.misuse(args)
    if complaint:
        parser.error(complaint)
    if args.replay is not None:
        return replay_cli.main(parser, args, _no_window)
    if args.at is not None or args.compare is not None:
        parser.error(tr("--at and --compare read recordings: use them with --replay FILE"))
    if args.ssh is not None:
        return remote_cli.main(parser, args, _no_window)
    if args.prometheus is not None or args.exporter is not None:
        if args.watch is not None or any(getattr(args, name, None) not in (None, False)
                                         for name in report.OUTPUT_OPTIONS):
            parser.error(tr("with --prometheus, --once prints the cluster snapshot; "
                            "-l, -i, --json, --csv, -q and --uuid read this machine's GPUs only"))
        if not args.once and (why := _no_window()):
            print("gpumon: " + why, file=sys.stderr)
            return 1
        from gpumon.cli import cluster as cluster_cli

        return cluster_cli.main(parser, args)
    if args.once or args.watch is not None:
        return report.run(args, lambda: make_source(args.simulate, seed, gpm=not args.no_gpm),
                          args.interval)
    if why := _no_window():
        print("gpumon: " + why, file=sys.stderr)
        return 1
    ending.end_at_once()  # a signal while Qt loads: nothing of ours runs yet to be ended
    try:
        import gpumon.ui.window.launch as ui_launch
    except ImportError as exc:
        print("gpumon: " + (extras.window_needs(exc) or (
            tr("cannot open the window ({error}).", error=exc) + "\n"
            + tr("Try `gpumon --once` for a text snapshot."))), file=sys.stderr)
        return 1
    return int(ui_launch.run(simulate=args.simulate, interval_s=args.interval, seed=seed,
                             lang=args.lang, gpm=not args.no_gpm))


def _no_window() -> str | None:
    """Why the window cannot open here, before anything is loaded: the gui extra is not
    installed, or there is no display. None when it can try."""
    if missing := extras.gui_missing():
        return missing
    return None if _has_display() else tr("no display: set DISPLAY or use --once")


def _has_display() -> bool:
    """False on Linux/BSD with neither an X nor a Wayland display and no Qt platform chosen
    (Qt would abort, blaming libxcb-cursor0). QT_QPA_PLATFORM=offscreen and the like count."""
    if not sys.platform.startswith(("linux", "freebsd", "openbsd", "netbsd")):
        return True
    platform = os.environ.get("QT_QPA_PLATFORM", "").split(":")[0]
    if platform and platform not in ("xcb", "wayland", "wayland-egl"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
