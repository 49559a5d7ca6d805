"""``-i``/``--id``: the GPUs ``--once`` and ``--watch`` show, named as nvidia-smi names them.

nvidia-smi's ``-i`` takes a GPU's 0-based index, its UUID or its PCI bus id
(``domain:bus:device.function`` in hex), several of them comma-separated; an id that names
no GPU is refused with "No devices were found" and return code 6, which its manual gives as
"a query to find an object was unsuccessful". gpumon does the same, naming the id and the
GPUs there are. The ids are matched once, against the first reading, and the same GPUs (by
UUID) are shown for the whole watch. No Qt, no NVML.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Iterable

from gpumon.device_ids import normalize_uuid
from gpumon.i18n import tr
from gpumon.telemetry.model.types import GpuInfo, Snapshot

NOT_FOUND = 6  # nvidia-smi's return code when a query finds no object
MAX_IDS = 64
MAX_INDEX_DIGITS = 6


def parse_ids(text: str) -> tuple[str, ...]:
    """The ids of ``-i 0,1`` (spaces around them ignored, empty ones dropped)."""
    return tuple(i.strip() for i in text.split(",") if i.strip())[:MAX_IDS]


def checked_ids(text: str) -> str:
    """``-i``'s argument when it names at least one GPU and each index is a number a GPU
    can have; argparse's one-line error otherwise (``-i ,,,`` once showed every GPU with
    status 0, and a 5,000-digit index raised int()'s digit limit as a traceback)."""
    ids = parse_ids(text)
    if not ids:
        raise argparse.ArgumentTypeError(
            tr("names no GPU: give an index, a UUID or a PCI bus id, got {text}",
               text=repr(text)[:80]))
    for given in ids:
        if given.isascii() and given.isdigit() and len(given) > MAX_INDEX_DIGITS:
            raise argparse.ArgumentTypeError(
                tr("{id} is no GPU index (an index has at most {n} digits)",
                   id=repr(given)[:40] + ("…" if len(given) > 38 else ""),
                   n=MAX_INDEX_DIGITS))
    return text


def _bus(text: str) -> tuple[int, int, int, int] | None:
    """(domain, bus, device, function) of ``00000000:3B:00.0``, ``0000:3b:00.0`` or
    ``3b:00.0``; None for anything else."""
    parts = text.strip().lower().split(":")
    if len(parts) == 2:
        parts = ["0", *parts]
    if len(parts) != 3 or "." not in parts[2]:
        return None
    device, _, function = parts[2].partition(".")
    try:
        return int(parts[0], 16), int(parts[1], 16), int(device, 16), int(function, 16)
    except ValueError:
        return None


def matches(gpu: GpuInfo, given: str) -> bool:
    """Whether ``given`` (an index, a UUID, a PCI bus id) names ``gpu``."""
    if given.isascii() and given.isdigit():
        return len(given) <= MAX_INDEX_DIGITS and int(given) == gpu.index
    uuid = normalize_uuid(given)
    if uuid is not None:
        return uuid == normalize_uuid(gpu.uuid)
    bus = _bus(given)
    return bus is not None and bus == _bus(gpu.pci_bus_id)


class Selection:
    """The GPUs ``ids`` name, fixed at the first reading."""

    def __init__(self, ids: Iterable[str]) -> None:
        self.ids = tuple(ids)
        self._chosen: set[tuple[str, int]] | None = None

    def resolve(self, snapshot: Snapshot) -> str | None:
        """Match the ids against ``snapshot``'s GPUs; the sentence when one names none."""
        chosen: set[tuple[str, int]] = set()
        for given in self.ids:
            found = [g for g in snapshot.gpus if matches(g, given)]
            if not found:
                there = ", ".join(str(g.index) for g in snapshot.gpus) or tr("none")
                return tr("No devices were found: no GPU matches -i {id} (the GPUs here: "
                          "{indexes}; an id is an index, a UUID or a PCI bus id).",
                          id=repr(given)[:80], indexes=there)
            chosen |= {(g.uuid, g.index) for g in found}
        self._chosen = chosen
        return None

    def apply(self, snapshot: Snapshot) -> Snapshot:
        """``snapshot`` with only the chosen GPUs, their samples, MIG devices and processes."""
        if self._chosen is None:
            return snapshot
        uuids = {uuid for uuid, _ in self._chosen if uuid}
        indexes = {g.index for g in snapshot.gpus
                   if g.uuid in uuids or (not g.uuid and (g.uuid, g.index) in self._chosen)}
        return dataclasses.replace(
            snapshot, gpus=tuple(g for g in snapshot.gpus if g.index in indexes),
            samples=tuple(s for s in snapshot.samples if s.index in indexes),
            migs=tuple(m for m in snapshot.migs if m.gpu_index in indexes),
            processes=tuple(p for p in snapshot.processes if p.gpu_index in indexes))
