"""The text above a GPU panel's two graphs, as styled runs: its memory and its utilization
readings, in the chosen language. Apart from panel.py so that the panel can measure the width
they need (its minimum width) with the same runs it shows."""

from __future__ import annotations

from gpumon.i18n import tr
from gpumon.telemetry.cluster.fleet import duplicate_note
from gpumon.telemetry.model.metrics import format_value
from gpumon.telemetry.model.types import GpuInfo, GpuSample
from gpumon.ui.widgets.runs_label import TextRun
from gpumon.units import GIB

MEM_COLOR = "#1f77b4"
GPU_UTIL_COLOR = "#2ca02c"
MEM_UTIL_COLOR = "#ff7f0e"
# The widest readings a graph's label must show whole (the free memory after them may be
# cut: the tooltip has it): what the panel's minimum width is measured with.
WIDEST = GpuSample(0, 0.0, mem_used_bytes=int(99.99 * GIB), mem_total_bytes=int(99.99 * GIB),
                   gpu_util_pct=100.0, mem_util_pct=100.0)
MEMORY_RUNS_SHOWN = 4  # the memory label's runs up to the total ("■ Memory 12.34 / 80.00 GiB")


def memory_runs(s: GpuSample | None) -> list[TextRun]:
    """The memory graph's label: ``■ Memory 12.34 / 80.00 GiB · free 67.66``."""
    return [TextRun("■", color=MEM_COLOR), TextRun(" " + tr("Memory") + " "),
            TextRun(format_value(s, "mem_used_bytes", with_unit=False), bold=True),
            TextRun(f" / {format_value(s, 'mem_total_bytes')}"), TextRun(" · " + tr("free") + " "),
            TextRun(format_value(s, "mem_free_bytes", with_unit=False), bold=True)]


def util_runs(s: GpuSample | None) -> list[TextRun]:
    """The utilization graph's label: ``■ GPU 45 %   ■ Mem ctrl 30 %``."""
    return [TextRun("■", color=GPU_UTIL_COLOR), TextRun(" GPU "),
            TextRun(format_value(s, "gpu_util_pct"), bold=True), TextRun("   "),
            TextRun("■", color=MEM_UTIL_COLOR), TextRun(" " + tr("Mem ctrl") + " "),
            TextRun(format_value(s, "mem_util_pct"), bold=True)]


def title_runs(info: GpuInfo) -> list[TextRun]:
    """Host (on a cluster), GPU index, name, PCI bus id, [SIMULATED] when it is, and the
    other exporters that report it too."""
    runs = [TextRun(info.host, bold=True), TextRun(" · ")] if info.host else []
    runs += [TextRun(f"GPU {info.index}", bold=True), TextRun(f" · {info.name} "),
             TextRun(info.pci_bus_id, color="#777")]
    if info.simulated:
        runs.append(TextRun(" [" + tr("SIMULATED") + "]", bold=True, color="#e65100"))
    if info.duplicates:  # two exporters report this GPU (the tooltip says all)
        runs.append(TextRun(" · " + tr("also reported by {targets}",
                                       targets=", ".join(info.duplicates)), color="#b26a00"))
    return runs


def tooltip_text(info: GpuInfo, extra: str) -> str:
    """The title's tooltip: the readings not shown above the graphs, after the duplicate
    note when other exporters report this GPU too."""
    return f"{duplicate_note(info)}\n{extra}".strip() if info.duplicates else extra
