"""The playground kernel on a real GPU: the whole lesson on cuda:0, a real CUDA OOM, del +
empty_cache, and NVML's process list showing the kernel only on the GPUs it used.

Skipped, with the reason, where there is no CUDA GPU or no CUDA build of torch (the kernel
is a child process; these tests ask torch in this process only whether CUDA exists)."""

from __future__ import annotations

import sys

import pytest
import torch

from gpumon.playground.client.kernel_client import KernelClient
from gpumon.playground.data.actions import RunCode
from gpumon.playground.data.outcome import Outcome
from gpumon.playground.lesson.results import StepResult
from gpumon.playground.lesson.steps import LESSON, is_comment
from tests.playground.kernel_helpers import Inbox, client, inbox

__all__ = ["client", "inbox"]  # the shared kernel-client fixtures

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU and CUDA torch"),
]  # the kernels start the ordinary way (conftest.py), but in the fork server's own test


def _code(client: KernelClient, inbox: Inbox, source: str) -> Outcome:
    reply = inbox.wait("reply", client.request("run", RunCode(source)), timeout=120)
    assert isinstance(reply.data, Outcome)
    return reply.data


def test_the_whole_lesson_runs_on_cuda0_in_the_kernel(client: KernelClient,
                                                      inbox: Inbox) -> None:
    """Every step in order on the GPU: only torch's own errors, outcomes sent as they ran,
    and what each step prints matches the transcript a CPU-only machine shows for it."""
    two = torch.cuda.device_count() >= 2
    for number in range(1, len(LESSON) + 1):
        rid = client.request("lesson", (tuple(LESSON), number, None))
        result = inbox.wait("reply", rid, timeout=300).data
        step = LESSON[number - 1]
        assert isinstance(result, StepResult)
        if torch.cuda.device_count() < step.min_gpus:  # exercise 4 on one GPU: both on cuda:0
            assert result.ran and result.actions == step.one_gpu_variant, result.note
            assert [o.ok for o in result.outcomes] == [True], result.outcomes
            assert result.shows_gpu  # then what two GPUs print, headed as such
            continue
        assert result.ran, (number, result.note)
        # only a two-GPU step shows what it prints elsewhere (on two GPUs); no meta on a GPU
        assert result.shows_gpu == (step.needs_two_gpus and not two), number
        assert result.meta_outcomes == ()
        unexpected = [o for o in result.outcomes if not o.ok and o.error is not None
                      and not o.error.by_torch]
        assert unexpected == [], [o.error for o in unexpected]
        sent = []
        while any(m.kind == "outcome" and m.id == rid for m in inbox.seen):
            sent.append(inbox.wait("outcome", rid, timeout=1).data)
        assert [o.code for o in sent] == [o.code for o in result.outcomes]
        if step.needs_two_gpus and not two:  # one GPU: torch's own error for cuda:1
            failed = [o for o in result.outcomes if o.error is not None]
            assert failed and "invalid device ordinal" in failed[0].error.message
            continue
        if step.kind == "smi":
            continue
        assert len(result.outcomes) == len(step.actions), (number, result.note)
        for out, expected in zip(result.outcomes, step.on_gpu, strict=False):
            if is_comment(expected):  # a description of a value that varies
                continue
            shown = out.preview if out.error is None else out.error.headline()
            assert shown == expected, (number, out.code)


def test_the_lesson_device_is_cuda0(client: KernelClient, inbox: Inbox) -> None:
    number = next(i for i, s in enumerate(LESSON, start=1) if s.id == "choose-device")
    result = inbox.wait("reply", client.request("lesson", (tuple(LESSON), number, None)),
                        timeout=120).data
    assert result.outcomes[-1].preview == "device(type='cuda', index=0)"


def test_the_checkpoint_saved_on_cuda_loads_onto_cuda0(client: KernelClient,
                                                       inbox: Inbox) -> None:
    out = _code(client, inbox,
                "from gpumon.playground.lesson.checkpoint_path import SAVED_ON_CUDA\n"
                "torch.load(SAVED_ON_CUDA)['weight'].device")
    assert out.ok and out.preview == "device(type='cuda', index=0)"


def test_a_real_cuda_oom_is_torch_s_error_and_the_kernel_lives(client: KernelClient,
                                                               inbox: Inbox) -> None:
    free, _total = torch.cuda.mem_get_info(0)
    out = _code(client, inbox, f"big = torch.empty({free * 2}, dtype=torch.uint8, "
                               "device='cuda:0')")
    assert not out.ok and out.error is not None and out.error.by_torch
    assert "out of memory" in out.error.message.lower()
    assert _code(client, inbox, "torch.ones(2, device='cuda:0').sum()").ok


def test_del_and_empty_cache_change_reserved_memory(client: KernelClient, inbox: Inbox) -> None:
    _code(client, inbox, "x = torch.empty(256 * 2**20, dtype=torch.uint8, device='cuda:0')")
    held = _code(client, inbox, "torch.cuda.memory_reserved(0)")
    _code(client, inbox, "del x")
    kept = _code(client, inbox, "torch.cuda.memory_reserved(0)")
    _code(client, inbox, "torch.cuda.empty_cache()")
    freed = _code(client, inbox, "torch.cuda.memory_reserved(0)")
    assert int(held.preview) >= 256 * 2**20
    assert int(kept.preview) == int(held.preview)  # del returns memory to torch's cache
    assert int(freed.preview) < int(kept.preview)  # empty_cache gives it back to the driver


def _gpus_holding(pid: int) -> list[str]:
    """UUIDs of the GPUs whose NVML compute-process list holds ``pid`` (as any PID namespace
    names it: in a container NVML gives the host's PID)."""
    import pynvml

    from gpumon.telemetry.procs.procinfo import nspids

    try:
        with open(f"/proc/{pid}/status", encoding="utf-8") as f:
            pids = nspids(f.read()) | {pid}
    except OSError:
        pids = {pid}
    pynvml.nvmlInit()
    try:
        holding = []
        for i in range(pynvml.nvmlDeviceGetCount()):
            handle = pynvml.nvmlDeviceGetHandleByIndex(i)
            procs = pynvml.nvmlDeviceGetComputeRunningProcesses(handle)
            if any(p.pid in pids for p in procs):
                uuid = pynvml.nvmlDeviceGetUUID(handle)
                holding.append(uuid.decode() if isinstance(uuid, bytes) else str(uuid))
        return holding
    finally:
        pynvml.nvmlShutdown()


def _contexts(client: KernelClient, inbox: Inbox) -> str:
    """The kernel's own answer: which cuda devices hold its primary context (a query that
    creates none: cuda_calls.py)."""
    return _code(client, inbox, "[bool(torch._C._cuda_hasPrimaryContext(i)) "
                                "for i in range(torch.cuda.device_count())]").preview


def test_nvml_lists_the_kernel_only_on_the_gpus_it_used(client: KernelClient,
                                                        inbox: Inbox) -> None:
    used = torch.cuda.device_count() - 1  # the last GPU: on a 2-GPU machine, cuda:1 only
    assert _code(client, inbox, f"x = torch.ones(1024, device='cuda:{used}')").ok
    uuid = _code(client, inbox, f"str(torch.cuda.get_device_properties({used}).uuid)").preview
    holding = _gpus_holding(client.pid or -1)
    assert len(holding) == 1, holding  # a context on the used GPU, none elsewhere
    assert holding[0].removeprefix("GPU-") in uuid


@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs two CUDA GPUs")
def test_working_only_on_cuda1_puts_the_kernel_on_gpu1_alone(client: KernelClient,
                                                            inbox: Inbox) -> None:
    """Every kind of action on cuda:1, plus queries of cuda:0's name and properties and an
    empty_cache: NVML lists the kernel on cuda:1's GPU only."""
    from gpumon.playground.data import actions as act

    rid = client.request("devices")
    names = [d.name for d in inbox.wait("reply", rid, timeout=120).data]
    assert names[:3] == ["cpu", "cuda:0", "cuda:1"]
    steps: list[act.Action] = [
        act.DeviceName(0), act.DeviceProperties(0), act.DeviceName(1),
        act.CreateFilled("x", "ones", (512, 512), device="cuda:1"),
        act.Compute("y", "matmul", "x", "x"), act.Compute("p", "pow", "x"),
        act.Move("x", "cuda", index=1, dest="x2"), act.CreateModel("net", 512, 4),
        act.Move("net", "to", device="cuda:1"), act.CallModel("out", "net", "x"),
        act.Move("y", "cpu", dest="h"), act.Delete("p"), act.EmptyCache(),
        RunCode("z = x * 2\nz.sum()"),
    ]
    for step in steps:
        out = inbox.wait("reply", client.request("run", step), timeout=120).data
        assert out.ok, (step, out.error)
    assert _contexts(client, inbox) == "[False, True]"
    uuid = _code(client, inbox, "str(torch.cuda.get_device_properties(1).uuid)").preview
    holding = _gpus_holding(client.pid or -1)
    assert len(holding) == 1 and holding[0].removeprefix("GPU-") in uuid, holding


def test_a_kernel_that_only_lists_devices_holds_no_context(client: KernelClient,
                                                          inbox: Inbox) -> None:
    """The window's start-up: load torch, list the devices (names, sizes, UUIDs); no GPU gets
    a context until the user puts something on it."""
    inbox.wait("reply", client.request("load"), timeout=120)
    devices = inbox.wait("reply", client.request("devices"), timeout=120).data
    assert sum(d.name.startswith("cuda:") for d in devices) == torch.cuda.device_count()
    assert all(d.uuid for d in devices if d.name.startswith("cuda:"))
    assert _contexts(client, inbox) == repr([False] * torch.cuda.device_count())
    assert _gpus_holding(client.pid or -1) == []


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the fork server is Linux only")
def test_a_kernel_forked_from_the_fork_server_runs_on_cuda0(monkeypatch: pytest.MonkeyPatch
                                                            ) -> None:
    """The server imports torch without touching CUDA, so its forks can use it."""
    from gpumon.playground.client import forkserver
    from gpumon.playground.client.forkserver import ForkedKernel
    from gpumon.playground.client.kernel_client import kernel_env

    monkeypatch.setenv(forkserver.ENABLE_ENV, "1")
    server = forkserver.start_server(sys.executable, kernel_env())
    assert server.wait_ready(120), "the fork server never said it was ready"
    inbox = Inbox()
    client = KernelClient(inbox)
    try:
        out = _code(client, inbox, "x = torch.ones(2, device='cuda:0'); x.sum().item()")
        assert isinstance(client.process, ForkedKernel)
        assert out.ok and out.preview == "2.0", out.error
    finally:
        client.shutdown(timeout_s=5.0)


def test_a_64_mib_tensor_s_card_shows_its_change_peak_and_nvml_on_cuda0(
        client: KernelClient, inbox: Inbox) -> None:
    """Issue 51 on a GPU: the card of a 64 MiB tensor on cuda:0 gives allocated and reserved
    +64 MiB, the peak allocated, and NVML's figure for the kernel's process; a temporary's
    peak shows what it held while allocated ends where it began."""
    from gpumon.playground.data.memory_change import device_change

    _code(client, inbox, "warm = torch.ones(8, device='cuda:0') @ torch.ones(8, device='cuda:0')")
    made = _code(client, inbox, "big = torch.ones(4096, 4096, device='cuda:0')")
    before, after = made.reading("cuda:0", after=False), made.reading("cuda:0")
    assert before is not None and after is not None and after.peak_bytes is not None
    assert after.allocated_bytes - before.allocated_bytes == 64 * 2**20  # type: ignore[operator]
    assert after.peak_bytes >= after.allocated_bytes  # type: ignore[operator]
    assert device_change(made, "cuda:0").startswith("cuda:0: allocated +64.00 MiB, reserved ")
    if after.process_bytes is not None:  # NVML lists the kernel (not in a container)
        assert "(NVML)" in device_change(made, "cuda:0")
    temporary = _code(client, inbox, "torch.ones(4096, 4096, device='cuda:0').sum()")
    before, after = temporary.reading("cuda:0", after=False), temporary.reading("cuda:0")
    assert before is not None and after is not None and after.peak_bytes is not None
    assert after.peak_bytes - before.allocated_bytes >= 64 * 2**20  # type: ignore[operator]
    assert abs(after.allocated_bytes - before.allocated_bytes) < 2**20  # type: ignore[operator]
