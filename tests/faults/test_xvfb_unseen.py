"""A window the X server no longer shows (unmapped, as a window manager does to a minimised
window) gets no readout, curve, table or CPU-graph update, and is whole again when mapped.

This needs a real X server: Qt's offscreen platform never unexposes a shown window. A small
program runs the GPU grid, the nvidia-smi table and the Playground's CPU graph on Xvfb
(xcb), feeds them simulated snapshots, and unmaps and maps its own window from a second X
connection (``xcb_unmap_window`` through ctypes, what ``xdotool windowunmap`` sends); it
prints what it counted as JSON. (Minimised through a window manager, Qt also sends hide
events; unmapped without one, as here, only the exposure changes.)
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.xdist_group("test_xvfb_unseen"),  # its module fixture: made once
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("Xvfb") is None,
                       reason="Xvfb is not installed (CI installs it: see .ci/run)"),
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="X11 test"),
]

PROGRAM = r"""
import ctypes, json, os, sys, time
from PySide6.QtWidgets import QApplication, QVBoxLayout, QWidget
from gpumon.telemetry.history.store import History, capacity_for
from gpumon.telemetry.sources.sampler import Sampler
from gpumon.telemetry.sources.simulated import SimulatedSource
from gpumon.ui.monitor.grid import GpuGrid
from gpumon.ui.widgets.runs_label import RunsLabel
from gpumon.ui.monitor.smi_table import SmiTable, SmiTableModel
from gpumon.ui.playground.cpu_view import REDRAW_MS, CpuMemoryView

app = QApplication(sys.argv)
set_runs = []
original = RunsLabel.set_runs
def counting(self, runs, *forms):
    set_runs.append(1)
    original(self, runs, *forms)
RunsLabel.set_runs = counting

clock = [1_700_000_000.0]
source = SimulatedSource(2, seed=0, clock=lambda: clock[0])
sampler = Sampler(source, clock=lambda: clock[0], wall_clock=lambda: clock[0])
sampler.open()
history = History(capacity_for(300.0, 1.0))
window = QWidget()
layout = QVBoxLayout(window)
grid, table = GpuGrid(), SmiTable()
cpu = CpuMemoryView(os.getpid)  # the Playground's graph without a GPU: its own timer
layout.addWidget(grid, 3)
layout.addWidget(table, 1)
layout.addWidget(cpu, 1)
redraws = []
cpu.redraw = lambda: redraws.append(1)
window.resize(1000, 800)
window.show()
changed = []
table.smi_model.dataChanged.connect(lambda *a: changed.append(1))

def wait(cond, seconds=10.0):
    end = time.monotonic() + seconds
    while not cond():
        if time.monotonic() > end:
            return False
        app.processEvents()
        time.sleep(0.01)
    return True

def tick(n):
    for _ in range(n):
        clock[0] += 1.0
        snap = sampler.tick()
        history.append(snap)
        grid.set_gpus(snap.gpus, 300.0)
        grid.update_view(snap, history, 300.0)
        table.show_snapshot(snap)
        wait(lambda: False, 0.02)
    return snap

exposed = lambda: window.windowHandle() is not None and window.windowHandle().isExposed()
out = {"exposed_at_start": wait(exposed)}
tick(3)
out["seen"] = {"set_runs": len(set_runs), "table_changes": len(changed)}
xcb = ctypes.CDLL("libxcb.so.1")
xcb.xcb_connect.restype = ctypes.c_void_p
xcb.xcb_connect.argtypes = [ctypes.c_char_p, ctypes.c_void_p]
xcb.xcb_unmap_window.argtypes = xcb.xcb_map_window.argtypes = [ctypes.c_void_p, ctypes.c_uint32]
xcb.xcb_flush.argtypes = [ctypes.c_void_p]
conn = xcb.xcb_connect(None, None)
wid = int(window.winId())
xcb.xcb_unmap_window(conn, wid)
xcb.xcb_flush(conn)
out["unexposed"] = wait(lambda: not exposed())
out["visible_while_unmapped"] = grid.panels[0].isVisible()
set_runs.clear(); changed.clear()
newest_drawn = grid.panels[0].x_origin_s  # the time of the newest sample drawn
latest = tick(5)
redraws.clear()
wait(lambda: False, 3 * REDRAW_MS / 1000)
out["unseen"] = {"set_runs": len(set_runs), "table_changes": len(changed),
                 "cpu_redraws": len(redraws)}
xcb.xcb_map_window(conn, wid)
xcb.xcb_flush(conn)
out["exposed_again"] = wait(exposed)
out["cpu_redrawn"] = wait(lambda: bool(redraws), 3 * REDRAW_MS / 1000)
panel = grid.panels[0]
out["curve_moved"] = wait(lambda: panel.x_origin_s != newest_drawn)
sample = latest.sample_for(0)
out["curve_last_gib"] = float(panel._mem_curve.yData[-1])
out["latest_gib"] = sample.mem_used_bytes / (1 << 30)
expected = SmiTableModel()
expected.update_snapshot(latest)
m = table.smi_model
out["table_is_latest"] = all(
    m.data(m.index(r, c)) == expected.data(expected.index(r, c))
    for r in range(expected.rowCount()) for c in range(expected.columnCount()))
print(json.dumps(out))
"""


def test_an_unmapped_window_is_not_updated_and_is_whole_when_mapped(
        display: str, tmp_path: Path) -> None:
    env = dict(os.environ, DISPLAY=display, QT_QPA_PLATFORM="xcb",
               XDG_CONFIG_HOME=str(tmp_path))
    env.pop("WAYLAND_DISPLAY", None)
    done = subprocess.run([sys.executable, "-c", PROGRAM], env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["exposed_at_start"]
    assert out["seen"]["set_runs"] > 0 and out["seen"]["table_changes"] > 0
    assert out["unexposed"], "the X server did not unmap the window"
    assert out["visible_while_unmapped"]  # Qt still calls it visible: only exposure tells
    assert out["unseen"] == {"set_runs": 0, "table_changes": 0, "cpu_redraws": 0}, out
    assert out["exposed_again"] and out["curve_moved"] and out["cpu_redrawn"], out
    assert out["curve_last_gib"] == pytest.approx(out["latest_gib"]), out
    assert out["table_is_latest"], out
