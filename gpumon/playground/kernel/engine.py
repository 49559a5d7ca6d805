"""The playground engine: runs actions on a workspace of named tensors and models.

``Engine.run(action)`` never raises: torch's errors and the engine's refusals both come back
as an :class:`Outcome`. torch is imported on the first action (or ``ensure_loaded()``), never
at module import, so the window opens without paying for ``import torch``. One Engine is
meant to be driven from one worker thread.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from gpumon import extras
from gpumon.i18n import tr
from gpumon.playground.data import actions as act
from gpumon.playground.data.actions import RunCode
from gpumon.playground.data.devices import DeviceOption, cpu_option
from gpumon.playground.data.errors import ErrorInfo, report_internal
from gpumon.playground.data.outcome import (
    WORKSPACE_ROWS,
    LoadStatus,
    Outcome,
    WorkspaceEntry,
    WorkspacePage,
)
from gpumon.playground.kernel import ops
from gpumon.playground.kernel.action_run import ActionRun
from gpumon.playground.kernel.blame import internal_error, is_gpumon_bug
from gpumon.playground.kernel.codeline import exit_refused, repr_error, run_code, syntax_error
from gpumon.playground.kernel.describe import (
    ReprFailed,
    dtype_name,
    model_bytes,
    model_devices,
    model_dtype,
    tensor_bytes,
    tensor_preview,
    value_preview,
)
from gpumon.playground.kernel.explain import error_from_exception
from gpumon.playground.kernel.memory import (
    cuda_contexts,
    read_memory,
    torch_memory_counters,
    with_process_memory,
)
from gpumon.playground.kernel.threads import limit_torch_threads
from gpumon.playground.kernel.torch_devices import list_devices

if TYPE_CHECKING:
    import torch


class Engine:
    """Owns the workspace of named values and runs actions on it."""

    def __init__(self) -> None:
        self._values: dict[str, Any] = {}
        self._torch: Any = None
        self._load_status: LoadStatus | None = None

    # --- loading ---------------------------------------------------------------------------

    @property
    def is_loaded(self) -> bool:
        """True once ``import torch`` has succeeded in this engine."""
        return self._torch is not None

    def ensure_loaded(self) -> LoadStatus:
        """Import torch if not done yet (slow: seconds); never raises."""
        if self._load_status is not None:
            return self._load_status
        start = time.perf_counter()
        try:
            import torch
            import torch.nn  # models need it; import it with torch
        except Exception as exc:  # an import can fail many ways
            missing = extras.torch_missing(exc)
            message = (extras.playground_needs_torch() if missing else
                       tr("PyTorch could not be imported: {error}",
                          error=f"{type(exc).__name__}: {exc}"))
            return LoadStatus(False, message, duration_s=time.perf_counter() - start,
                              torch_missing=missing)
        self._torch = torch
        try:  # leave the window a core (see threads.py); a failure only loses the note
            plan = limit_torch_threads(torch)
            threads, cores, note = plan.torch_threads, plan.cores, plan.text()
        except Exception:
            threads, cores, note = None, None, ""
        cuda = torch.version.cuda
        build = f"CUDA {cuda}" if cuda else tr("CPU-only build")
        # str(): torch.__version__ is torch's own str subclass, which would drag torch into
        # the window when this status crosses the kernel's pipe.
        version, cuda = str(torch.__version__), None if cuda is None else str(cuda)
        self._load_status = LoadStatus(True, f"PyTorch {version} · {build}",
                                       version, cuda, time.perf_counter() - start,
                                       threads, cores, note)
        return self._load_status

    def devices(self) -> list[DeviceOption]:
        """Devices to offer (imports torch); cpu only if torch cannot be imported."""
        if not self.ensure_loaded().ok:
            return [cpu_option()]
        return list_devices()

    # --- running ---------------------------------------------------------------------------

    def run(self, action: act.Action) -> Outcome:
        """Run one action; every failure becomes an Outcome with ``ok=False``."""
        started_at = time.time()
        try:
            code = action.code()
        except Exception:  # a malformed action still gets an outcome
            code = repr(action)
        run = ActionRun()
        error: ErrorInfo | None = None
        contexts = cuda_contexts()
        status = self.ensure_loaded()
        if not status.ok:
            error = ErrorInfo("ImportError", status.message,
                              tr("PyTorch is not installed or failed to load in this "
                                 "environment."))
            return Outcome(action, code, False, started_at, 0.0, error=error)
        try:
            if isinstance(action, RunCode):
                run_code(self._values, action, self._torch, run)
            else:
                handler = ops.HANDLERS.get(type(action))
                if handler is None:
                    raise ops.Refusal(tr("The playground does not know the action {action}.",
                                         action=repr(action)))
                handler(self._values, action, run)
        except SyntaxError as exc:  # the code line's typing mistake (before anything ran)
            error = syntax_error(exc)
        except SystemExit as exc:  # exit() typed in the code line: a card, never the kernel's end
            error = exit_refused(exc)
        except Exception as exc:  # errors are content
            ours = not run.in_torch and not isinstance(action, RunCode) and is_gpumon_bug(exc)
            error = internal_error(exc) if ours else error_from_exception(exc)
        created = tuple(f"cuda:{i}" for i in sorted(cuda_contexts() - contexts))
        run.touch(*created)  # the context is memory on that GPU: its marker goes there
        try:
            try:
                return self._outcome(action, code, started_at, run, error, created)
            except ReprFailed as failed:  # the result's own __repr__: the user's error
                return self._outcome(action, code, started_at, run, repr_error(failed),
                                     created)
        except Exception as exc:  # a bug here must not crash the worker
            report_internal(traceback.format_exc())
            internal = ErrorInfo("InternalError", f"{type(exc).__name__}: {exc}",
                                 tr("gpumon failed to describe this result; please report "
                                    "it."),
                                 by_torch=False)
            return Outcome(action, code, False, started_at, run.duration_s,
                           error=error or internal)

    def _outcome(self, action: act.Action, code: str, started_at: float, run: ActionRun,
                 error: ErrorInfo | None, created: tuple[str, ...] = ()) -> Outcome:
        # the change and the peak of each device the action touched (action_run.begin)
        after = with_process_memory(read_memory(run.devices, peaks=True,
                                                rss_peak=run.rss_peak)) if run.executed else ()
        base: dict[str, Any] = dict(
            action=action, code=code, started_at=started_at, duration_s=run.duration_s,
            operands=tuple(run.operands), devices=tuple(run.devices),
            memory_before=run.memory_before, memory_after=after, output=run.output,
            contexts_created=created,
        )
        if error is not None:
            return Outcome(ok=False, error=error, **base)
        torch = self._torch
        value = run.value
        desc: dict[str, Any] = dict(kind=run.kind, result_name=run.result_name,
                                    copied=run.copied, details=run.details)
        if isinstance(value, torch.Tensor):
            grad = value.grad_fn
            desc.update(kind="tensor", preview=tensor_preview(value), shape=tuple(value.shape),
                        dtype=dtype_name(value.dtype), device=str(value.device),
                        grad_fn=None if grad is None else grad.name())
        elif isinstance(value, torch.nn.Module):
            desc.update(kind="model", preview=value_preview(value), device=model_devices(value),
                        dtype=model_dtype(value))
        elif run.kind == "value":
            desc.update(preview=value_preview(value),
                        device=str(value) if isinstance(value, torch.device) else None)
        return Outcome(ok=True, **base, **desc)

    # --- workspace -------------------------------------------------------------------------

    def workspace(self, rows: int = WORKSPACE_ROWS) -> WorkspacePage:
        """The named tensors and models, in creation order, for the workspace table: the
        first ``rows`` described, all of them counted (a loop can make 200,000)."""
        if self._torch is None:
            return WorkspacePage()
        torch = self._torch
        entries: list[WorkspaceEntry] = []
        total = cpu_bytes = 0
        for name, value in self._values.items():
            if isinstance(value, torch.Tensor):
                total += 1
                if value.device.type == "cpu":
                    cpu_bytes += tensor_bytes(value)
                if len(entries) < rows:
                    entries.append(WorkspaceEntry(name, "tensor", tuple(value.shape),
                                                  dtype_name(value.dtype), str(value.device),
                                                  tensor_bytes(value)))
            elif isinstance(value, torch.nn.Module):
                total += 1
                if len(entries) < rows:
                    count = sum(p.numel() for p in value.parameters())
                    entries.append(WorkspaceEntry(name, "model", None, model_dtype(value),
                                                  model_devices(value), model_bytes(value),
                                                  count))
        return WorkspacePage(tuple(entries), total, cpu_bytes)

    def names(self) -> list[str]:
        """Names in the workspace, in creation order."""
        return list(self._values)

    def forget(self, names: Iterable[str]) -> None:
        """Forget these names (those absent are skipped)."""
        for name in list(names):
            self._values.pop(name, None)

    def put(self, name: str, value: Any) -> None:
        """Name ``value`` (the lesson keeps a Playground value it would overwrite)."""
        self._values[name] = value

    def value(self, name: str) -> Any:
        """Whatever the name holds (a tensor, a model, a device, a number); None if absent."""
        return self._values.get(name)

    def clear(self) -> None:
        """Forget every named value (their memory goes back to torch's cache)."""
        self._values.clear()

    def get(self, name: str) -> torch.Tensor | torch.nn.Module | None:
        """The live value of a name, for tests and the lesson's checks; None if absent."""
        value: torch.Tensor | torch.nn.Module | None = self._values.get(name)
        return value


__all__ = ["Engine", "Outcome", "WorkspaceEntry", "WorkspacePage", "LoadStatus",
           "torch_memory_counters"]
