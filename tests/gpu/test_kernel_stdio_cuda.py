"""``gpumon kernel --stdio`` (the kernel a window on another machine runs over ssh) on a real
GPU, driven directly: a GPU machine lent for the checks has no sshd, so a stand-in ``ssh``
runs the remote command here (as tests/playground/test_kernel_stdio.py does). One CUDA action
through it, then its memory lines: torch's allocated and reserved counters the kernel sends,
and the kernel's own memory on the GPU read through NVML beside nvidia-smi's
``--query-compute-apps`` for the same pid.

Skipped, with the reason, where there is no CUDA GPU, no CUDA torch or no nvidia-smi."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from gpumon.playground.client.kernel_client import KernelClient
from gpumon.playground.client.ssh_kernel import Remote
from gpumon.playground.data.actions import RunCode
from gpumon.ssh.command import SshOptions
from gpumon.ssh.target import parse_target
from tests.playground.kernel_helpers import Inbox

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU and CUDA torch"),
    pytest.mark.skipif(shutil.which("nvidia-smi") is None, reason="needs nvidia-smi"),
]
MIB = 1 << 20


def smi_used_mib(pid: int) -> int | None:
    """nvidia-smi's memory of ``pid`` on the GPUs, MiB (None: not listed)."""
    out = subprocess.run(["nvidia-smi", "--query-compute-apps=pid,used_memory",
                          "--format=csv,noheader,nounits"], capture_output=True, text=True,
                         timeout=30, check=True).stdout
    used = [int(m) for p, m in (line.split(",") for line in out.splitlines() if "," in line)
            if p.strip() == str(pid) and m.strip().isdigit()]
    return sum(used) if used else None


def nvml_used_mib(pid: int) -> int | None:
    import pynvml

    pynvml.nvmlInit()
    try:
        handle = pynvml.nvmlDeviceGetHandleByIndex(0)
        used = [p.usedGpuMemory for p in pynvml.nvmlDeviceGetComputeRunningProcesses(handle)
                if p.pid == pid and p.usedGpuMemory is not None]
        return sum(used) // MIB if used else None
    finally:
        pynvml.nvmlShutdown()


def test_one_cuda_action_through_the_stdio_kernel_and_its_memory_lines(tmp_path: Path) -> None:
    fake_ssh = tmp_path / "ssh"  # runs its last argument, the remote command, here
    fake_ssh.write_text("#!/bin/sh\nfor last; do :; done\nexec sh -c \"$last\"\n")
    fake_ssh.chmod(0o755)
    inbox = Inbox()
    client = KernelClient(inbox, remote=Remote(parse_target("gpu-machine"), SshOptions(
        program=str(fake_ssh), remote_command=f"{sys.executable} -m gpumon")))
    try:
        rid = client.request("run", RunCode("x = torch.ones(256, 1024, 1024, device='cuda:0')"
                                            "\nx.device"))
        outcome = inbox.wait("reply", rid, timeout=300).data
        assert outcome.ok and outcome.preview == "device(type='cuda', index=0)", outcome.error
        pid = inbox.wait("hello", timeout=5).data
        allocated, reserved = inbox.wait("counters", timeout=30).data.get(0, (0, 0))
        while allocated < 1 << 30:  # the counters of the moment after the action
            allocated, reserved = inbox.wait("counters", timeout=30).data.get(0, (0, 0))
        assert allocated == 1 << 30 and reserved >= allocated  # 1 GiB of float32 ones
        nvml, smi = nvml_used_mib(pid), smi_used_mib(pid)
        assert nvml is not None and smi is not None, (nvml, smi)
        assert abs(nvml - smi) <= 2, (nvml, smi)  # the same reading, rounded to MiB
        assert nvml * MIB >= reserved  # the context besides torch's own memory
    finally:
        client.shutdown(timeout_s=2.0)
