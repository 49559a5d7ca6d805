"""Per-process GPU utilization and host usage, through the real binding and the fake driver."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import psutil
import pytest
from fakenvml import FakeNvml
from testkit import jsonschema_or_skip, wait_until

from gpumon.cli.main import main
from gpumon.telemetry.model.types import GpuProcess, ProcessType
from gpumon.telemetry.nvml import budget
from gpumon.telemetry.nvml.source import NvmlSource
from gpumon.telemetry.sources.simulated import SimulatedSource
from gpumon.text.smi_detail import render_detail

SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "docs" / "snapshot.schema.json")
                    .read_text(encoding="utf-8"))
A, B = 4242, 4343  # PIDs the fake lists; no such processes here


def _by_pid(source: NvmlSource, include_slow: bool = True) -> dict[int, GpuProcess]:
    return {p.pid: p for p in source.sample(include_slow=include_slow).processes}


@pytest.mark.parametrize("costly", [False, True], ids=["cheap reads", "costly reads"])
def test_only_samples_newer_than_the_last_read_are_taken(
        fake_nvml: FakeNvml, monkeypatch: pytest.MonkeyPatch, costly: bool) -> None:
    """Each slow read asks for what came after the last. Between them the source's clock
    moves past the longest the reading budget puts a costly reading off (budget.py): on a
    loaded machine the first read cost more than the budget's share, and the next one, asked
    at once, was rightly put off. ``costly``: every read costs 10 ms of CPU, as there."""
    if costly:
        spent = iter(range(10**6))
        monkeypatch.setattr(budget, "time", SimpleNamespace(
            thread_time=lambda: next(spent) * 0.01, perf_counter=time.perf_counter))
    now = [0.0]

    def slow_read(include_slow: bool = True) -> dict[int, GpuProcess]:
        now[0] += budget.MAX_EVERY_S + 1.0
        return _by_pid(source, include_slow)

    fake_nvml.add_process(0, A, 1 << 30)
    fake_nvml.add_process(0, B, 1 << 30)
    fake_nvml.add_process_util(0, A, 1_000, sm=10, mem=1)
    fake_nvml.add_process_util(0, A, 2_000, sm=20, mem=2, enc=3, dec=4)
    fake_nvml.add_process_util(0, B, 1_500, sm=7)
    source = NvmlSource(clock=lambda: now[0])
    source.open()
    try:
        procs = slow_read()
        assert fake_nvml.util_last_seen(0) == 0  # the first read takes what the driver holds
        a = procs[A]
        assert (a.sm_util_pct, a.mem_bw_util_pct, a.enc_util_pct, a.dec_util_pct) == (
            20, 2, 3, 4)  # the newest of A's samples
        assert procs[B].sm_util_pct == 7

        fake_nvml.add_process_util(0, A, 3_000, sm=30)
        procs = slow_read()
        assert fake_nvml.util_last_seen(0) == 2_000  # asked only for what came after
        assert procs[A].sm_util_pct == 30
        assert procs[B].sm_util_pct is None  # no new sample: it did not run

        calls = fake_nvml.util_calls(0)
        procs = _by_pid(source, include_slow=False)  # fast ticks reuse the slow tick's reading
        assert fake_nvml.util_calls(0) == calls and procs[A].sm_util_pct == 30
        procs = slow_read()
        assert fake_nvml.util_last_seen(0) == 3_000 and procs[A].sm_util_pct is None
    finally:
        source.close()


def test_a_driver_without_per_process_samples(fake_nvml: FakeNvml) -> None:
    fake_nvml.add_process(0, A, 1 << 30)
    fake_nvml.set_unsupported("nvmlDeviceGetProcessUtilization")
    source = NvmlSource()
    source.open()
    try:
        snap = source.sample()
        (proc,) = snap.processes
        assert proc.sm_util_pct is None and not snap.samples[0].lost
        assert not snap.samples[0].failed_reads
    finally:
        source.close()


def test_host_usage_and_a_process_that_ends_between_two_reads(fake_nvml: FakeNvml) -> None:
    child = subprocess.Popen([sys.executable, "-c", "while True: pass"])  # busy: CPU > 0
    try:
        fake_nvml.add_process(0, child.pid, 1 << 30)
        fake_nvml.add_process_util(0, child.pid, 1_000, sm=50)
        source = NvmlSource()
        source.open()
        try:
            first = _by_pid(source)[child.pid]
            assert first.cpu_pct is None  # nothing to compare with yet
            assert first.host_rss_bytes is not None and first.host_rss_bytes > 0
            assert first.started_s == pytest.approx(psutil.Process(child.pid).create_time())
            busy = psutil.Process(child.pid)
            used = sum(busy.cpu_times()[:2])  # at least what the first read saw
            wait_until(lambda: sum(busy.cpu_times()[:2]) > used, 30, "the child to use CPU")
            second = _by_pid(source)[child.pid]
            assert second.cpu_pct is not None and second.cpu_pct > 0
            child.kill()
            child.wait(timeout=5)
            # The driver still lists it (it lags the OS): the tick reads on, without values.
            gone = _by_pid(source)[child.pid]
            assert (gone.cpu_pct, gone.host_rss_bytes) == (None, None)
            assert _by_pid(source, include_slow=False)[child.pid].gpu_mem_bytes == 1 << 30
        finally:
            source.close()
    finally:
        child.kill()
        child.wait(timeout=5)


def test_json_lists_the_new_fields(fake_nvml: FakeNvml,
                                   capfd: pytest.CaptureFixture[str]) -> None:
    fake_nvml.add_process(0, os.getpid(), 1 << 30)
    fake_nvml.add_process_util(0, os.getpid(), 5_000, sm=42, mem=17, enc=1, dec=2)
    assert main(["--once", "--json"]) == 0
    doc = json.loads(capfd.readouterr().out)
    jsonschema_or_skip().validate(doc, SCHEMA)
    (proc,) = doc["processes"]
    assert (proc["sm_util_pct"], proc["mem_bw_util_pct"], proc["enc_util_pct"],
            proc["dec_util_pct"]) == (42, 17, 1, 2)
    # --once reads twice for CPU %, a rate (issue 54); the driver's samples stay the first's
    assert proc["host_rss_bytes"] > 0 and proc["cpu_pct"] is not None and proc["cpu_pct"] >= 0
    assert proc["started_epoch_s"] == pytest.approx(psutil.Process().create_time())
    assert 0 < proc["run_time_s"] < 24 * 3600


def test_query_lists_the_new_fields(fake_nvml: FakeNvml,
                                    capfd: pytest.CaptureFixture[str]) -> None:
    fake_nvml.add_process(0, os.getpid(), 1 << 30)
    fake_nvml.add_process_util(0, os.getpid(), 5_000, sm=42, mem=17, enc=1, dec=2)
    assert main(["--once", "-q"]) == 0
    out = capfd.readouterr().out
    for key, value in (("SM Utilization", "42 %"), ("Memory Utilization", "17 %"),
                       ("Encoder Utilization", "1 %"), ("Decoder Utilization", "2 %"),
                       ("Host CPU", " %")):
        assert any(line.split(":")[0].strip() == key and line.endswith(value)
                   and "N/A" not in line for line in out.splitlines()), key
    assert "Host Memory" in out and "Run Time" in out and "Container / Job" in out


def test_a_hostile_group_name_is_escaped_in_the_query_output() -> None:
    # A user may name the groups of a delegated subtree at will: the label is their text.

    source = SimulatedSource(1, seed=1)
    source.open()
    snap = source.sample()
    hostile = GpuProcess(0, 99, ProcessType.COMPUTE, 1, container="evil\x1b[2J.scope")
    text = render_detail(dataclasses.replace(snap, processes=(hostile,)))
    assert "\x1b" not in text and "evil\\x1b[2J.scope" in text
