"""What nvitop's code guards against: names and commands that are not UTF-8, and this
process seen from inside a container's PID namespace (NVML lists host PIDs)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
from fakenvml import FakeNvml

from gpumon.telemetry.nvml.source import NvmlSource
from gpumon.telemetry.procs.procinfo import nspids
from gpumon.text.smi_text import render

REPO = Path(__file__).resolve().parents[2]


def test_gpu_name_not_utf8_opens_every_gpu(fake_nvml: FakeNvml) -> None:
    fake_nvml.set_gpu_count(3)
    fake_nvml.set_name(1, b"Tesla \xff\xfe broken")
    source = NvmlSource()
    status = source.open()
    try:
        assert status.usable, status
        names = [g.name for g in source.gpus()]
        snap = source.sample()
    finally:
        source.close()
    assert names == ["Fake NVIDIA GPU 0", "Tesla \ufffd\ufffd broken", "Fake NVIDIA GPU 2"]
    assert all(not s.lost for s in snap.samples)
    render(snap).encode("utf-8")  # printable as it is


def test_process_command_not_utf8_is_readable(fake_nvml: FakeNvml, tmp_path: Path) -> None:
    script = tmp_path / "sleeper.py"
    script.write_text("import time; time.sleep(30)\n")
    child = subprocess.Popen([os.fsencode(sys.executable), os.fsencode(script), b"--tag=\xff\xfe"])
    try:
        fake_nvml.add_process(0, child.pid, 1 << 30)
        source = NvmlSource()
        source.open()
        try:
            deadline = time.monotonic() + 10
            while True:  # until the child's command line is in /proc
                (proc,) = source.sample().processes
                if proc.command and "--tag" in proc.command or time.monotonic() > deadline:
                    break
                time.sleep(0.05)
        finally:
            source.close()
    finally:
        child.kill()
        child.wait()
    assert proc.command is not None and proc.command.endswith("--tag=\ufffd\ufffd")
    proc.command.encode("utf-8")  # no surrogate escapes left for Qt or the CSV writer


def test_nspid_line_is_parsed() -> None:
    text = "Name:\tpython\nTgid:\t7\nNSpid:\t48213\t7\nPPid:\t1\n"
    assert nspids(text) == {48213, 7}
    assert nspids("Name:\tpython\n") == set()


CHILD = r"""
import sys
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from fakenvml import use_fake_nvml
from gpumon.telemetry.nvml.source import NvmlSource
host_pid = int(sys.stdin.readline())
with use_fake_nvml(Path(sys.argv[2])) as fake:
    fake.add_process(0, host_pid, 1 << 30)
    source = NvmlSource()
    source.open()
    (proc,) = source.sample().processes
    source.close()
import os
print(os.getpid(), proc.pid, proc.is_self)
"""


@pytest.mark.skipif(shutil.which("unshare") is None, reason="unshare (util-linux) not found")
def test_this_process_inside_a_pid_namespace(fake_nvml_lib: Path) -> None:
    """In a new PID namespace (as in a container) this process is PID 1 to itself, while
    NVML lists it by its host PID: it is still "this process"."""
    probe = subprocess.run(["unshare", "-Urpf", "true"], capture_output=True, check=False)
    if probe.returncode != 0:
        pytest.skip(f"no user/PID namespaces here: {probe.stderr.decode().strip()[:200]}")
    env = dict(os.environ, PYTHONPATH=str(REPO))
    child = subprocess.Popen(
        ["unshare", "-Urpf", sys.executable, "-c", CHILD, str(REPO / "tests" / "telemetry"),
         str(fake_nvml_lib)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, env=env)
    try:
        deadline = time.monotonic() + 20
        pythons: list[psutil.Process] = []
        while not pythons and time.monotonic() < deadline:
            pythons = [p for p in psutil.Process(child.pid).children(recursive=True)
                       if p.name().startswith("python")]
            time.sleep(0.05)
        assert pythons, "the namespaced python did not start"
        out, err = child.communicate(f"{pythons[0].pid}\n", timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == 0, err
    inner_pid, listed_pid, is_self = out.split()
    assert inner_pid == "1" and listed_pid == str(pythons[0].pid)
    assert is_self == "True"
