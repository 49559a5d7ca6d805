"""The text of a GPU panel, as styled runs: its title, its readouts, and the memory and
utilization readings above its graphs, in the chosen language, each with the shorter forms a
narrow panel shows instead (the whole line is in the tooltip). Apart from panel.py so that
the panel can measure the width they need (its minimum width) with the same runs it shows."""

from __future__ import annotations

from gpumon.i18n import tr
from gpumon.telemetry.model.metrics import format_value
from gpumon.telemetry.model.readouts import duplicate_note
from gpumon.telemetry.model.types import GpuInfo, GpuSample
from gpumon.ui.widgets.runs_label import TextRun
from gpumon.units import GIB
from gpumon.untrusted import for_terminal

MEM_COLOR = "#1f77b4"
GPU_UTIL_COLOR = "#2ca02c"
MEM_UTIL_COLOR = "#ff7f0e"
# The widest readings a graph's label must show whole (the free memory after them may be
# cut: the tooltip has it): what the panel's minimum width is measured with.
WIDEST = GpuSample(0, 0.0, mem_used_bytes=int(99.99 * GIB), mem_total_bytes=int(99.99 * GIB),
                   gpu_util_pct=100.0, mem_util_pct=100.0)
MEMORY_RUNS_SHOWN = 4  # the memory label's runs up to the total ("■ Memory 12.34 / 80.00 GiB")


Forms = list[list[TextRun]]  # shorter forms of a line, longest first
ELLIPSIS_RUN = TextRun(" · …")


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


def title_runs(info: GpuInfo, *, bus: str | None = None, others: bool = True
               ) -> list[TextRun]:
    """Host (on a cluster), GPU index, name, PCI bus id (``bus``: another form of it, ""
    none), [SIMULATED] when it is, and (``others``) the other exporters that report it too."""
    bus_id = info.pci_bus_id if bus is None else bus
    runs = [TextRun(info.host, bold=True), TextRun(" · ")] if info.host else []
    runs += [TextRun(f"GPU {info.index}", bold=True),
             TextRun(f" · {for_terminal(info.name)}")]  # the driver's strings: escaped
    if bus_id:
        runs += [TextRun(" "), TextRun(for_terminal(bus_id), color="#777")]
    if info.simulated:
        runs.append(TextRun(" [" + tr("SIMULATED") + "]", bold=True, color="#e65100"))
    if info.duplicates and others:  # two exporters report this GPU (the tooltip says all)
        runs.append(TextRun(" · " + tr("also reported by {targets}",
                                       targets=", ".join(info.duplicates)), color="#b26a00"))
    return runs


def short_bus_id(bus_id: str) -> str:
    """``00000000:17:00.0`` as ``17:00.0``: the PCI domain left out when it is 0, as lspci
    writes it; any other text as it is."""
    domain, sep, rest = bus_id.partition(":")
    return rest if sep and domain.strip("0") == "" and rest.count(":") == 1 else bus_id


def title_forms(info: GpuInfo) -> Forms:
    """The title's shorter forms: the short bus id, then none (the other exporters that
    report the GPU stay in the tooltip)."""
    forms = []
    short = short_bus_id(info.pci_bus_id)
    if short != info.pci_bus_id or info.duplicates:
        forms.append(title_runs(info, bus=short, others=False))
    if info.pci_bus_id:
        forms.append(title_runs(info, bus="", others=False))
    return forms


def memory_forms(runs: list[TextRun]) -> Forms:
    """The memory label without the free memory after the total (the tooltip has it)."""
    return [runs[:MEMORY_RUNS_SHOWN]]


def item_forms(runs: list[TextRun]) -> Forms:
    """A line of items ("Temp 45 °C · Power 120 / 250 W · …") with its last items left out,
    one more at each form, down to the first item, each ending in " · …": a narrow panel shows
    whole items, never "Mem 26…"."""
    starts = [i for i, r in enumerate(runs) if i and r.text.startswith(" · ")]
    return [[*runs[:i], ELLIPSIS_RUN] for i in reversed(starts)]


def tooltip_text(info: GpuInfo, extra: str) -> str:
    """The title's tooltip: the readings not shown above the graphs, after the duplicate
    note when other exporters report this GPU too."""
    return f"{duplicate_note(info)}\n{extra}".strip() if info.duplicates else extra
