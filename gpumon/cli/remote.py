"""``gpumon --ssh [user@]host[:port]``: another machine's GPUs, over the user's own ssh.

    gpumon --ssh lab1                   the window, for lab1's GPUs
    gpumon --ssh lab1 --once [--json]   lab1's snapshot, printed as a local one is
    gpumon --ssh lab1,lab2 | @FILE      many machines in the overview (--once: each one)

Host names are checked before anything runs (``ssh/target.py``). ``--ssh-config FILE`` hands
``-F FILE`` to ssh; ``--ssh-command`` says how gpumon starts there (a virtual environment,
conda). No Qt on the paths that print.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from gpumon import extras, i18n
from gpumon.cli import report
from gpumon.i18n import tr
from gpumon.interval import SAMPLING
from gpumon.ssh.target import DEFAULT_REMOTE, Target, TargetError, parse_targets

if TYPE_CHECKING:
    from gpumon.ssh.command import SshOptions

ONCE_WAIT_S = 60.0  # --once: a login, the remote's imports, its first reading


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--ssh", metavar="[USER@]HOST[:PORT]", default=None,
                        help=tr("read the GPUs of another machine over ssh (your own "
                                "ssh config, agent and keys); host1,host2 or @FILE for "
                                "many"))
    parser.add_argument("--ssh-config", metavar="FILE", default=None,
                        help=tr("the ssh_config file ssh reads (ssh -F FILE)"))
    parser.add_argument("--ssh-command", metavar="COMMAND", default=DEFAULT_REMOTE,
                        help=tr("how gpumon starts on the other machine, e.g. "
                                "~/venv/bin/gpumon or 'conda run -n x gpumon' (default: "
                                "gpumon)"))


def remote_args(args: argparse.Namespace) -> tuple[str, ...]:
    """What the remote stream is told besides its interval: the language, --no-gpm."""
    out: tuple[str, ...] = ("--lang", i18n.language())
    return (*out, "--no-gpm") if args.no_gpm else out


def options_of(args: argparse.Namespace) -> SshOptions:
    from gpumon.ssh.command import SshOptions  # imported when used: not at every start

    return SshOptions(config_file=args.ssh_config, remote_command=args.ssh_command)


def main(parser: argparse.ArgumentParser, args: argparse.Namespace,
         no_window: Callable[[], str | None]) -> int:
    """``no_window()``: why the window cannot open here (None: it can try)."""
    from gpumon.remote.source import RemoteSource

    if args.simulate is not None or args.prometheus is not None or args.exporter is not None:
        parser.error(tr("--ssh reads other machines: it cannot be used with --simulate, "
                        "--prometheus or --exporter"))
    try:
        targets = parse_targets(args.ssh)
    except TargetError as exc:
        parser.error(str(exc))
    if args.ssh_config is not None and not Path(args.ssh_config).is_file():
        parser.error(tr("the ssh config {path} is not a file", path=args.ssh_config))
    if not args.ssh_command.strip():
        parser.error(tr("--ssh-command is empty"))
    options = options_of(args)
    interval = args.watch or args.interval or SAMPLING.default
    extra = remote_args(args)
    if args.once or args.watch is not None:
        if len(targets) > 1:
            return _print_many(targets, options, interval, extra, args)
        return report.run(args, lambda: RemoteSource(
            targets[0], options, interval, first_wait_s=ONCE_WAIT_S, extra_args=extra),
            interval)
    if why := no_window():
        print("gpumon: " + why, file=sys.stderr)
        return 1
    try:
        from gpumon.ui.window import launch
        from gpumon.ui.window.remote_window import remote_window
    except ImportError as exc:
        print("gpumon: " + (extras.window_needs(exc) or (
            tr("cannot open the window ({error}).", error=exc) + "\n"
            + tr("Try `gpumon --ssh HOST --once` for a text snapshot."))), file=sys.stderr)
        return 1
    return launch.run(None, args.interval, lang=args.lang,
                      make_window=lambda interval_s, settings: remote_window(
                          targets, options, interval_s, extra, settings))


def _print_many(targets: list[Target], options: SshOptions, interval: float,
                extra: tuple[str, ...], args: argparse.Namespace) -> int:
    """``--once`` over many machines: each machine's GPUs, grouped as --prometheus does."""
    if args.watch is not None or args.json or args.csv or args.query:
        print("gpumon: " + tr("with several machines, --once prints their GPUs grouped by "
                              "machine; -l, --json, --csv and -q read one machine"),
              file=sys.stderr)
        return 2
    from gpumon.cli.cluster import render_cluster
    from gpumon.remote.fleet import RemoteFleet

    fleet = RemoteFleet(targets, options, interval, extra_args=extra)
    fleet.open()
    try:
        fleet.wait_all(ONCE_WAIT_S)
        snap = fleet.sample()
    finally:
        fleet.close()
    sys.stdout.write(render_cluster(snap))
    return 0 if all(h.up for h in snap.hosts) else 1
