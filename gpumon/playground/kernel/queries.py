"""The handlers that only ask torch (is_available, device_count, a GPU's properties, the
versions, a tensor's device, d2l's try_gpu): none creates a CUDA context (cuda_calls.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gpumon.i18n import tr
from gpumon.playground.data import actions as act
from gpumon.playground.data.errors import Refusal
from gpumon.playground.kernel.describe import operand_info
from gpumon.playground.kernel.workspace_names import lookup_tensor

if TYPE_CHECKING:
    from gpumon.playground.kernel.action_run import ActionRun

Values = dict[str, Any]


def _torch() -> Any:
    import torch

    return torch


def query(values: Values, action: act.Action, run: ActionRun) -> None:
    # The user's own questions: is_available, device_count, current_device and
    # get_device_name / get_device_properties create no CUDA context (cuda_calls.py).
    torch = _torch()
    run.kind = "value"
    if isinstance(action, act.IsAvailable):
        run.execute(torch.cuda.is_available)
    elif isinstance(action, act.DeviceCount):
        run.execute(torch.cuda.device_count)
    elif isinstance(action, act.CurrentDevice):
        run.execute(torch.cuda.current_device)
    elif isinstance(action, act.DeviceName):
        # touch, not hold: the marker goes on that GPU's graph, but a query holds no tensor
        # there, so it is not synchronised (that would create a context: cuda_calls.py).
        if torch.cuda.is_available():
            run.touch(f"cuda:{action.index}")
        run.execute(lambda: torch.cuda.get_device_name(action.index))
    elif isinstance(action, act.DeviceProperties):
        if torch.cuda.is_available():
            run.touch(f"cuda:{action.index}")
        p = run.execute(lambda: torch.cuda.get_device_properties(action.index))
        run.details = (
            (tr("name"), str(p.name)),
            (tr("total memory"), tr("{count} bytes", count=f"{p.total_memory:,}")),
            (tr("compute capability"), f"{p.major}.{p.minor}"),
            (tr("multiprocessors"), str(p.multi_processor_count)),
            ("uuid", str(getattr(p, "uuid", ""))),
        )
    elif isinstance(action, act.Versions):
        cudnn = torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None
        run.execute(lambda: (torch.__version__, torch.version.cuda))
        # str(): torch.__version__ is torch's own str subclass, which the window refuses
        run.details = (("torch", str(torch.__version__)),
                       (tr("CUDA build"), str(torch.version.cuda)), ("cuDNN", str(cudnn)))
    elif isinstance(action, act.TensorDevice):
        t = lookup_tensor(values, action.name)
        run.operands.append(operand_info(action.name, t))
        run.execute(lambda: t.device)


def try_gpus(values: Values, action: act.TryGpu | act.TryAllGpus, run: ActionRun) -> None:
    """d2l's try_gpu / try_all_gpus, run as the shown code does: by asking device_count
    (no CUDA context; cuda_calls.py). The result is a torch.device, which holds no memory."""
    torch = _torch()
    run.kind = "value"
    if isinstance(action, act.TryAllGpus):
        run.execute(lambda: [torch.device(f"cuda:{i}")
                             for i in range(torch.cuda.device_count())] or [torch.device("cpu")])
        return
    i = action.index
    if type(i) is not int:
        raise Refusal(tr("try_gpu takes a whole number, not {value}.", value=repr(i)))
    run.execute(lambda: torch.device(f"cuda:{i}") if torch.cuda.device_count() >= i + 1
                else torch.device("cpu"))
