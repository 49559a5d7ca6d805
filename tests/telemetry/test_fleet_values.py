"""Values no GPU can have, from a remote exporter: that one field of that one GPU is not
available, and every other field, GPU and machine stays. ``DCGM_FI_DEV_FB_USED = 1e308`` (MiB,
so infinite bytes) once raised OverflowError and blanked the whole cluster."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scripted_http import ScriptedServer
from scripted_prometheus import answer_from, scripted

from gpumon.cli.cluster import render_cluster
from gpumon.telemetry.cluster.fleet import MAX_VALUE, Fleet, parse_tick, usable, value_range
from gpumon.telemetry.cluster.prometheus import PrometheusSource
from gpumon.telemetry.model.exported import READ_BACK
from gpumon.telemetry.model.types import GpuSample

ROOT = Path(__file__).resolve().parents[2]
GPU0 = {"Hostname": "a", "gpu": "0", "UUID": "GPU-a0", "instance": "a:9400", "job": "dcgm",
        "modelName": "NVIDIA H200"}
GPU1 = {**GPU0, "gpu": "1", "UUID": "GPU-a1"}
OTHER = {**GPU0, "Hostname": "b", "UUID": "GPU-b0", "instance": "b:9400"}
UP = [({"instance": "a:9400", "job": "dcgm"}, 1.0), ({"instance": "b:9400", "job": "dcgm"}, 1.0)]


def fleet_series(bad_used: float) -> dict[str, Any]:
    return {"DCGM_FI_DEV_FB_USED": [(GPU0, bad_used), (GPU1, 1024.0), (OTHER, 2048.0)],
            "DCGM_FI_DEV_FB_FREE": [(GPU0, 4096.0), (GPU1, 3072.0), (OTHER, 2048.0)],
            "DCGM_FI_DEV_GPU_TEMP": [(GPU0, 41.0), (GPU1, 42.0), (OTHER, 43.0)],
            "DCGM_FI_DEV_GPU_UTIL": [(GPU0, 11.0), (GPU1, 12.0), (OTHER, 13.0)],
            "up": UP}


def test_a_1e308_memory_value_leaves_the_machine_shown() -> None:
    with scripted(fleet_series(1e308)) as server:
        source = PrometheusSource(server.url)
        snap = source.sample()
        source.close()
    assert snap.status.usable, snap.status.message
    assert [h.host for h in snap.hosts] == ["a", "b"]
    first = snap.hosts[0].samples[0]
    assert first.mem_used_bytes is None  # the one field
    assert (first.mem_free_bytes, first.temperature_c, first.gpu_util_pct) == (
        4096 * 2**20, 41.0, 11.0)
    assert snap.hosts[0].samples[1].mem_used_bytes == 2**30
    assert snap.hosts[1].samples[0].mem_used_bytes == 2**31
    text = render_cluster(snap)
    assert "GPU 0  NVIDIA H200                   util  11%  mem N/A" in text


def test_once_prints_the_cluster_with_one_unusable_value() -> None:
    """The issue's run: ``--once`` printed a traceback and exited 1."""
    with ScriptedServer(answer_from(fleet_series(1e308))) as server:
        out = subprocess.run([sys.executable, "-m", "gpumon", "--prometheus", server.url,
                              "--once"], capture_output=True, text=True, timeout=60, cwd=ROOT,
                             check=False)
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
    assert "a: 2 GPUs" in out.stdout and "b: 1 GPU" in out.stdout


def _series(name: str, labels: dict[str, str], value: str) -> dict[str, Any]:
    return {"metric": {"__name__": name, **labels}, "value": [1.0, value]}


numbers = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(["1e308", "-1e308", "+Inf", "-Inf", "NaN", "9007199254740993",
                     "-0", "4.9e-324", "1e400", "101", "-273.16"]))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(sorted(READ_BACK)), value=numbers)
def test_any_number_of_any_metric_is_one_field_or_none(name: str, value: float | str) -> None:
    """Every metric gpumon reads back, every float and every text Prometheus may send: the
    tick never raises, the field is in its range or not available, the other fields stay."""
    series = [_series(name, GPU0, str(value)),
              _series("DCGM_FI_DEV_GPU_TEMP" if name != "DCGM_FI_DEV_GPU_TEMP"
                      else "DCGM_FI_DEV_GPU_UTIL", GPU0, "42"),
              _series("DCGM_FI_DEV_GPU_UTIL", OTHER, "7"),
              _series("up", {"instance": "a:9400", "job": "dcgm"}, "1"),
              _series("up", {"instance": "b:9400", "job": "dcgm"}, "1")]
    hosts = Fleet().update(parse_tick(json.loads(json.dumps(series))), {}, time.time())
    assert [h.host for h in hosts] == ["a", "b"]
    sample = hosts[0].samples[0]
    assert hosts[1].samples[0].gpu_util_pct == 7.0
    if name == "gpumon_gpu_lost":  # 1 and more mark the GPU lost: its fields go with it
        assert sample.lost == ((usable("lost", float(value)) or 0.0) >= 1.0)
        return
    assert not sample.lost
    key = READ_BACK[name][0]
    got = getattr(sample, key)
    if got is not None and not isinstance(got, (bool, str)):
        low, high = value_range(key)
        assert low <= got <= high and math.isfinite(got)
    other = "temperature_c" if name != "DCGM_FI_DEV_GPU_TEMP" else "gpu_util_pct"
    assert getattr(sample, other) == 42.0
    for info in hosts[0].gpus:
        assert info.mem_total_bytes is None or 0 <= info.mem_total_bytes <= 2 * MAX_VALUE


def test_usable_ranges() -> None:
    assert usable("mem_used_bytes", math.inf) is None
    assert usable("mem_used_bytes", math.nan) is None
    assert usable("mem_used_bytes", -1.0) is None
    assert usable("mem_used_bytes", 1e308) is None
    assert usable("mem_used_bytes", 80e9) == 80e9
    assert usable("gpu_util_pct", 100.5) is None and usable("gpu_util_pct", 100.0) == 100.0
    assert usable("temperature_c", 55.0) == 55.0
    assert usable("temperature_c", -1.0) is None  # a driver's sentinel, as NVML's (issue 53)
    assert usable("temperature_c", -300.0) is None


def test_history_and_processes_with_unusable_values_and_times() -> None:
    """The range query (history when a machine is opened) and the process query: a value or
    a time no sample can hold is skipped; the other points stay."""
    now = time.time()
    good_time = now - 120.0
    series: dict[str, Any] = {"DCGM_FI_DEV_FB_USED": [(GPU0, 1024.0)], "up": UP[:1],
                              "gpumon_process_gpu_memory_bytes": [
                                  ({**GPU0, "pid": "10", "command": "x"}, 1e308),
                                  ({**GPU0, "pid": "11", "command": "y"}, -5.0),
                                  ({**GPU0, "pid": "12", "command": "z"}, 2.0**20)]}
    serve = answer_from(series)
    matrix = {"status": "success", "data": {"resultType": "matrix", "result": [
        {"metric": {"__name__": "DCGM_FI_DEV_FB_USED", **GPU0},
         "values": [[1e308, "1"], [-1e308, "1"], [good_time - 5, "1e308"],
                    [good_time - 10, "-Inf"], [good_time, "2048"], ["NaN", "3"]]},
        {"metric": {"__name__": "DCGM_FI_DEV_GPU_TEMP", **GPU0},
         "values": [[good_time, "1e300"], [good_time - 5, "55"]]}]}}

    def respond(path: str) -> tuple[int, str, bytes, float]:
        if path.startswith("/api/v1/query_range"):
            return 200, "application/json", json.dumps(matrix).encode(), 0
        return serve(path)

    with ScriptedServer(respond) as server:
        source = PrometheusSource(server.url, clock=lambda: now)
        snap = source.sample()
        source.close()
    assert snap.status.usable, snap.status.message
    rows = {s.timestamp_s: s.samples[0] for s in snap.backfill}
    assert set(rows) == {good_time, good_time - 5}
    assert rows[good_time].mem_used_bytes == 2 * 2**30 and rows[good_time].temperature_c is None
    assert rows[good_time - 5].mem_used_bytes is None
    assert rows[good_time - 5].temperature_c == 55.0
    assert [(p.pid, p.gpu_mem_bytes) for p in snap.processes] == [
        (10, None), (11, None), (12, 2**20)]


def test_a_mig_id_that_is_a_digit_but_no_number_is_not_fatal() -> None:
    mig = {**GPU0, "GPU_I_ID": "²", "GPU_I_PROFILE": "1g.18gb"}
    series = [_series("DCGM_FI_DEV_FB_USED", mig, "10"),
              _series("up", {"instance": "a:9400", "job": "dcgm"}, "1")]
    (host,) = Fleet().update(parse_tick(series), {}, time.time())
    assert [m.gpu_instance_id for m in host.migs] == [None]


def test_a_sample_holds_what_usable_lets_through() -> None:
    """The largest usable byte count is an exact int in a GpuSample."""
    assert GpuSample(index=0, timestamp_s=0.0, mem_used_bytes=int(MAX_VALUE)).mem_used_bytes
