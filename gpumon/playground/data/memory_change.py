"""What one action cost in memory, in words: on each device it touched, the change of torch's
allocated and reserved memory, the peak allocated during it and the change of NVML's figure for
the kernel's process (a GPU); the change and the peak of the kernel's resident memory (the CPU).

The figures are the Outcome's readings before and after the action (kernel/action_run.py:
``begin`` reads them and resets the peaks; the engine reads them again after). A result card,
its marker's tooltip on the graphs and the terminal lesson say the same words. A device with no
reading before the action (a GPU this action started CUDA on) held nothing of this process
before it: its changes are from 0. Pure functions, no Qt, no torch.
"""

from __future__ import annotations

from gpumon.device_ids import cuda_index
from gpumon.i18n import tr
from gpumon.playground.data.outcome import MemoryReading, Outcome
from gpumon.units import format_bytes


def signed_bytes(n: int) -> str:
    """A change of memory: ``+64.00 MiB``, ``-32.00 MiB``, ``0 B``."""
    return format_bytes(n) if n <= 0 else "+" + format_bytes(n)


def _change(before: int | None, after: int | None) -> int | None:
    return None if after is None else after - (before or 0)


def device_change(outcome: Outcome, device: str) -> str:
    """What the action changed on ``device`` in one line ("" when it has no reading there):
    ``cuda:0: allocated +64.00 MiB, reserved +64.00 MiB, peak 96.01 MiB; this process +64.00
    MiB (NVML)`` or ``cpu: RSS +64.00 MiB, peak +64.00 MiB`` (the peak above the RSS before)."""
    after = outcome.reading(device)
    if after is None:
        return ""
    before = outcome.reading(device, after=False)
    if cuda_index(device) is None:
        return _cpu_change(before, after)
    was = before or MemoryReading(device, 0, 0, process_bytes=0)
    allocated = _change(was.allocated_bytes, after.allocated_bytes)
    reserved = _change(was.reserved_bytes, after.reserved_bytes)
    line = tr("allocated {allocated}, reserved {reserved}",
              allocated=signed_bytes(allocated or 0), reserved=signed_bytes(reserved or 0))
    if after.peak_bytes is not None:
        line += tr(", peak {peak}", peak=format_bytes(after.peak_bytes))
    process = None if was.process_bytes is None else _change(was.process_bytes,
                                                              after.process_bytes)
    if process is not None:
        # TRANSLATORS: NVML's figure for the kernel's process, as nvidia-smi lists it.
        line += tr("; this process {change} (NVML)", change=signed_bytes(process))
    return tr("{device}: {change}", device=device, change=line)


def _cpu_change(before: MemoryReading | None, after: MemoryReading) -> str:
    if after.rss_bytes is None:
        return ""
    start = before.rss_bytes if before is not None else None
    if start is None:
        return tr("cpu: RSS {rss}", rss=format_bytes(after.rss_bytes))
    line = tr("cpu: RSS {change}", change=signed_bytes(after.rss_bytes - start))
    if after.peak_bytes is not None:  # never below the start, nor below the end
        peak = max(after.peak_bytes, after.rss_bytes, start) - start
        line += tr(", peak {peak}", peak=signed_bytes(peak))
    return line


def memory_change(outcome: Outcome) -> str:
    """:func:`device_change` of every device the action has a reading of, joined by `` · ``;
    "" when the action read none (it did not run)."""
    return " · ".join(filter(None, (device_change(outcome, r.device)
                                    for r in outcome.memory_after)))


__all__ = ["device_change", "memory_change", "signed_bytes"]
