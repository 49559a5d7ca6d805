"""The exporter's /metrics, parsed with prometheus_client's own parser: names, types, labels
and units as dcgm-exporter's default counters have them; unsupported fields left out."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from functools import partial
from pathlib import Path

import pytest
from fakenvml import FakeNvml
from prometheus_client.parser import text_string_to_metric_families
from testkit import ExporterReading

from gpumon.telemetry.exporter.series import (
    DEFAULT_OPTIONS,
    MAX_COMMAND_CHARS,
    Options,
    cut_command,
)
from gpumon.telemetry.model.types import Source
from gpumon.telemetry.nvml.source import NvmlSource
from gpumon.telemetry.sources.simulated import SimulatedSource

ROOT = Path(__file__).resolve().parents[2]
MIB = 1024**2
GIB = 1024**3
DCGM_LABELS = {"gpu", "UUID", "pci_bus_id", "device", "modelName", "hostname",
               "DCGM_FI_DRIVER_VERSION"}
# dcgm-exporter's default counters (etc/default-counters.csv) that gpumon exports.
DCGM_DEFAULTS = {
    "DCGM_FI_DEV_SM_CLOCK": "SM clock frequency (in MHz).",
    "DCGM_FI_DEV_MEM_CLOCK": "Memory clock frequency (in MHz).",
    "DCGM_FI_DEV_GPU_TEMP": "GPU temperature (in C).",
    "DCGM_FI_DEV_POWER_USAGE": "Power draw (in W).",
    "DCGM_FI_DEV_GPU_UTIL": "GPU utilization (in %).",
    "DCGM_FI_DEV_MEM_COPY_UTIL": "Memory utilization (in %).",
    "DCGM_FI_DEV_ENC_UTIL": "Encoder utilization (in %).",
    "DCGM_FI_DEV_DEC_UTIL": "Decoder utilization (in %).",
    "DCGM_FI_DEV_FB_FREE": "Framebuffer memory free (in MiB).",
    "DCGM_FI_DEV_FB_USED": "Framebuffer memory used (in MiB).",
}


def scrape(factory: Callable[[], Source], host: str = "h",
           options: Options = DEFAULT_OPTIONS) -> dict[str, object]:
    """What a scraper reads after the exporter's first reading, parsed back by
    prometheus_client's text parser."""
    with ExporterReading(factory, host, options) as exporter:
        text = exporter.first().body().data.decode()
    return {f.name: f for f in text_string_to_metric_families(text)}


def values(family: object) -> dict[str, float]:
    return {s.labels["gpu"]: s.value for s in family.samples}  # type: ignore[attr-defined]


def test_fake_nvml_numbers_with_dcgm_names_labels_and_units(fake_nvml: FakeNvml) -> None:
    fake_nvml.set_gpu_count(2)
    fake_nvml.set_name(1, "NVIDIA H100 80GB HBM3")
    for key, value in dict(mem_total=24 * GIB, mem_used=5 * GIB, util_gpu=87, util_mem=41,
                           temp=71, power_mw=215_500, limit_mw=350_000, fan=55,
                           sm_clock=1905, mem_clock=9751, pstate=2, pcie_rx_kb=1500,
                           enc=12, dec=34).items():
        fake_nvml.set_value(0, key, value)
    families = scrape(NvmlSource, host="lab-1")
    for name, help_text in DCGM_DEFAULTS.items():
        family = families[name]
        assert family.type == "gauge" and family.documentation == help_text  # type: ignore
        for s in family.samples:  # type: ignore[attr-defined]
            assert set(s.labels) == DCGM_LABELS  # no simulated label on real GPUs
    sample = next(s for s in families["DCGM_FI_DEV_GPU_UTIL"].samples  # type: ignore
                  if s.labels["gpu"] == "1")
    assert sample.labels == {"gpu": "1", "UUID": "GPU-fa4e0000-0000-4000-8000-000000000001",
                             "pci_bus_id": "00000000:11:00.0", "device": "nvidia1",
                             "modelName": "NVIDIA H100 80GB HBM3", "hostname": "lab-1",
                             "DCGM_FI_DRIVER_VERSION": "550.54.15"}
    assert values(families["DCGM_FI_DEV_GPU_UTIL"])["0"] == 87
    assert values(families["DCGM_FI_DEV_MEM_COPY_UTIL"])["0"] == 41
    assert values(families["DCGM_FI_DEV_FB_USED"])["0"] == 5 * 1024  # MiB, as dcgm-exporter
    assert values(families["DCGM_FI_DEV_POWER_USAGE"])["0"] == 215.5  # W, not mW
    assert values(families["DCGM_FI_DEV_GPU_TEMP"])["0"] == 71
    assert values(families["DCGM_FI_DEV_SM_CLOCK"])["0"] == 1905
    assert values(families["DCGM_FI_DEV_ENC_UTIL"])["0"] == 12
    assert values(families["gpumon_memory_total_bytes"])["0"] == 24 * GIB
    assert values(families["gpumon_power_limit_watts"])["0"] == 350
    assert values(families["gpumon_fan_speed_percent"])["0"] == 55
    assert values(families["gpumon_pstate"])["0"] == 2
    assert values(families["gpumon_pcie_rx_bytes_per_second"])["0"] == 1500 * 1024
    assert values(families["gpumon_gpu_lost"]) == {"0": 0, "1": 0}
    (up,) = families["gpumon_nvml_up"].samples  # type: ignore[attr-defined]
    assert up.labels == {"hostname": "lab-1"} and up.value == 1


def test_unsupported_fields_are_left_out_not_zero(fake_nvml: FakeNvml) -> None:
    fake_nvml.set_gpu_count(2)
    fake_nvml.set_unsupported("nvmlDeviceGetFanSpeed", gpu=1)
    fake_nvml.set_unsupported("nvmlDeviceGetPowerUsage")
    families = scrape(NvmlSource)
    assert list(values(families["gpumon_fan_speed_percent"])) == ["0"]
    assert "DCGM_FI_DEV_POWER_USAGE" not in families or not families[
        "DCGM_FI_DEV_POWER_USAGE"].samples  # type: ignore[attr-defined]
    assert sorted(values(families["DCGM_FI_DEV_GPU_TEMP"])) == ["0", "1"]


def test_simulated_is_labelled_and_processes_are_bounded() -> None:
    families = scrape(partial(SimulatedSource, n_gpus=2, seed=3), host='lab "A"\nrack 2',
                      options=Options(process_labels=("user", "command")))
    for name in (*DCGM_DEFAULTS, "gpumon_gpu_lost", "gpumon_nvml_up",
                 "gpumon_process_gpu_memory_bytes"):
        for s in families[name].samples:  # type: ignore[attr-defined]
            assert s.labels["simulated"] == "1", name
            assert s.labels["hostname"] == 'lab "A"\nrack 2'  # escaped and read back
    processes = families["gpumon_process_gpu_memory_bytes"].samples  # type: ignore
    assert processes
    for s in processes:
        assert set(s.labels) == {"gpu", "UUID", "pid", "type", "user", "command",
                                 "hostname", "simulated"}
        assert len(s.labels["command"]) <= MAX_COMMAND_CHARS and s.value > 0


@pytest.mark.parametrize(("options", "labels"), [
    (Options(), {"gpu", "UUID", "pid", "type", "hostname"}),
    (Options(process_labels=("command",)), {"gpu", "UUID", "pid", "type", "hostname",
                                            "command"}),
    (Options(process_labels=("user",)), {"gpu", "UUID", "pid", "type", "hostname", "user"}),
    (Options(process_labels=("container",)), {"gpu", "UUID", "pid", "type", "hostname",
                                              "container"}),
])
def test_user_and_command_only_when_asked_for(fake_nvml: FakeNvml, options: Options,
                                              labels: set[str]) -> None:
    fake_nvml.add_process(0, os.getpid(), 3 * GIB)
    families = scrape(NvmlSource, options=options)
    (sample,) = families["gpumon_process_gpu_memory_bytes"].samples  # type: ignore
    assert set(sample.labels) == labels and sample.labels["pid"] == str(os.getpid())
    assert sample.labels["type"] == "C"  # as nvidia-smi writes it (C, G, C+G)
    assert sample.value == 3 * GIB


def test_no_process_series_when_turned_off(fake_nvml: FakeNvml) -> None:
    fake_nvml.add_process(0, os.getpid(), GIB)
    families = scrape(NvmlSource, options=Options(processes=False))
    assert "gpumon_process_gpu_memory_bytes" not in families
    assert "DCGM_FI_DEV_GPU_UTIL" in families


def test_cut_command() -> None:
    assert cut_command("python  train.py\n--lr 3") == "python train.py --lr 3"
    long = cut_command("x" * 500)
    assert len(long) == MAX_COMMAND_CHARS and long.endswith("…")
    assert cut_command(None) == ""


def test_exporter_command_refuses_bad_addresses() -> None:
    bad = subprocess.run([sys.executable, "-m", "gpumon", "exporter", "--listen", "nowhere"],
                         capture_output=True, text=True, cwd=ROOT, timeout=60, check=False)
    assert bad.returncode == 2
    assert "--listen: must be HOST:PORT, for example 127.0.0.1:9401" in bad.stderr
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        out = subprocess.run([sys.executable, "-m", "gpumon", "exporter", "--simulate", "1",
                              "--listen", f"127.0.0.1:{port}"], capture_output=True,
                             text=True, cwd=ROOT, timeout=60, check=False)
    assert out.returncode == 1
    assert out.stderr.strip().splitlines()[-1] == (
        f"gpumon exporter: cannot listen on 127.0.0.1:{port} (Address already in use).")


def test_exporter_serves_until_sigterm_then_exits_0() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "gpumon", "exporter", "--simulate", "2",
                             "--listen", f"127.0.0.1:{port}"], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        body = b""
        deadline = time.monotonic() + 20
        while b"DCGM_FI_DEV_GPU_UTIL" not in body and time.monotonic() < deadline:
            try:  # the first answers may come before the first reading: up 0, no GPU values
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2) as r:
                    body = r.read()
            except OSError:
                time.sleep(0.1)
        assert b'gpumon_nvml_up{hostname="' in body and b'simulated="1"} 1.0' in body
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0
    assert f"gpumon exporter: serving http://127.0.0.1:{port}/metrics (simulated GPUs)" in out
    assert "Traceback" not in out


def test_the_container_label_is_the_process_s_container_or_job(
        fake_nvml: FakeNvml, monkeypatch: pytest.MonkeyPatch) -> None:
    from gpumon.telemetry.procs import procinfo

    fake_nvml.add_process(0, os.getpid(), GIB)
    monkeypatch.setattr(procinfo, "container_of", lambda pid: "slurm:4242")
    families = scrape(NvmlSource, options=Options(process_labels=("container",)))
    (sample,) = families["gpumon_process_gpu_memory_bytes"].samples  # type: ignore
    assert sample.labels["container"] == "slurm:4242"


@pytest.mark.slow
def test_a_sigterm_as_soon_as_the_port_answers_still_exits_0() -> None:
    """The handlers are in place before the server answers: a SIGTERM the moment the port
    accepts (a quick restart) ends the exporter cleanly, never by the default action."""
    codes = []
    for _ in range(5):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        proc = subprocess.Popen([sys.executable, "-m", "gpumon", "exporter", "--simulate", "1",
                                 "--listen", f"127.0.0.1:{port}"], cwd=ROOT,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline:
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                    break
                except OSError:
                    time.sleep(0.001)
            proc.send_signal(signal.SIGTERM)
            codes.append(proc.wait(20))
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert codes == [0] * 5
