"""``gpumon dmon`` and ``gpumon topo``: nvidia-smi's ``dmon --gpm-metrics`` and ``topo -m`` for
the terminal, from NVML (or simulated GPUs). No Qt, no torch.

    gpumon dmon                 a line of activity per GPU every second until Ctrl+C
    gpumon dmon -c 5 -d 0.5     five readings, half a second apart
    gpumon topo                 the path between each pair of GPUs, affinities, legend
    gpumon topo --p2p           which GPUs can read each other's memory (P2P)
    gpumon dmon --ssh lab1      the same for another machine, over ssh
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from gpumon import i18n
from gpumon.cli.argtypes import (
    OneLineParser,
    add_gpm_argument,
    add_lang_argument,
    gpu_count,
    seconds,
    whole_count,
)
from gpumon.cli.readings import Readings, add_timeout_argument, fail, run, say
from gpumon.i18n import tr
from gpumon.interval import SAMPLING
from gpumon.ssh.command import DEFAULT_REMOTE, SshOptions
from gpumon.ssh.target import parse_target
from gpumon.telemetry.choice import source_factory
from gpumon.telemetry.model.types import Snapshot, Source


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--simulate", type=gpu_count, metavar="N", default=None,
                        help=tr("read N simulated GPUs instead of real ones"))
    parser.add_argument("--seed", type=int, default=0, help=tr("seed of the simulated GPUs"))
    add_timeout_argument(parser)
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
    parser.add_argument("--ssh", metavar="[USER@]HOST[:PORT]", default=None,
                        help=tr("read another machine's GPUs over ssh (see gpumon --help)"))
    parser.add_argument("--ssh-config", metavar="FILE", default=None,
                        help=tr("the ssh_config file ssh reads (ssh -F FILE)"))
    parser.add_argument("--ssh-command", metavar="COMMAND", default=DEFAULT_REMOTE,
                        help=tr("how gpumon starts on the other machine (default: gpumon)"))
    return parser


def _factory(command: str, args: argparse.Namespace) -> Callable[[], Source]:
    """What makes the GPUs to read: simulated, NVML, or one machine over ssh (TargetError,
    ValueError: a sentence for the command line, before anything runs)."""
    gpm = command == "dmon" and not args.no_gpm  # topo reads no activity: no GPM call at all
    if args.ssh is None:
        return source_factory(args.simulate, args.seed, gpm=gpm)
    from gpumon.cli.remote import ONCE_WAIT_S
    from gpumon.remote.source import RemoteSource

    if args.simulate is not None:
        raise ValueError(tr("--ssh reads another machine: it cannot be used with --simulate"))
    target = parse_target(args.ssh)
    extra = ("--lang", i18n.language()) + (() if gpm else ("--no-gpm",))
    options = SshOptions(config_file=args.ssh_config, remote_command=args.ssh_command)
    return lambda: RemoteSource(target, options, getattr(args, "delay", 1.0),
                                first_wait_s=ONCE_WAIT_S, extra_args=extra)


def main(command: str, argv: list[str]) -> int:
    """``gpumon dmon`` or ``gpumon topo``; 0 when done (or Ctrl+C), 1 with a sentence on
    stderr when the GPUs cannot be read (readings.run), 2 for bad options."""
    args = build_parser(command).parse_args(argv)
    if command == "topo" and args.matrix and args.p2p:
        build_parser(command).error(tr("-m and --p2p print different matrices: choose one"))
    try:
        factory = _factory(command, args)
    except ValueError as exc:  # a refused host name (TargetError), --ssh with --simulate
        build_parser(command).error(str(exc))
    prefix = f"gpumon {command}"
    if command == "topo":
        return run(prefix, factory, lambda readings: _topo(args, readings.tick()),
                   args.timeout)
    return run(prefix, factory, lambda readings: _dmon(args, readings), args.timeout)


def _topo(args: argparse.Namespace, snap: Snapshot) -> int:
    from gpumon.text.topo_text import render_matrix, render_p2p

    if not snap.status.usable:
        return fail("gpumon topo", snap.status)
    if snap.topology is None or not snap.topology.places:
        say("gpumon topo", tr("no GPU topology: the source gives none."))
        return 1
    render = render_p2p if args.p2p else render_matrix
    sys.stdout.write(render(snap.topology, snap.simulated))
    return 0


def _dmon(args: argparse.Namespace, readings: Readings) -> int:
    from gpumon.text.dmon_text import header, rows

    for done, snap in enumerate(readings.every(args.delay, args.count, settle=True)):
        if done == 0:
            print(header(snap.simulated), flush=True)
        if snap.status.usable:
            print(rows(snap), flush=True)
        else:  # keep going: the next read may work again
            say("gpumon dmon", snap.status.message)
    return 0
