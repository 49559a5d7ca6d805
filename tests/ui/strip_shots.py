"""Pictures of a GPU panel drawn as a strip chart after many ticks, and of the same history
drawn whole, for tests/ui/test_strip_chart.py. Also a script, so that a test can run it
under another QT_SCALE_FACTOR (the device pixel ratio is fixed when Qt starts):

    python tests/ui/strip_shots.py light 1.0 [FOLDER]   # prints the differences as JSON
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import numpy as np  # noqa: E402
from PySide6.QtCore import QPoint  # noqa: E402
from PySide6.QtGui import QImage  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from gpumon.telemetry.types import GpuInfo, GpuSample  # noqa: E402
from gpumon.ui.monitor import strip  # noqa: E402
from gpumon.ui.monitor.panel import GpuPanel  # noqa: E402
from gpumon.ui.theme import THEMES, palette_for  # noqa: E402
from gpumon.ui.theme import style_plot as _style_plot  # noqa: E402
from gpumon.units import GIB  # noqa: E402

INFO = GpuInfo(0, "Test GPU", "GPU-0000", "00000000:01:00.0", mem_total_bytes=16 * GIB)
T0 = 1_700_000_000.0
NOISE = np.random.default_rng(7).random(4096)


def history(t_now: float, window_s: float, interval_s: float = 1.0):  # type: ignore[no-untyped-def]
    """A series function as the grid gives the panels: noisy, with a gap of missing samples
    (NaN) at 1200 s to 1230 s after T0, from ``t_now - window_s`` to ``t_now``."""
    def series(_gpu: int, key: str) -> tuple[np.ndarray, np.ndarray]:
        n = int(round(window_s / interval_s))
        newest = int(np.floor(t_now / interval_s + 1e-6))  # samples on a fixed beat, each
        beats = np.arange(newest - n, newest + 1)  # with the same time and value every tick
        t = beats * interval_s
        noise = NOISE[beats % len(NOISE)]
        phase = {"mem_used_bytes": 0.0, "gpu_util_pct": 1.0}.get(key, 2.0)
        v = 50 + 30 * np.sin((t - T0) / 37.0 + phase) + 20 * noise
        v[(t - T0 >= 1200) & (t - T0 < 1230)] = np.nan
        return t, (v * 0.16 * GIB if key.startswith("mem_used") else v)
    return series


def style(panel: GpuPanel, theme: str, zoom: float) -> None:
    """The theme and zoom as the presentation controller sets them."""
    panel.setPalette(palette_for(THEMES[theme], QApplication.style().standardPalette()))
    for widget in (panel.memory_widget, panel.util_widget):
        _style_plot(widget, THEMES[theme], zoom, 9.0)


def make_panel(theme: str, zoom: float, window_s: float, *, strips: bool) -> GpuPanel:
    before = strip.set_strip_charts(strips)
    try:
        panel = GpuPanel(INFO, window_s=window_s)
    finally:
        strip.set_strip_charts(before)
    style(panel, theme, zoom)
    panel.resize(640, 300)
    panel.show()
    QApplication.processEvents()
    return panel


def settle() -> None:
    """Let the layout settle: a left axis narrows once its tick labels are measured."""
    for _ in range(5):
        QApplication.processEvents()


def repaint(panel: GpuPanel) -> None:
    for widget in (panel.memory_widget, panel.util_widget):
        widget.viewport().repaint()


def plots_image(panel: GpuPanel) -> QImage:
    """Both graphs side by side, in device pixels."""
    left = panel.memory_widget.grab().toImage()
    right = panel.util_widget.grab().toImage()
    out = QImage(left.width() + right.width(), max(left.height(), right.height()),
                 QImage.Format.Format_RGB32)
    out.fill(0)
    from PySide6.QtGui import QPainter
    painter = QPainter(out)
    painter.drawImage(QPoint(0, 0), left)
    painter.drawImage(QPoint(left.width(), 0), right)
    painter.end()
    return out


def pixels(image: QImage) -> np.ndarray:
    image = image.convertToFormat(QImage.Format.Format_RGB32)
    arr = np.ndarray((image.height(), image.bytesPerLine() // 4), dtype=np.uint32,
                     buffer=image.constBits())[:, :image.width()].copy()
    return np.stack([(arr >> s) & 0xFF for s in (16, 8, 0)], axis=-1).astype(int)


@dataclass
class Diff:
    pixels: int  # pixels whose colour differs by more than 16 in a channel
    total: int
    worst: int  # the largest difference in a channel

    @property
    def fraction(self) -> float:
        return self.pixels / self.total


def diff(a: QImage, b: QImage) -> Diff:
    pa, pb = pixels(a), pixels(b)
    assert pa.shape == pb.shape, (pa.shape, pb.shape)
    d = np.abs(pa - pb).max(axis=-1)
    return Diff(int((d > 16).sum()), int(d.size), int(d.max()))


def run_ticks(panel: GpuPanel, window_s: float, ticks: int, interval_s: float) -> float:
    """Draw the panel at T0 + 1000 s, then ``ticks`` ticks with a paint after each."""
    t = T0 + 1000.0
    panel.update_view(GpuSample(0, t), t, history(t, window_s, interval_s))
    settle()
    repaint(panel)
    for _ in range(ticks):
        t += interval_s
        panel.update_view(GpuSample(0, t), t, history(t, window_s, interval_s))
        repaint(panel)
    return t


def strip_and_full(theme: str, zoom: float, window_s: float = 300.0, ticks: int = 400,
                   interval_s: float = 1.0, folder: Path | None = None
                   ) -> tuple[Diff, Diff, dict[str, int]]:
    """(strip vs its own full redraw, strip vs plain curves from the same history, counts)."""
    panel = make_panel(theme, zoom, window_s, strips=True)
    t = run_ticks(panel, window_s, ticks, interval_s)
    mem, util = panel._strips
    counts = {"full": mem.full_renders + util.full_renders,
              "strip": mem.strip_renders + util.strip_renders}
    slid = plots_image(panel)
    for s in panel._strips:
        s.invalidate()
    repaint(panel)
    whole = plots_image(panel)
    # The same history drawn by plain curves, each graph from its strip chart's origin.
    plain = []
    for s in panel._strips:
        other = make_panel(theme, zoom, window_s, strips=False)
        t0 = s._t0
        assert t0 is not None
        other.update_view(GpuSample(0, t), t0, history(t, window_s, interval_s))
        settle()
        repaint(other)
        plain.append(other)
    mixed = plots_image(plain[0])
    right = plots_image(plain[1])
    from PySide6.QtGui import QPainter
    painter = QPainter(mixed)
    w = plain[0].memory_widget.grab().toImage().width()
    painter.drawImage(QPoint(w, 0), right, right.rect().adjusted(w, 0, 0, 0))
    painter.end()
    if folder is not None:
        folder.mkdir(parents=True, exist_ok=True)
        tag = f"{theme}-{zoom:g}x-dpr{panel.devicePixelRatioF():g}"
        panel.grab().save(str(folder / f"strip-{tag}.png"))
        plain[0].grab().save(str(folder / f"plain-{tag}.png"))
        slid.save(str(folder / f"plots-strip-{tag}.png"))
        whole.save(str(folder / f"plots-full-{tag}.png"))
        mixed.save(str(folder / f"plots-plain-{tag}.png"))
    for p in (panel, *plain):
        p.close()
        p.deleteLater()
    return diff(slid, whole), diff(slid, mixed), counts


if __name__ == "__main__":
    app = QApplication.instance() or QApplication(sys.argv)
    folder = Path(sys.argv[3]) if len(sys.argv) > 3 else None
    own, plain_diff, counts = strip_and_full(sys.argv[1], float(sys.argv[2]), folder=folder)
    print(json.dumps({"dpr": app.devicePixelRatio(), "own": own.__dict__,
                      "plain": plain_diff.__dict__, "counts": counts}))
