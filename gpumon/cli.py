"""Command line: parse arguments, choose the source, print one snapshot or open the window.

``--once`` never imports Qt or torch: the window module is imported only when it is needed.
"""

from __future__ import annotations

import argparse
import math
import sys

from gpumon import __version__
from gpumon.telemetry.types import Source, SourceState, SourceStatus

MAX_SIMULATED_GPUS = 16
MIN_INTERVAL_S = 0.1
MAX_INTERVAL_S = 10.0


def _gpu_count(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        n = 0
    if not 1 <= n <= MAX_SIMULATED_GPUS:
        raise argparse.ArgumentTypeError(
            f"must be a whole number of GPUs from 1 to {MAX_SIMULATED_GPUS}, got {text!r}")
    return n


def _interval(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not MIN_INTERVAL_S <= value <= MAX_INTERVAL_S:  # also refuses nan
        raise argparse.ArgumentTypeError(
            f"must be a number of seconds from {MIN_INTERVAL_S:g} to {MAX_INTERVAL_S:g}, "
            f"got {text!r}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gpumon",
        description="A live monitor for NVIDIA GPUs, with a PyTorch device playground.",
    )
    parser.add_argument("--once", action="store_true",
                        help="print one nvidia-smi-like snapshot as text and exit")
    parser.add_argument("--simulate", type=_gpu_count, metavar="N", default=None,
                        help=f"show N simulated GPUs (1 to {MAX_SIMULATED_GPUS}) instead of "
                             "reading real ones")
    parser.add_argument("--seed", type=int, default=0,
                        help="seed of the simulated GPUs (default 0)")
    parser.add_argument("--interval", type=_interval, metavar="SECONDS", default=1.0,
                        help=f"seconds between readings, {MIN_INTERVAL_S:g} to "
                             f"{MAX_INTERVAL_S:g} (default 1.0)")
    parser.add_argument("--version", action="version", version=f"gpumon {__version__}")
    return parser


def make_source(simulate: int | None, seed: int = 0) -> Source:
    """The simulated source when ``simulate`` is a GPU count, else the real NVML one."""
    if simulate is not None:
        from gpumon.telemetry.simulated import SimulatedSource

        return SimulatedSource(n_gpus=simulate, seed=seed)
    from gpumon.telemetry.nvml import NvmlSource

    return NvmlSource()


def _print_once(simulate: int | None, seed: int) -> int:
    """Open, read one snapshot, print it; 1 with a short reason on stderr when impossible."""
    from gpumon.telemetry.sampler import Sampler
    from gpumon.telemetry.smi_text import render, render_status

    try:
        source = make_source(simulate, seed)
    except ImportError as exc:  # e.g. nvidia-ml-py is not installed
        status = SourceStatus(SourceState.LIBRARY_NOT_FOUND,
                              f"gpumon could not load its NVML support ({exc}).",
                              "Install nvidia-ml-py, or try --simulate 4.")
        print(f"gpumon: {render_status(status)}", file=sys.stderr)
        return 1
    sampler = Sampler(source)
    try:
        status = sampler.open()
        snapshot = sampler.tick() if status.usable else None
    finally:
        sampler.close()
    if snapshot is None or not snapshot.status.usable:
        reason = status if snapshot is None else snapshot.status
        print(f"gpumon: {render_status(reason)}", file=sys.stderr)
        return 1
    sys.stdout.write(render(snapshot))
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``gpumon`` and ``python -m gpumon``; returns the exit status."""
    args = build_parser().parse_args(argv)
    if args.once:
        return _print_once(args.simulate, args.seed)
    try:
        import gpumon.ui.app as ui_app
    except ImportError as exc:
        print(f"gpumon: cannot open the window ({exc}).\n"
              "Try `gpumon --once` for a text snapshot.", file=sys.stderr)
        return 1
    return int(ui_app.run(simulate=args.simulate, interval_s=args.interval, seed=args.seed))
