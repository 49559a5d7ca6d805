"""``gpumon dmon`` and ``gpumon topo``: nvidia-smi's ``dmon --gpm-metrics`` and ``topo -m`` for
the terminal, from NVML (or simulated GPUs). No Qt, no torch.

    gpumon dmon                 a line of activity per GPU every second until Ctrl+C
    gpumon dmon -c 5 -d 0.5     five readings, half a second apart
    gpumon topo                 the path between each pair of GPUs, affinities, legend
    gpumon topo --p2p           which GPUs can read each other's memory (P2P)
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from gpumon.cli.argtypes import (
    OneLineParser,
    add_gpm_argument,
    add_lang_argument,
    gpu_count,
    seconds,
    whole_count,
)
from gpumon.i18n import tr
from gpumon.interval import SAMPLING
from gpumon.telemetry.choice import make_source
from gpumon.telemetry.model.activity import FIRST_READING_WAIT_S, warming
from gpumon.telemetry.model.types import Snapshot, SourceStatus
from gpumon.telemetry.sources.sampler import Sampler


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--simulate", type=gpu_count, metavar="N", default=None,
                        help=tr("read N simulated GPUs instead of real ones"))
    parser.add_argument("--seed", type=int, default=0, help=tr("seed of the simulated GPUs"))
    add_lang_argument(parser)


def build_parser(command: str) -> argparse.ArgumentParser:
    if command == "dmon":
        parser = OneLineParser(
            prog="gpumon dmon",
            description=tr("Print one line per GPU per reading, like nvidia-smi dmon "
                           "--gpm-metrics: power, temperature, GPU-Util, then GPM's activity "
                           "(graphics, SM, occupancy, tensor, DRAM, FP64/32/16) and the PCIe "
                           "and NVLink rates. '-' where a GPU does not report a value."))
        parser.add_argument("-c", "--count", type=whole_count, metavar="COUNT", default=None,
                            help=tr("stop after COUNT readings (default: until Ctrl+C)"))
        parser.add_argument("-d", "--delay", type=seconds(SAMPLING), metavar="SECONDS",
                            default=1.0, help=tr("seconds between readings, {low} to {high} "
                                                 "(default 1)", low=f"{SAMPLING.low:g}",
                                                 high=f"{SAMPLING.high:g}"))
        add_gpm_argument(parser)
    else:
        parser = OneLineParser(
            prog="gpumon topo",
            description=tr("Print how the GPUs are joined, like nvidia-smi topo -m: NVLink "
                           "or the PCIe path between each pair, and the CPUs and NUMA nodes "
                           "nearest each GPU."))
        parser.add_argument("-m", "--matrix", action="store_true",
                            help=tr("the path matrix (the default)"))
        parser.add_argument("--p2p", action="store_true",
                            help=tr("the P2P read matrix instead, like nvidia-smi topo -p2p r"))
    _common(parser)
    return parser


def _fail(command: str, status: SourceStatus) -> int:
    from gpumon.text.smi_text import render_status

    print(f"gpumon {command}: {render_status(status)}", file=sys.stderr)
    return 1


def main(command: str, argv: list[str]) -> int:
    """``gpumon dmon`` or ``gpumon topo``; 0 when done (or Ctrl+C), 1 with a sentence on
    stderr when the GPUs cannot be read, 2 for bad options."""
    args = build_parser(command).parse_args(argv)
    if command == "topo" and args.matrix and args.p2p:
        build_parser(command).error(tr("-m and --p2p print different matrices: choose one"))
    try:  # topo reads no activity: no GPM call at all
        source = make_source(args.simulate, args.seed,
                             gpm=command == "dmon" and not args.no_gpm)
    except ImportError as exc:  # nvidia-ml-py is not installed
        print(f"gpumon {command}: " + tr("gpumon could not load its NVML support ({error}).",
                                         error=exc), file=sys.stderr)
        return 1
    sampler = Sampler(source)
    try:
        status = sampler.open()
        if not status.usable:
            return _fail(command, status)
        if command == "topo":
            return _topo(args, sampler.tick())
        return _dmon(args, sampler)
    except KeyboardInterrupt:
        return 0
    except BrokenPipeError:  # `gpumon dmon | head`: stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    finally:
        sampler.close()


def _topo(args: argparse.Namespace, snap: Snapshot) -> int:
    from gpumon.text.topo_text import render_matrix, render_p2p

    if not snap.status.usable:
        return _fail("topo", snap.status)
    if snap.topology is None or not snap.topology.places:
        print("gpumon topo: " + tr("no GPU topology: the source gives none."),
              file=sys.stderr)
        return 1
    render = render_p2p if args.p2p else render_matrix
    sys.stdout.write(render(snap.topology, snap.simulated))
    return 0


def _dmon(args: argparse.Namespace, sampler: Sampler) -> int:
    from gpumon.telemetry.model.cadence import next_due
    from gpumon.text.dmon_text import header, rows

    snap = sampler.tick()  # GPM's first sample: the first values come with the next one
    if warming(snap):
        time.sleep(max(0.0, FIRST_READING_WAIT_S - args.delay))
    print(header(snap.simulated), flush=True)
    anchor, done = time.monotonic(), 0
    while args.count is None or done < args.count:
        due = next_due(anchor, args.delay, time.monotonic())
        anchor = due - args.delay
        time.sleep(max(0.0, due - time.monotonic()))
        snap = sampler.tick()
        if snap.status.usable:
            print(rows(snap), flush=True)
        else:  # keep going: the next read may work again
            print(f"gpumon dmon: {snap.status.message}", file=sys.stderr)
        done += 1
    return 0
