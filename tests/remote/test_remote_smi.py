"""A machine without gpumon: its GPUs through nvidia-smi's CSV (gpumon/remote/smi.py), parsed
alone and read over a real sshd from a fake nvidia-smi on the remote PATH."""

from __future__ import annotations

import shutil
import sys
import time
from pathlib import Path

import pytest
from fake_nvidia_smi import APPS, GPUS
from sshd import Lab

from gpumon.remote.smi import (
    APP_FIELDS,
    APPS_BEGIN,
    APPS_END,
    GPU_FIELDS,
    SmiParser,
    missing_fields,
)
from gpumon.remote.source import FALLBACK_SOURCE, RemoteSource
from gpumon.ssh.backoff import Backoff
from gpumon.ssh.command import SshOptions
from gpumon.ssh.diagnose import Kind
from gpumon.ssh.target import parse_target
from gpumon.telemetry.model.types import SourceState

MIB = 1 << 20


def gpu_line(row: dict[str, str]) -> str:
    return ", ".join(row[name] for name, _, _ in GPU_FIELDS)


def app_line(row: dict[str, str]) -> str:
    return ", ".join(row[name] for name in APP_FIELDS)


def check_values(snap) -> None:
    first, second = snap.samples
    assert [g.name for g in snap.gpus] == ["NVIDIA H100 80GB HBM3"] * 2
    assert snap.gpus[0].uuid == GPUS[0]["uuid"] and snap.gpus[1].pci_bus_id == "00000000:2A:00.0"
    assert first.mem_used_bytes == 1024 * MIB and first.mem_total_bytes == 81559 * MIB
    assert first.gpu_util_pct == 37.0 and first.temperature_c == 41.0
    assert first.power_w == 112.35 and first.sm_clock_mhz == 1980.0 and first.pstate == "P0"
    assert first.fan_pct is None  # [N/A]: not 0
    assert first.persistence_mode is True and second.compute_mode == "Exclusive Process"
    assert first.energy_mj is None and first.sm_active_pct is None  # not in nvidia-smi's CSV
    assert snap.machine.driver_version == "550.54.15"


def test_the_parser_makes_a_snapshot_a_round() -> None:
    parser = SmiParser("lab9")
    lines = [APPS_BEGIN, app_line(APPS[0]), APPS_END, gpu_line(GPUS[0]), gpu_line(GPUS[1]),
             "garbage, line", gpu_line(GPUS[0])]
    out = [s for s in (parser.feed(line, now=100.0) for line in lines) if s is not None]
    assert len(out) == 1  # the first round ends when GPU 0 comes again
    snap = out[0]
    check_values(snap)
    assert parser.bad_lines == 1
    (proc,) = snap.processes
    assert proc.pid == 4242 and proc.name == "/opt/run, v2/python"  # a comma in the name
    assert proc.gpu_mem_bytes == 1018 * MIB and proc.gpu_index == 0
    assert snap.status.state is SourceState.OK and snap.status.message == missing_fields()
    # From the second round on, a round is whole as soon as its last GPU came.
    assert parser.feed(gpu_line(GPUS[1]), now=101.0) is not None


@pytest.mark.slow
def test_a_machine_without_gpumon_is_read_through_nvidia_smi(lab: Lab) -> None:
    fake = lab.remote_path / "nvidia-smi"
    fake.write_text(f"#!{sys.executable}\n"
                    + (Path(__file__).with_name("fake_nvidia_smi.py")).read_text())
    fake.chmod(0o755)
    source = RemoteSource(parse_target("lab1"), SshOptions(config_file=str(lab.config)), 0.3,
                          backoff=Backoff(0.2, 1.0))
    source.open()
    try:
        deadline = time.monotonic() + 30
        while True:
            snap = source.sample()
            if snap.machine.source_name == FALLBACK_SOURCE and len(snap.samples) == 2:
                break
            assert time.monotonic() < deadline, snap.status
            time.sleep(0.1)
        check_values(snap)
        assert snap.status.message == missing_fields()
        assert "pip install gpumon" in snap.status.message
        assert source.feed is not None and source.feed.smi
        deadline = time.monotonic() + 30  # the process list comes with its own loop
        while not source.sample().processes:
            assert time.monotonic() < deadline
            time.sleep(0.1)
        assert [p.pid for p in source.sample().processes] == [4242]
    finally:
        source.close()


@pytest.mark.slow
def test_neither_gpumon_nor_nvidia_smi(lab: Lab) -> None:
    assert shutil.which("nvidia-smi", path=f"{lab.remote_path}:/usr/bin:/bin") is None
    source = RemoteSource(parse_target("lab1"), SshOptions(config_file=str(lab.config)), 0.3,
                          backoff=Backoff(0.2, 1.0))
    source.open()
    try:
        deadline = time.monotonic() + 30
        while True:
            state = source.feed.state() if source.feed else None
            if state is not None and state.problem.startswith("Neither gpumon nor nvidia-smi"):
                break
            assert time.monotonic() < deadline, state
            time.sleep(0.1)
        assert state.problem_kind is Kind.REMOTE_MISSING
        assert source.sample().status.message == state.problem
    finally:
        source.close()
