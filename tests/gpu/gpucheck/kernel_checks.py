"""The playground kernel on cuda:0, on cuda:1 alone, and with CUDA_VISIBLE_DEVICES reordered:
the walk of kernel_walk.py, its memory CSV, and what NVML's process list says about it."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import ExitStack

from gpumon.device_ids import normalize_uuid
from gpumon.playground.data.devices import match_cuda_to_nvml
from gpumon.telemetry.model.types import Snapshot
from gpumon.telemetry.nvml.source import NvmlSource
from tests.gpu.gpucheck import kernel_walk as kw
from tests.gpu.gpucheck.context import Context, environ
from tests.gpu.gpucheck.results import FAIL, SKIP, Known, Result, verdict, write_table


class NvmlReader:
    """gpumon's NvmlSource in this process: one full reading per call (processes included)."""

    def __init__(self, ctx: Context) -> None:
        self._stack = ExitStack()
        self._stack.enter_context(ctx.open_nvml())
        self.source = NvmlSource()
        status = self.source.open()
        if not status.usable:
            self._stack.close()
            raise RuntimeError(f"NVML: {status.message}")
        self.uuids = [g.uuid for g in self.source.gpus()]

    def __call__(self) -> Snapshot:
        return self.source.sample(include_slow=True)

    def close(self) -> None:
        self.source.close()
        self._stack.close()


def _pid_hint(snap: Snapshot | None, pids: set[int]) -> str:
    """When NVML lists processes but none of ours: PIDs of another namespace (a container)."""
    if snap is None or not snap.processes or any(p.pid in pids for p in snap.processes):
        return ""
    listed = sorted({p.pid for p in snap.processes})[:5]
    return (f" NVML lists PIDs {listed} but not the kernel's: in a container NVML may give "
            "the host's PIDs.")


def run_walk(ctx: Context, name: str, stem: str, cuda_index: int | None,
             env: dict[str, str] | None = None) -> Result:
    """Start a kernel (with ``env`` added), walk ``cuda:<cuda_index>`` (cpu when None), save
    the four lines as ``stem.csv``/``.md``, and judge outcomes, order and NVML presence."""
    device = "cpu" if cuda_index is None else f"cuda:{cuda_index}"
    rows: list[dict[str, object]] = []
    broke = ""
    reader = NvmlReader(ctx)
    try:
        with environ({**ctx.child_env, **(env or {})}):
            session = kw.KernelSession(ctx.deadline)
            session.load()  # starts the kernel now, with this environment
        try:
            listed = session.devices()
            options = {o.name: o for o in listed}
            nvml_index: int | None = None
            oom_bytes: int | None = None
            if cuda_index is not None:
                option = options.get(device)
                if option is None:
                    return Result(name, FAIL, f"the kernel offers no {device}: "
                                  f"{sorted(options)}")
                cuda_uuids = [o.uuid or "" for o in listed if o.name.startswith("cuda:")]
                nvml_index = match_cuda_to_nvml(cuda_uuids, reader.uuids).get(cuda_index)
                oom_bytes = 2 * (option.total_memory_bytes or 2**40)
            pid = session.pid
            try:
                kw.walk(session, kw.steps_for(device, oom_bytes), reader, nvml_index,
                        cuda_index, rows)
            except (RuntimeError, TimeoutError) as exc:  # the kernel died or hung
                broke = f"after {len(rows)} steps: {exc}"
        finally:
            session.close()
        last = reader()
    finally:
        reader.close()
    files = write_table(ctx.out, stem, rows, kw.COLUMNS)
    problems = ([broke] if broke else []) + kw.outcome_problems(rows)
    if cuda_index is None:
        problems += kw.presence_problems(rows, None)
        outcome, reason = verdict(problems, "every step ran on cpu and the kernel held no GPU "
                                  "(dry run: the memory order and NVML checks need CUDA)")
        return Result(name, outcome, reason, files)
    if nvml_index is None:
        problems.append(f"{device} matched no NVML GPU by UUID")
    problems += kw.order_problems(rows) + kw.cache_problems(rows)
    problems += kw.presence_problems(rows, nvml_index)
    outcome, reason = verdict(problems, f"{device} is NVML GPU {nvml_index}; allocated <= "
                              "reserved <= NVML used by the kernel <= device used at every "
                              "step; the kernel is on that GPU alone")
    if outcome == FAIL:
        reason += _pid_hint(last, {pid} if pid is not None else set())
    return Result(name, outcome, reason, files)


def gpu_checks(ctx: Context, cuda_count: int, nvml_uuids: list[str]) -> list[
        tuple[str, Callable[[], Result]]]:
    """The kernel checks with their names, in order; a SKIP with the reason where this
    machine cannot run one."""
    def skip(name: str, why: str) -> tuple[str, Callable[[], Result]]:
        return name, Known(Result(name, SKIP, why))

    k0, k1, kr = "kernel on cuda:0", "kernel on cuda:1 only", "CUDA_VISIBLE_DEVICES reordered"
    if ctx.dry_run or cuda_count == 0:
        why = "dry run: no CUDA GPU" if ctx.dry_run else "torch sees no CUDA GPU"
        cpu = "kernel on cpu (dry run)"
        checks = [(cpu, lambda: run_walk(ctx, cpu, "kernel-memory-cpu", None))] \
            if ctx.dry_run else []
        return [*checks, skip(k0, why), skip(k1, why), skip(kr, why)]
    checks = [(k0, lambda: run_walk(ctx, k0, "kernel-memory-cuda0", 0))]
    if cuda_count < 2 or len(nvml_uuids) < 2:
        why = f"one GPU only ({cuda_count} CUDA device, {len(nvml_uuids)} NVML GPU)"
        return [*checks, skip(k1, why), skip(kr, why)]
    # NVML GPU 1 first: cuda:0 must then be NVML GPU 1, found by UUID, not by position.
    order = ",".join([nvml_uuids[1], nvml_uuids[0]])
    checks.append((k1, lambda: run_walk(ctx, k1, "kernel-memory-cuda1", 1)))
    checks.append((kr, lambda: _reordered(ctx, kr, order, nvml_uuids[1])))
    return checks


def _reordered(ctx: Context, name: str, order: str, want_uuid: str) -> Result:
    result = run_walk(ctx, name, "kernel-memory-reordered", 0, {"CUDA_VISIBLE_DEVICES": order})
    note = f"CUDA_VISIBLE_DEVICES={order}: cuda:0 must be NVML GPU 1 ({want_uuid})"
    if result.outcome != FAIL and normalize_uuid(want_uuid) is None:
        return Result(name, FAIL, f"{note}, but NVML's UUID is unreadable", result.files)
    if result.outcome != FAIL and "is NVML GPU 1;" not in result.reason:
        return Result(name, FAIL, f"{note}; {result.reason}", result.files)
    return Result(name, result.outcome, f"{note}. {result.reason}", result.files)
