"""Immutable results the engine hands to the views: Outcome, WorkspaceEntry (a
WorkspacePage of them), LoadStatus, MemoryReading.

They hold strings, numbers and tuples only, never a tensor, so keeping an Outcome in a list
never keeps GPU memory alive, and they can cross from the kernel to the GUI thread.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from gpumon.playground.data.actions import Action
from gpumon.playground.data.errors import ErrorInfo, OperandInfo


@dataclass(frozen=True)
class MemoryReading:
    """One device's memory at one moment. cuda: torch counters; cpu: this process's RSS."""

    device: str  # "cpu" or "cuda:0"
    allocated_bytes: int | None = None  # torch.cuda.memory_allocated
    reserved_bytes: int | None = None  # torch.cuda.memory_reserved
    rss_bytes: int | None = None  # psutil: resident memory of this process
    # NVML: this process's memory on that GPU, as nvidia-smi lists it (None where NVML does not
    # list this process, in a container whose PIDs are not the host's, or was not asked)
    process_bytes: int | None = None
    # After an action, the most it held during it: cuda, torch.cuda.max_memory_allocated (its
    # peak reset before the action); cpu, the RSS high-water mark (reset before). None: unknown.
    peak_bytes: int | None = None


@dataclass(frozen=True)
class Outcome:
    """What one action did: its value and where it lives, or the error, plus timing and memory."""

    action: Action
    code: str  # the Python the action equals, e.g. "x = x.cuda(0)"
    ok: bool
    started_at: float  # time.time() when the action began (for a marker on the graphs)
    duration_s: float  # the torch work only (CUDA synchronised), not the bookkeeping
    kind: str = "none"  # "tensor", "model", "value" (a query's answer), or "none"
    result_name: str | None = None  # the workspace name written, if any
    preview: str = ""  # repr, shortened for long tensors
    shape: tuple[int, ...] | None = None
    dtype: str | None = None  # "float32"
    device: str | None = None  # "cpu", "cuda:0", "meta"; "mixed" for a split model
    grad_fn: str | None = None  # "AddmmBackward0"
    copied: bool | None = None  # moves: False when the result is the source (z.cuda(1) is z)
    details: tuple[tuple[str, str], ...] = ()  # labelled facts: device properties, parameters
    operands: tuple[OperandInfo, ...] = ()  # inputs and where each was
    devices: tuple[str, ...] = ()  # devices touched, e.g. ("cuda:0", "cpu")
    memory_before: tuple[MemoryReading, ...] = ()
    memory_after: tuple[MemoryReading, ...] = ()
    error: ErrorInfo | None = None
    output: str = ""  # what typed code printed, bounded (playground/kernel/printed.py)
    contexts_created: tuple[str, ...] = ()  # "cuda:0" when this action made its CUDA context

    def reading(self, device: str, after: bool = True) -> MemoryReading | None:
        """The memory reading for ``device`` after (or before) the action, if taken."""
        for r in self.memory_after if after else self.memory_before:
            if r.device == device:
                return r
        return None


@dataclass(frozen=True)
class WorkspaceEntry:
    """One named value for the workspace table."""

    name: str
    kind: str  # "tensor" or "model"
    shape: tuple[int, ...] | None  # None for a model
    dtype: str | None
    device: str  # "mixed" for a model split across devices
    size_bytes: int  # memory held (0 on meta); a model: its parameters and buffers
    parameters: int | None = None  # a model's parameter count


#: Rows of the workspace the kernel sends (the first, in the table's order); the rest are
#: counted. A loop can make 200,000 names: all of them as rows cost the window 7.9 s a run.
WORKSPACE_ROWS = 2000


@dataclass(frozen=True)
class WorkspacePage:
    """The workspace as the table shows it: its first ``WORKSPACE_ROWS`` entries, how many
    there are in all, and the bytes of all its tensors on the cpu. Iterating, ``len`` and
    indexing give the entries shown, as the list it replaced did."""

    entries: tuple[WorkspaceEntry, ...] = ()
    total: int = 0  # tensors and models in the workspace, shown or not
    cpu_tensor_bytes: int = 0  # every tensor on the cpu, shown or not (the CPU view's line)

    def __iter__(self) -> Iterator[WorkspaceEntry]:
        return iter(self.entries)

    def __len__(self) -> int:
        return len(self.entries)

    def __getitem__(self, index: int) -> WorkspaceEntry:
        return self.entries[index]

    @property
    def more(self) -> int:
        """Entries not sent (the table says "… and N more names")."""
        return max(0, self.total - len(self.entries))


@dataclass(frozen=True)
class LoadStatus:
    """Whether torch could be imported, and which build it is."""

    ok: bool
    message: str
    torch_version: str | None = None
    cuda_version: str | None = None  # None on a CPU-only build
    duration_s: float = 0.0
    torch_threads: int | None = None  # torch's CPU threads after loading
    cores: int | None = None  # CPUs this process may use
    threads_note: str = ""  # "1 of 2 cores for torch, so the window stays responsive"
    # torch is not installed (not broken): ``message`` then names the extra that brings it
    torch_missing: bool = False

    def status_text(self) -> str:
        """The status line: ``PyTorch 2.13.0+cpu · CPU-only build · 1 of 2 cores for torch…``."""
        return f"{self.message} · {self.threads_note}" if self.threads_note else self.message
