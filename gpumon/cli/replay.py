"""``gpumon --replay FILE``: a recording in the window, or one moment of it printed.

    gpumon --replay run.jsonl.gz                   the window, playing the recording
    gpumon --replay run.jsonl --at 90 --once       the snapshot 90 s after the first one
    gpumon --replay run.jsonl --at 14:05:30 --json the last one at or before that clock time

``--at`` picks the last snapshot recorded at or before TIME; the printers are the live ones
(``report.py``). What is wrong with the file is said on stderr, one sentence each, and what is
readable is shown. No Qt on the paths that print.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from gpumon import extras
from gpumon.cli import report
from gpumon.i18n import tr
from gpumon.untrusted import for_terminal


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--replay", metavar="FILE", default=None,
                        help=tr("show a recording (a gpumon stream or -l --json output, .gz "
                                "too) instead of live GPUs"))
    parser.add_argument("--compare", metavar="FILE", default=None,
                        help=tr("with --replay: draw this second recording dashed under the "
                                "first, aligned at their starts, with the differences of the "
                                "means"))
    parser.add_argument("--at", metavar="TIME", default=None,
                        help=tr("with --replay: the moment shown, seconds after the first "
                                "snapshot (90) or a clock time of the recording (14:05:30)"))


def main(parser: argparse.ArgumentParser, args: argparse.Namespace,
         no_window: Callable[[], str | None]) -> int:
    """``no_window()``: why the window cannot open here (None: it can try)."""
    from gpumon.recording.reader import Recording, RecordingError
    from gpumon.recording.source import RecordingSource

    if args.simulate is not None or args.prometheus is not None or args.ssh is not None:
        parser.error(tr("--replay shows a recording: it cannot be used with --simulate, "
                        "--ssh or --prometheus"))
    if args.watch is not None:
        parser.error(tr("with --replay, --once prints one moment (--at TIME); the window "
                        "plays the recording"))
    try:
        recording = Recording(args.replay)
    except RecordingError as exc:
        print(f"gpumon: {exc}", file=sys.stderr)
        return 1
    for sentence in recording.problems():
        print(f"gpumon: {for_terminal(sentence)}", file=sys.stderr)
    at = None
    if args.at is not None:
        try:
            at = recording.time_of(args.at)
        except ValueError as exc:
            recording.close()
            parser.error(str(exc))
    if args.once:
        if args.compare is not None:
            recording.close()
            parser.error(tr("--compare draws two runs in the window: leave out --once"))
        if not len(recording):
            recording.close()
            return 1
        source = RecordingSource(recording)
        source.clock.seek(recording.start_s if at is None else at)
        return report.run(args, lambda: source)
    if why := no_window():
        recording.close()
        print("gpumon: " + why, file=sys.stderr)
        return 1
    other = None
    if args.compare is not None:
        try:
            other = Recording(args.compare)
        except RecordingError as exc:
            recording.close()
            print(f"gpumon: {exc}", file=sys.stderr)
            return 1
        for sentence in other.problems():
            print(f"gpumon: {for_terminal(sentence)}", file=sys.stderr)
    try:
        from gpumon.ui.window import launch
        from gpumon.ui.window.replay_window import ReplayWindow
    except ImportError as exc:
        recording.close()
        if other is not None:
            other.close()
        print("gpumon: " + (extras.window_needs(exc) or tr(
            "cannot open the window ({error}).", error=exc)), file=sys.stderr)
        return 1
    return launch.run(None, None, lang=args.lang,
                      make_window=lambda _interval_s, settings: ReplayWindow(
                          recording, at=at, settings=settings, compare=other))
