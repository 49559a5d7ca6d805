"""Argument types the command lines share (the window's, ``gpumon exporter``'s)."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from gpumon import i18n
from gpumon.i18n import tr
from gpumon.interval import IntervalRange

MAX_SIMULATED_GPUS = 16


class OneLineParser(argparse.ArgumentParser):
    """Argument errors in one line and a hint, instead of the whole usage first (exit 2)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n"
                     + tr("Try '{prog} --help' for usage.", prog=self.prog) + "\n")


def add_gpm_argument(parser: argparse.ArgumentParser) -> None:
    """``--no-gpm``: read no GPU activity (GPM), whose counters DCGM's profiling also uses."""
    parser.add_argument("--no-gpm", action="store_true",
                        help=tr("do not read GPU activity (GPM: SM, tensor, DRAM activity); "
                                "GPM shares hardware counters with DCGM's profiling, so turn "
                                "it off while DCGM profiles these GPUs"))


def gpu_count(text: str) -> int:
    """A number of simulated GPUs, 1 to MAX_SIMULATED_GPUS; argparse's error otherwise."""
    try:
        n = int(text)
    except ValueError:
        n = 0
    if not 1 <= n <= MAX_SIMULATED_GPUS:
        raise argparse.ArgumentTypeError(
            tr("must be a whole number of GPUs from 1 to {most}, got {text}",
               most=MAX_SIMULATED_GPUS, text=repr(text)))
    return n


def seconds(interval: IntervalRange) -> Callable[[str], float]:
    """An argument type for seconds in ``interval``'s range (interval.py); argparse's error
    otherwise."""
    def parse(text: str) -> float:
        try:
            return interval.parse(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
    return parse


def language(text: str) -> str:
    """A language gpumon speaks (``en``, ``zh_CN``; ``zh`` and ``zh_CN.UTF-8`` too)."""
    found = i18n.normalize(text)
    if found is None:
        raise argparse.ArgumentTypeError(
            tr("gpumon speaks {languages}, not {text}",
               languages=", ".join(i18n.LANGUAGES), text=repr(text)))
    return found


def add_lang_argument(parser: argparse.ArgumentParser, default: Any = None) -> None:
    """``--lang``: the language of every message (default: the system's, or the window's
    saved choice)."""
    parser.add_argument("--lang", type=language, metavar="|".join(i18n.LANGUAGES),
                        default=default,
                        help=tr("the language of gpumon's messages (default: the system's)"))


def lang_from_argv(argv: Sequence[str]) -> str | None:
    """The ``--lang`` value in ``argv`` before it is parsed (so that the parser's own help
    and errors are in that language); None where it is absent or not a spoken language."""
    for i, arg in enumerate(argv):
        if arg == "--":
            break
        if arg.startswith("--lang="):
            return i18n.normalize(arg.split("=", 1)[1])
        if arg == "--lang" and i + 1 < len(argv):
            return i18n.normalize(argv[i + 1])
    return None


def whole_count(text: str) -> int:
    """A count of readings or lines (``-c``, ``--count``): a whole number from 1."""
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(tr("must be a whole number from 1, got {text}",
                                            text=repr(text)))
    return n
