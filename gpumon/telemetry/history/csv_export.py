"""The history's CSV export, Qt-free: the window's "Export visible window" copies the last
seconds of every GPU's series out of the History on the GUI thread (``history_table``: numpy
copies, milliseconds) and writes them on a worker thread (``write_history_csv``), with the
columns and cells of ``csv_rows``.
"""

from __future__ import annotations

import contextlib
import csv
import os
import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

import numpy as np

from gpumon.telemetry.history.csv_rows import ID_COLUMNS, cell, column, stamps
from gpumon.telemetry.history.store import SELF_MEM_KEY, History
from gpumon.telemetry.model.metrics import HISTORY_KEYS
from gpumon.telemetry.model.types import Snapshot
from gpumon.untrusted import for_csv


@dataclass(frozen=True)
class HistoryTable:
    """The last ``window_s`` seconds of every GPU's series, copied out of the History, so
    that writing it can happen on another thread while the History goes on filling."""

    keys: list[str]
    blocks: list[tuple[int, str, str, np.ndarray, list[np.ndarray]]]  # gpu, uuid, name, t, cols

    @property
    def rows(self) -> int:
        return sum(len(times) for _, _, _, times, _ in self.blocks)


def history_table(history: History, snapshot: Snapshot | None, window_s: float) -> HistoryTable:
    """Copy what ``write_history_csv`` writes (fast: numpy copies; for the GUI thread)."""
    latest = history.latest_time()
    since = None if latest is None else latest - window_s
    gpus = {g.index: g for g in snapshot.gpus} if snapshot is not None else {}
    keys: list[str] = list(HISTORY_KEYS) + [SELF_MEM_KEY]
    for i in history.gpu_indices():
        keys += [k for k in history.keys(i) if k not in keys]
    blocks = []
    for i in history.gpu_indices():
        info = gpus.get(i)
        times, _ = history.series(i, keys[0], since=since)
        columns = [history.series(i, k, since=since)[1] for k in keys]
        blocks.append((i, for_csv(info.uuid) if info else "", for_csv(info.name) if info else "",
                       times, columns))  # names may come from remote machines: never formulas
    return HistoryTable(keys, blocks)


def write_history_csv(table: HistoryTable, path: str | Path) -> int:
    """Write ``table`` as CSV (any thread; OSError when it cannot be written); rows written."""
    with replaced_whole(Path(path)) as f:
        writer = csv.writer(f)
        writer.writerow([*ID_COLUMNS, *(column(k) for k in table.keys)])
        for gpu, uuid, name, times, columns in table.blocks:
            times_s = times.tolist()  # Python floats: much faster than numpy scalars per cell
            cells = [[cell(v) for v in c.tolist()] for c in columns]
            writer.writerows([*stamps(t), gpu, uuid, name, *row]
                             for t, *row in zip(times_s, *cells, strict=True))
    return table.rows


@contextlib.contextmanager
def replaced_whole(path: Path) -> Iterator[TextIO]:
    """A text file that becomes ``path`` only once it is written whole: written beside it
    under a hidden name, then renamed over it. A failure (a full disk) leaves ``path`` as it
    was (a truncated export once stood under the name the user chose) and the rest removed.
    The new file gets the permissions a plain ``open`` gives (the umask's)."""
    temp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0),
                 0o666)
    try:
        with open(fd, "w", newline="", encoding="utf-8") as f:
            yield f
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            temp.unlink()
        raise
