"""The playground kernel, step by step, with the four memory lines read after every step.

The lines are the ones the window draws: NVML device used and NVML used by the kernel's PID
(through gpumon's NvmlSource, in this process), torch reserved and torch allocated (the
kernel's own ``torch_memory_counters``, which feed the window's lines). This process never
imports torch, so the only CUDA contexts on the GPUs are the kernel's.
"""

from __future__ import annotations

import ast
import queue
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from gpumon.playground.client.kernel_client import KernelClient
from gpumon.playground.data.actions import RunCode
from gpumon.playground.data.devices import DeviceOption
from gpumon.playground.data.outcome import LoadStatus, Outcome
from gpumon.playground.data.wire import Message
from gpumon.telemetry.model.types import Snapshot

#: The kernel's allocator counters, as the window's memory lines get them.
COUNTERS_CODE = ("__import__('gpumon.playground.kernel.memory', fromlist=['_'])"
                 ".torch_memory_counters()")
REPLY_TIMEOUT_S = 120.0


@dataclass(frozen=True)
class Step:
    """One step of the walk: its name, the code typed into the kernel, what must happen."""

    name: str
    code: str
    expect: str = "ok"  # "ok", or "oom": torch's own out-of-memory error


def steps_for(device: str, oom_bytes: int | None) -> list[Step]:
    """The walk on ``device`` ('cuda:1', or 'cpu' for a dry run); no OOM step without a size."""
    index = device.partition(":")[2]
    to_device = ".cuda()" if device == "cuda:0" else (f".cuda({index})" if index else "")
    steps = [
        Step("create", "x = torch.ones(1024, 1024)"),
        Step("move", f"x = x.to('{device}')"),
        Step("compute", "y = x @ x"),
        Step("model", f"net = nn.Linear(3, 1){to_device}"),
        Step("forward", f"out = net(torch.rand(2, 3, device='{device}'))"),
        Step("del", "del x, y"),
        Step("empty_cache", "torch.cuda.empty_cache()"),
    ]
    if oom_bytes is not None:
        steps.append(Step("oom", f"big = torch.empty({oom_bytes}, dtype=torch.uint8, "
                                 f"device='{device}')", expect="oom"))
    steps.append(Step("after", f"z = torch.ones(2, device='{device}').sum()"))
    return steps


class KernelSession:
    """A KernelClient with a blocking ``call``: send one request, wait for its reply."""

    def __init__(self, deadline: float | None = None) -> None:
        self._inbox: queue.Queue[Message] = queue.Queue()
        self.client = KernelClient(self._inbox.put)
        self.deaths: list[Message] = []
        self.deadline = deadline  # time.monotonic() by which every answer must have come

    def call(self, kind: str, payload: Any = None, timeout: float = REPLY_TIMEOUT_S) -> Any:
        rid = self.client.request(kind, payload)
        deadline = time.monotonic() + timeout
        if self.deadline is not None:
            deadline = min(deadline, self.deadline)
            timeout = max(0.0, deadline - time.monotonic())
        while (left := deadline - time.monotonic()) > 0:
            try:
                message = self._inbox.get(timeout=left)
            except queue.Empty:
                break
            if message.kind in ("died", "restarted"):
                self.deaths.append(message)
                raise RuntimeError(f"the kernel ended: {message.data.sentence()}")
            if message.id == rid and message.kind == "internal_error":
                raise RuntimeError(f"the kernel reported an internal error:\n{message.data}")
            if message.id == rid and message.kind == "reply":
                return message.data
        raise TimeoutError(f"no reply to {kind!r} within {timeout:.0f} s")

    def load(self) -> LoadStatus:
        status = self.call("load")
        assert isinstance(status, LoadStatus)
        return status

    def devices(self) -> list[DeviceOption]:
        return list(self.call("devices"))

    def run(self, code: str) -> Outcome:
        out = self.call("run", RunCode(code))
        assert isinstance(out, Outcome)
        return out

    def counters(self) -> dict[int, tuple[int, int]]:
        out = self.run(COUNTERS_CODE)
        if not out.ok or out.error is not None:
            raise RuntimeError(f"reading the counters failed: {out.error}")
        value = ast.literal_eval(out.preview)
        return {int(k): (int(v[0]), int(v[1])) for k, v in value.items()}

    @property
    def pid(self) -> int | None:
        return self.client.pid

    def close(self) -> None:
        self.client.shutdown(timeout_s=5.0)


COLUMNS = ("step", "code", "ok", "error", "nvml_device_used_bytes", "nvml_kernel_used_bytes",
           "torch_reserved_bytes", "torch_allocated_bytes", "kernel_on_nvml_gpus")


def memory_row(step: Step, out: Outcome, snap: Snapshot | None, pid: int,
               nvml_index: int | None, cuda_index: int | None,
               counters: dict[int, tuple[int, int]]) -> dict[str, object]:
    """One CSV row: the step, its outcome and the four lines on the GPU it works on."""
    sample = snap.sample_for(nvml_index) if snap is not None and nvml_index is not None \
        else None
    mine = {p.gpu_index: p.gpu_mem_bytes for p in (snap.processes if snap else ())
            if p.pid == pid}
    allocated, reserved = counters.get(cuda_index, (None, None)) if cuda_index is not None \
        else (None, None)
    return {
        "step": step.name, "code": step.code, "ok": out.ok,
        "error": "" if out.error is None else f"{out.error.type_name}: {out.error.message}",
        "nvml_device_used_bytes": sample.mem_used_bytes if sample is not None else None,
        "nvml_kernel_used_bytes": mine.get(nvml_index) if nvml_index is not None else None,
        "torch_reserved_bytes": reserved, "torch_allocated_bytes": allocated,
        "kernel_on_nvml_gpus": " ".join(str(i) for i in sorted(mine)),
    }


def walk(session: KernelSession, steps: Sequence[Step], read_nvml: Callable[[], Snapshot | None],
         nvml_index: int | None, cuda_index: int | None,
         rows: list[dict[str, object]]) -> None:
    """Run every step in the kernel and read the four lines after it, into ``rows`` (which
    keeps the steps done when one breaks)."""
    pid = session.pid
    assert pid is not None, "the kernel is not running"
    for step in steps:
        out = session.run(step.code)
        counters = session.counters()
        rows.append(memory_row(step, out, read_nvml(), pid, nvml_index, cuda_index, counters)
                    | {"_outcome": out, "_expect": step.expect})


def outcome_problems(rows: Sequence[dict[str, object]]) -> list[str]:
    """Steps that did not do what they must: fail where they must work, or an OOM that is
    not torch's own out-of-memory error."""
    problems = []
    for row in rows:
        out = row["_outcome"]
        assert isinstance(out, Outcome)
        if row["_expect"] == "oom":
            err = out.error
            if out.ok or err is None:
                problems.append(f"{row['step']}: no error where torch must run out of memory")
            elif not err.by_torch or "out of memory" not in err.message.lower():
                who = "torch" if err.by_torch else "gpumon (before torch ran)"
                problems.append(f"{row['step']}: {who} answered {err.type_name}: "
                                f"{err.message[:200]}, not torch's out-of-memory error")
        elif not out.ok:
            problems.append(f"{row['step']}: {row['error']}")
    return problems


def order_problems(rows: Sequence[dict[str, object]]) -> list[str]:
    """allocated <= reserved <= NVML used by the kernel <= NVML device used, at every step
    where torch holds memory on the GPU."""
    problems = []
    for row in rows:
        chain = [(name, row[name]) for name in ("torch_allocated_bytes", "torch_reserved_bytes",
                                                 "nvml_kernel_used_bytes",
                                                 "nvml_device_used_bytes")]
        if not row["torch_reserved_bytes"]:
            continue  # torch holds no GPU memory yet: it may have no context to list
        missing = [name for name, value in chain if value is None]
        if missing:
            problems.append(f"{row['step']}: no {', '.join(missing)}")
            continue
        for (low_name, low), (high_name, high) in zip(chain, chain[1:], strict=False):
            if int(low) > int(high):  # type: ignore[call-overload]
                problems.append(f"{row['step']}: {low_name} {low} > {high_name} {high}")
    return problems


def presence_problems(rows: Sequence[dict[str, object]], expected: int | None) -> list[str]:
    """The kernel holds a context on NVML GPU ``expected`` once its tensors are there (after
    'move'), and on no other GPU at any step; before 'move' on none."""
    problems = []
    started = False
    for row in rows:
        started = started or row["step"] == "move"
        on = {int(i) for i in str(row["kernel_on_nvml_gpus"]).split()}
        want = {expected} if started and expected is not None else set()
        if on != want:
            problems.append(f"{row['step']}: the kernel is on NVML GPUs {sorted(on)}, "
                            f"expected {sorted(want)}")
    return problems


def cache_problems(rows: Sequence[dict[str, object]]) -> list[str]:
    """``del`` keeps torch's reservation (the cache); ``empty_cache`` gives memory back."""
    names = [str(r["step"]) for r in rows]
    if "del" not in names[1:] or "empty_cache" not in names:
        return ["the walk has no del (after another step) and no empty_cache step"]
    before_del = rows[names.index("del") - 1]
    held = before_del["torch_reserved_bytes"]
    kept, freed = (rows[names.index(s)]["torch_reserved_bytes"] for s in ("del", "empty_cache"))
    if None in (kept, held, freed):
        return []
    problems = []
    if kept != held:
        problems.append(f"del changed reserved from {held} to {kept}; torch keeps it cached")
    if int(freed) >= int(kept):  # type: ignore[call-overload]
        problems.append(f"empty_cache left reserved at {freed} (was {kept})")
    return problems
