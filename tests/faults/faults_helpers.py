"""What the window and ``gpumon --once`` show, as plain text, for the fault tests."""

from __future__ import annotations

import html
import re
from collections.abc import Callable

import pytest
from PySide6.QtCore import Qt

from gpumon.cli.main import main
from gpumon.telemetry.model.types import Source
from gpumon.telemetry.sources.simulated import SimulatedFaults, SimulatedSource
from gpumon.ui.window.main_window import MainWindow

_TAG = re.compile(r"<[^>]+>")


def plain(rich: str) -> str:
    """Rich text as a person reads it: tags and swatches dropped, spaces collapsed."""
    text = html.unescape(_TAG.sub("", rich)).replace("■", "")  # colour swatches
    return " ".join(text.split())


def panel_text(w: MainWindow, gpu: int) -> str:
    """Everything the GPU's panel says: title, LOST banner (when shown), labels, readouts."""
    p = w.gpu_panel(gpu)
    assert p is not None, f"no panel for GPU {gpu}"
    parts = [p.title.text()]
    if not p.lost_label.isHidden():
        parts.append(p.lost_label.text())
    parts += [p.mem_label.text(), p.util_label.text(), p.readouts.text()]
    return plain(" | ".join(parts))


def smi_row(w: MainWindow, gpu: int) -> dict[str, str]:
    """The GPU's row in the nvidia-smi table, by column header."""
    m = w.smi_table.model()
    for row in range(m.rowCount()):
        if m.data(m.index(row, 0)) == str(gpu):
            return {str(m.headerData(c, Qt.Orientation.Horizontal)): str(m.data(m.index(row, c)))
                    for c in range(m.columnCount())}
    raise AssertionError(f"GPU {gpu} has no row in the GPU table")


def process_rows(w: MainWindow) -> list[dict[str, str]]:
    """The process table's rows, by column header."""
    m = w.process_table.process_model
    return [{str(m.headerData(c, Qt.Orientation.Horizontal)): str(m.data(m.index(r, c)))
             for c in range(m.columnCount())} for r in range(m.rowCount())]


def simulated(n: int = 2, faults: SimulatedFaults | None = None) -> Callable[[], Source]:
    return lambda: SimulatedSource(n, seed=3, faults=faults)


def run_once(capfd: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """``gpumon --once`` in this process: (exit status, stdout, stderr); never a traceback."""
    capfd.readouterr()
    rc = main([*args, "--once"])
    out, err = capfd.readouterr()
    assert "Traceback" not in out + err
    return rc, out, err


def once_gpu_block(out: str, gpu: int) -> str:
    """The two (or more) lines of GPU ``gpu``'s block in ``--once`` output."""
    lines = out.splitlines()
    for i, line in enumerate(lines):
        if re.match(rf"\|\s+{gpu}\s\s", line):
            block = [line]
            for nxt in lines[i + 1:]:
                if nxt.startswith("+"):
                    break
                block.append(nxt)
            return "\n".join(block)
    raise AssertionError(f"GPU {gpu} is not in the --once output:\n{out}")
