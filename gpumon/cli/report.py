"""The terminal side of ``gpumon``: ``--once`` and ``--watch`` (``-l``), as text (the
nvidia-smi-like table, or ``-q`` detail), JSON or CSV. No Qt, no torch on this path.

    gpumon --once                 the table, like nvidia-smi
    gpumon --once -q              every field per GPU, like nvidia-smi -q
    gpumon --once --json          one JSON document (docs/snapshot.schema.json)
    gpumon --once --csv           the CSV recorder's header and one row per GPU
    gpumon -l 2 [--json|--csv]    the same every 2 s until Ctrl+C (or --count N)
    gpumon --once -i 0,GPU-...    only these GPUs (index, UUID or PCI bus id), like nvidia-smi -i
"""

from __future__ import annotations

import argparse
import csv
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, TextIO

from gpumon.cli.argtypes import whole_count
from gpumon.cli.gpu_select import checked_ids
from gpumon.cli.readings import Readings, add_timeout_argument, fail, say
from gpumon.cli.readings import run as readings_run
from gpumon.i18n import tr
from gpumon.interval import DRIVER_WAIT, SAMPLING
from gpumon.telemetry.model.types import Source

if TYPE_CHECKING:
    from gpumon.telemetry.model.types import Snapshot

OUTPUT_OPTIONS = ("query", "uuid", "json", "csv", "count", "id")
PREFIX = "gpumon"  # before each sentence on stderr


def add_arguments(parser: argparse.ArgumentParser,
                  interval: Callable[[str], float]) -> None:
    """The terminal options; ``interval`` checks a number of seconds (the CLI's range)."""
    parser.add_argument("-l", "--watch", type=interval, nargs="?", const=0.0, default=None,
                        metavar="SECONDS",
                        help=tr("print a snapshot every SECONDS (default: --interval, else "
                                "{default}) until Ctrl+C, like nvidia-smi -l",
                                default=f"{SAMPLING.default:g}"))
    parser.add_argument("-q", "--query", action="store_true",
                        help=tr("with --once/--watch: every field of each GPU, like "
                                "nvidia-smi -q (UUID, free memory, clocks, PCIe, "
                                "encoder/decoder)"))
    parser.add_argument("--uuid", action="store_true",
                        help=tr("with --once/--watch: a UUID line under each GPU in the "
                                "table"))
    form = parser.add_mutually_exclusive_group()
    form.add_argument("--json", action="store_true",
                      help=tr("with --once/--watch: one JSON document per snapshot "
                              "(schema: docs/snapshot.schema.json)"))
    form.add_argument("--csv", action="store_true",
                      help=tr("with --once/--watch: the CSV recorder's columns, one row "
                              "per GPU"))
    parser.add_argument("--count", type=whole_count, metavar="N", default=None,
                        help=tr("with --watch: stop after N snapshots"))
    parser.add_argument("-i", "--id", metavar="ID[,ID...]", default=None, type=checked_ids,
                        help=tr("with --once/--watch: only these GPUs, by index, UUID or PCI "
                                "bus id, like nvidia-smi -i"))
    add_timeout_argument(parser)


def misuse(args: argparse.Namespace) -> str | None:
    """A one-line complaint when an output option is given without --once or --watch."""
    if args.once or args.watch is not None:
        if args.count is not None and args.watch is None:
            return tr("--count applies to --watch (-l SECONDS)")
        if (args.json or args.csv) and (args.query or args.uuid):
            return tr("-q and --uuid shape the text output; --json and --csv have every "
                      "field")
        return None
    given = [name for name in OUTPUT_OPTIONS if getattr(args, name, None) not in (None, False)]
    if given:
        flag = {"query": "-q", "id": "-i"}.get(given[0], f"--{given[0]}")
        return tr("{flag} applies to --once or --watch (-l SECONDS)", flag=flag)
    return None


class _Printer:
    """Writes snapshots to ``out`` in the chosen form; CSV writes its header once."""

    def __init__(self, args: argparse.Namespace, out: TextIO) -> None:
        self.args, self.out = args, out
        self._csv: csv.DictWriter[str] | None = None
        self._rows = 0

    def write(self, snap: Snapshot) -> None:
        args, out = self.args, self.out
        if args.json:
            from gpumon.text.json_out import snapshot_json

            out.write(snapshot_json(snap) + "\n")
        elif args.csv:
            from gpumon.telemetry.history.csv_rows import record_header, record_rows

            writer = csv.writer(out, lineterminator="\n")
            if self._rows == 0:
                writer.writerow(record_header())
            writer.writerows(record_rows(snap))
        elif args.query:
            from gpumon.text.smi_detail import render_detail

            out.write(("\n" if self._rows else "") + render_detail(snap))
        else:
            from gpumon.text.smi_text import render

            out.write(("\n" if self._rows else "") + render(snap, show_uuid=args.uuid))
        self._rows += 1
        out.flush()


def run(args: argparse.Namespace, make_source: Callable[[], Source],
        interval_s: float | None = None) -> int:
    """``--once`` or ``--watch``: 0 when every snapshot was printed (or Ctrl+C ended the
    watch), 1 with a short reason on stderr when the GPUs cannot be read (readings.run)."""
    from gpumon.cli.gpu_select import NOT_FOUND, Selection, parse_ids

    watch = args.watch is not None
    period = (args.watch or interval_s or SAMPLING.default) if watch else 0.0
    printer = _Printer(args, sys.stdout)
    selection = Selection(parse_ids(args.id)) if getattr(args, "id", None) else None

    def body(readings: Readings) -> int:
        for done, snap in enumerate(readings.every(period, args.count if watch else 1)):
            if not snap.status.usable and not watch:
                return fail(PREFIX, snap.status)
            if selection is not None and snap.status.usable:
                if done == 0 and (missing := selection.resolve(snap)) is not None:
                    say(PREFIX, missing)
                    return NOT_FOUND
                snap = selection.apply(snap)
            if snap.status.usable:
                printer.write(snap)
            else:  # a watch keeps going: the next read may work again
                say(PREFIX, snap.status.message)
        return 0

    return readings_run(PREFIX, make_source, body, getattr(args, "timeout", DRIVER_WAIT.default))
