"""The playground's link to the monitor: markers on GPU graphs and torch's memory counters.

``cuda:i`` is matched to the NVML GPU with the same UUID (torch's UUID from the engine's
DeviceOptions, NVML's from the grid's GPUs), in ``MonitorLink._remap`` only: CUDA and NVML
number GPUs differently. An
outcome that touched ``cuda:i`` becomes a marker on that GPU's graphs, and from then on the
GPU's memory graph also plots NVML's used-by-this-process and torch's reserved and
allocated bytes, which :class:`TorchMemoryProvider` adds to every Snapshot from the sampling
thread. Both halves are plain plumbing that a test can feed with a fake outcome, fake
counters and simulated GPUs; the real CUDA check is ``tests/gpu/test_ui_cuda.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pyqtgraph as pg
from PySide6.QtCore import QObject, Qt, Signal, Slot
from PySide6.QtGui import QColor

from gpumon.device_ids import cuda_index
from gpumon.i18n import N_, tr
from gpumon.playground.data.devices import DeviceOption, match_cuda_to_nvml
from gpumon.playground.data.outcome import Outcome
from gpumon.telemetry.history.store import SELF_MEM_KEY
from gpumon.telemetry.model.types import GpuInfo, Snapshot
from gpumon.ui.playground.style import (
    ERROR_COLOR,
    device_color,
    marker_text,
    marker_tip,
    on_background,
    show_tip,
)

if TYPE_CHECKING:
    from gpumon.ui.monitor.grid import GpuGrid
    from gpumon.ui.monitor.panel import GpuPanel

ALLOCATED_KEY = "torch_allocated_bytes"
RESERVED_KEY = "torch_reserved_bytes"
#: (History key, legend label, colour, dashed) added to a GPU's memory graph once used.
SERIES: tuple[tuple[str, str, str, bool], ...] = (
    (SELF_MEM_KEY, N_("NVML: this process"), "#9467bd", True),
    (RESERVED_KEY, N_("torch reserved"), "#ff7f0e", False),
    (ALLOCATED_KEY, N_("torch allocated"), "#d62728", False),
)
#: Marker labels step down the graph so actions close in time stay readable.
LABEL_POSITIONS = (0.9, 0.78, 0.66, 0.54)

_SERIES_PROPERTY = "playgroundTorchSeries"  # set on a GpuPanel once it has SERIES
_MARKS_PROPERTY = "playgroundMarkers"  # how many markers the playground put on a GpuPanel

Counters = Callable[[], dict[int, tuple[int, int]]]


def cuda_to_nvml(cuda_uuids: Sequence[str], gpus: Sequence[GpuInfo]) -> dict[int, GpuInfo]:
    """``{cuda index: NVML GpuInfo}`` for the cuda devices whose UUID NVML also lists."""
    matches = match_cuda_to_nvml(list(cuda_uuids), [g.uuid for g in gpus])
    return {c: gpus[pos] for c, pos in matches.items() if pos is not None}


class TorchMemoryProvider:
    """An extra provider for the sampling thread: torch's counters keyed by NVML GPU index.

    ``counters`` gives the kernel's latest allocator counters (``{cuda index: (allocated,
    reserved)}``, ``{}`` until the playground uses a GPU), so this costs nothing before that.
    The mapping comes from the link (one assignment, safe across threads); a GPU whose UUID
    is not the mapped one (the GPU set changed since) gets nothing.
    """

    def __init__(self, counters: Counters) -> None:
        self.counters = counters  # replaceable: tests feed fake counters
        self._mapping: dict[int, GpuInfo] = {}

    def set_mapping(self, mapping: dict[int, GpuInfo]) -> None:
        """``{cuda index: NVML GpuInfo}``, as :func:`cuda_to_nvml` made it."""
        self._mapping = dict(mapping)

    def __call__(self, snap: Snapshot) -> dict[int, dict[str, float]]:
        counters = self.counters()
        if not counters:
            return {}
        mapping = self._mapping
        uuids = {g.index: g.uuid for g in snap.gpus}
        out: dict[int, dict[str, float]] = {}
        for index, (allocated, reserved) in counters.items():
            info = mapping.get(index)
            if info is not None and uuids.get(info.index) == info.uuid:
                out[info.index] = {ALLOCATED_KEY: float(allocated), RESERVED_KEY: float(reserved)}
        return out


@dataclass(frozen=True)
class Marker:
    device: str  # "cuda:0": re-mapped to an NVML GPU whenever the panels are rebuilt
    t: float
    text: str
    color: str
    tip: str = ""  # the tooltip: the code and what it cost in memory on this GPU


class MonitorLink(QObject):
    """Puts outcomes on the graphs of the GPUs they touched (see the module doc).

    Wiring, done by whoever owns the sampler: ``sampling.add_extra_provider(link.provider)``,
    and ``reapply`` when the grid's panels are rebuilt.
    """

    # (time, text, NVML index or None) of each marker put on a graph (a recording keeps it)
    marked = Signal(float, str, object)

    def __init__(self, grid: GpuGrid, counters: Counters, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._grid = grid
        self.provider = TorchMemoryProvider(counters)
        self._cuda_uuids: tuple[str, ...] = ()
        self._mapping: dict[int, GpuInfo] = {}
        self.markers: list[Marker] = []
        self.used: set[str] = set()  # cuda devices the playground touched

    def set_device_options(self, options: Sequence[DeviceOption]) -> None:
        """The engine's devices: torch's UUID of each cuda:i (for the mapping)."""
        uuids: dict[int, str] = {}
        for opt in options:
            index = cuda_index(opt.name)
            if index is not None:
                uuids[index] = opt.uuid or ""
        count = max(uuids) + 1 if uuids else 0
        self._cuda_uuids = tuple(uuids.get(i, "") for i in range(count))
        self._remap()
        self._ensure_used_series()

    def nvml_index(self, device: str) -> int | None:
        """The NVML GPU index of ``cuda:i``, matched by UUID; None when unknown."""
        index = cuda_index(device)
        info = None if index is None else self._mapping.get(index)
        return None if info is None else info.index

    def _remap(self) -> None:
        """The one place where cuda:i meets its NVML GPU: the grid's GPUs, by UUID."""
        self._mapping = cuda_to_nvml(self._cuda_uuids, [p.info for p in self._grid.panels])
        self.provider.set_mapping(self._mapping)

    @Slot(object)
    def on_outcome(self, outcome: Outcome) -> None:
        """A marker on the graph of each GPU the outcome touched; its torch series from now."""
        color = ERROR_COLOR if not outcome.ok else None
        for device in outcome.devices:
            if cuda_index(device) is None:
                continue
            marker = Marker(device, outcome.started_at, marker_text(outcome, device),
                            color or device_color(device), marker_tip(outcome, device))
            self.markers.append(marker)
            self.marked.emit(marker.t, marker.text, self.nvml_index(device))
            self.used.add(device)
            panel = self._panel(device)
            if panel is not None:
                self._ensure_series(panel)
                self._mark(panel, marker)
                self._grid.ensureWidgetVisible(panel)

    @Slot()
    def reapply(self) -> None:
        """The panels were rebuilt (new source or GPU set): mapping, series, markers again."""
        self._remap()
        self._ensure_used_series()
        for marker in self.markers:
            panel = self._panel(marker.device)
            if panel is not None:
                self._mark(panel, marker)

    def _ensure_used_series(self) -> None:
        for device in sorted(self.used):
            panel = self._panel(device)
            if panel is not None:
                self._ensure_series(panel)

    def _panel(self, device: str) -> GpuPanel | None:
        nvml = self.nvml_index(device)
        return None if nvml is None else self._grid.panel(nvml)

    @staticmethod
    def _mark(panel: GpuPanel, marker: Marker) -> None:
        count = int(panel.property(_MARKS_PROPERTY) or 0)
        panel.setProperty(_MARKS_PROPERTY, count + 1)
        line = panel.add_marker(marker.t, marker.text, marker.color,
                                dark_color=on_background(marker.color, dark=True))
        label = getattr(line, "label", None)
        show_tip(line, marker.tip)
        if label is not None:
            label.setPosition(LABEL_POSITIONS[count % len(LABEL_POSITIONS)])

    @staticmethod
    def _ensure_series(panel: GpuPanel) -> None:
        if panel.property(_SERIES_PROPERTY):
            return
        panel.setProperty(_SERIES_PROPERTY, True)
        for key, label, color, dashed in SERIES:
            style = Qt.PenStyle.DashLine if dashed else Qt.PenStyle.SolidLine
            panel.add_memory_series(key, tr(label), color, style=style)
        legend = panel.memory_plot.legend
        if legend is not None:  # bottom left: the marker labels use the top of the graph
            box = QColor(panel.memory_widget.backgroundBrush().color())  # follows the theme
            box.setAlpha(200)
            legend.setBrush(pg.mkBrush(box))
            legend.anchor(itemPos=(0, 1), parentPos=(0, 1), offset=(4, -4))
