"""``gpumon stream``: this machine's snapshots as a stream, for a window on another machine.

What ``gpumon --ssh HOST`` runs on HOST (through the user's own ssh): a header line naming
gpumon's version and the snapshot schema (``text/json_in.py``), then one snapshot document
a line (``--json``'s, docs/snapshot.schema.json) every interval, until the reader goes away.
A machine whose GPUs cannot be read sends snapshots whose status says why (no driver, no
GPUs), and keeps trying, so the window shows the sentence and recovers by itself.

It ends with its reader: when stdout is closed (a write fails) and, where stdin is a pipe or
a socket (as sshd gives a command), as soon as stdin reaches its end (ssh ended), so a
stream never outlives the connection by more than a moment, even while a read is slow.
No Qt, no torch.
"""

from __future__ import annotations

import argparse
import os
import stat
import sys
import threading
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
from gpumon.telemetry.model.cadence import next_due
from gpumon.telemetry.sources.sampler import Sampler, unavailable_snapshot
from gpumon.text.json_in import header_line
from gpumon.text.json_out import snapshot_json


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="gpumon stream",
        description=tr("Print a header line, then one JSON snapshot a line, until the reader "
                       "goes away: what gpumon --ssh reads from this machine."))
    parser.add_argument("--interval", type=seconds(SAMPLING), metavar="SECONDS",
                        default=SAMPLING.default, help=tr("seconds between snapshots"))
    parser.add_argument("--count", type=whole_count, metavar="N", default=None,
                        help=tr("stop after N snapshots"))
    parser.add_argument("--simulate", type=gpu_count, metavar="N", default=None,
                        help=tr("read N simulated GPUs instead of real ones"))
    parser.add_argument("--seed", type=int, default=0, help=tr("seed of the simulated GPUs"))
    add_gpm_argument(parser)
    add_lang_argument(parser)
    return parser


def _end_with_stdin() -> None:
    """Exit at once when stdin, a pipe or socket from sshd, reaches its end."""
    try:
        mode = os.fstat(0).st_mode
    except OSError:
        return
    if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)):
        return

    def watch() -> None:
        try:
            while os.read(0, 4096):
                pass
        except OSError:
            pass
        os._exit(0)  # the connection is gone: nobody reads what a slow read would give

    threading.Thread(target=watch, name="gpumon-stream-stdin", daemon=True).start()


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    _end_with_stdin()
    out = sys.stdout
    sampler: Sampler | None = None
    try:
        out.write(header_line(args.interval) + "\n")
        out.flush()
        try:
            sampler = Sampler(make_source(args.simulate, args.seed, gpm=not args.no_gpm))
        except ImportError as exc:  # nvidia-ml-py is missing there: say so every interval
            sampler = None
            missing = str(exc)
        anchor, done = time.monotonic(), 0
        while True:
            if sampler is not None:
                snap = sampler.tick()
            else:
                from gpumon.telemetry.model.types import SourceState, SourceStatus

                snap = unavailable_snapshot(SourceStatus(
                    SourceState.LIBRARY_NOT_FOUND,
                    tr("gpumon could not load its NVML support ({error}).", error=missing),
                    tr("Install nvidia-ml-py, or try --simulate 4.")))
            out.write(snapshot_json(snap) + "\n")
            out.flush()
            done += 1
            if args.count is not None and done >= args.count:
                break
            due = next_due(anchor, args.interval, time.monotonic())
            anchor = due - args.interval
            time.sleep(max(0.0, due - time.monotonic()))
    except KeyboardInterrupt:
        return 0
    except BrokenPipeError:  # the reader went away
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    finally:
        if sampler is not None:
            sampler.close()
    return 0
