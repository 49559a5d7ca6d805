"""The exporter's fast /metrics text against prometheus_client's generate_latest, and its HTTP side.

The exporter serves text rendered by ``exposition.TextRenderer`` (labels escaped once per GPU,
one render per reading) instead of ``generate_latest``; these tests hold it to exactly what
``generate_latest`` writes over ``GpuCollector`` for the same reading, parsed back by
prometheus_client's own parser, in every state the exporter can be in.
"""

from __future__ import annotations

import gzip
import math
import os
import urllib.error
import urllib.request
from collections.abc import Iterator
from functools import partial

import pynvml
import pytest
from fakenvml import FakeNvml
from hypothesis import given
from hypothesis import strategies as st
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.utils import floatToGoString

from gpumon.telemetry.exporter import MAX_COMMAND_CHARS, GpuCollector
from gpumon.telemetry.exporter_http import accepts_text, make_app, serve
from gpumon.telemetry.exposition import CONTENT_TYPE, Exposition, number
from gpumon.telemetry.nvml import NvmlSource
from gpumon.telemetry.simulated import SimulatedSource
from gpumon.telemetry.types import (
    GpuInfo,
    GpuProcess,
    GpuSample,
    MachineInfo,
    ProcessType,
    Snapshot,
    SourceState,
    SourceStatus,
)

GIB = 1024**3
NASTY = 'lab "A"\\rack\n2'  # a quote, a backslash and a newline
PROMETHEUS_ACCEPT = ("application/openmetrics-text;version=1.0.0,application/openmetrics-text;"
                     "version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1")


def parsed(body: bytes) -> list[tuple[object, ...]]:
    """Families in order, each with its type, help and samples, as prometheus_client reads them."""
    return [(f.name, f.type, f.documentation,
             [(s.name, s.labels, s.value, s.timestamp) for s in f.samples])
            for f in text_string_to_metric_families(body.decode("utf-8"))]


def both(collector: GpuCollector, exposition: Exposition) -> tuple[bytes, bytes]:
    """The fast text and generate_latest's, of the same (cached) reading."""
    fast = exposition.body()
    registry = CollectorRegistry()
    registry.register(collector)
    return fast, generate_latest(registry)


def assert_same(collector: GpuCollector, exposition: Exposition) -> list[tuple[object, ...]]:
    fast, official = both(collector, exposition)
    families = parsed(fast)
    assert families == parsed(official)
    assert fast == official  # byte for byte, too
    return families


class Clock:
    """A clock the test moves: readings are cached until it passes the interval."""

    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def test_fake_nvml_with_nasty_labels_lost_and_unsupported_fields(fake_nvml: FakeNvml) -> None:
    fake_nvml.set_gpu_count(3)
    fake_nvml.set_name(0, 'NVIDIA "Quoted" \\ GPU\nsecond line')
    fake_nvml.set_value(0, "mem_total", 80 * GIB)
    fake_nvml.set_value(0, "pcie_rx_kb", 123_457)
    fake_nvml.set_unsupported("nvmlDeviceGetFanSpeed", gpu=1)
    fake_nvml.set_unsupported("nvmlDeviceGetPowerUsage")
    fake_nvml.add_process(1, os.getpid(), 3 * GIB)
    clock = Clock()
    collector = GpuCollector(NvmlSource, interval_s=1.0, host=NASTY, clock=clock)
    exposition = Exposition(collector)
    families = dict((f[0], f[3]) for f in assert_same(collector, exposition))
    assert {s[1]["modelName"] for s in families["DCGM_FI_DEV_GPU_UTIL"]} >= {  # type: ignore
        'NVIDIA "Quoted" \\ GPU\nsecond line'}
    assert families["DCGM_FI_DEV_POWER_USAGE"] == []  # left out, not 0
    assert len(families["gpumon_process_gpu_memory_bytes"]) == 1  # type: ignore[arg-type]
    fake_nvml.set_lost(2)  # the next reading: the prefixes of the same GPUs are reused
    clock.t += 1.0
    families = dict((f[0], f[3]) for f in assert_same(collector, exposition))
    lost = {s[1]["gpu"]: s[2] for s in families["gpumon_gpu_lost"]}  # type: ignore
    assert lost == {"0": 0.0, "1": 0.0, "2": 1.0}
    assert exposition.renders == 2
    collector.close()


def test_no_driver_then_the_driver_appears(fake_nvml: FakeNvml) -> None:
    fake_nvml.set_init_error(pynvml.NVML_ERROR_DRIVER_NOT_LOADED)
    clock = Clock()
    collector = GpuCollector(NvmlSource, interval_s=1.0, host="h", clock=clock)
    exposition = Exposition(collector)
    families = assert_same(collector, exposition)
    assert families == [("gpumon_nvml_up", "gauge", families[0][2],
                         [("gpumon_nvml_up", {"Hostname": "h"}, 0.0, None)])]
    fake_nvml.set_init_error(0)
    clock.t += 1.0
    names = [f[0] for f in assert_same(collector, exposition)]
    assert names[0] == "gpumon_nvml_up" and "DCGM_FI_DEV_GPU_UTIL" in names
    collector.close()


def test_simulated_label_everywhere() -> None:
    collector = GpuCollector(partial(SimulatedSource, n_gpus=3, seed=5), host=NASTY,
                             clock=Clock())
    families = assert_same(collector, Exposition(collector))
    samples = [s for f in families for s in f[3]]  # type: ignore[attr-defined]
    assert len(samples) > 40 and all(s[1]["simulated"] == "1" for s in samples)
    collector.close()


class ScriptedSource:
    """A source that hands out fixed readings: processes with nasty users and commands,
    a GPU without a sample, a value of +Inf and pstates the collector must skip."""

    def __init__(self, snapshots: Iterator[Snapshot]) -> None:
        self._snapshots = snapshots

    def open(self) -> SourceStatus:
        return SourceStatus(SourceState.OK, "scripted")

    def machine(self) -> MachineInfo:
        return MachineInfo("m", "NVML")

    def gpus(self) -> list[GpuInfo]:
        return []

    def sample(self, include_slow: bool = True) -> Snapshot:
        return next(self._snapshots)

    def close(self) -> None:
        pass


def _readings() -> Iterator[Snapshot]:
    gpus = (GpuInfo(0, 'A "100"', "GPU-0\\x", "0000:01:00.0"),
            GpuInfo(1, "B\n200", "GPU-1", "0000:02:00.0"),
            GpuInfo(2, "C", "GPU-2", "0000:03:00.0"))
    processes = (
        GpuProcess(0, 11, ProcessType.COMPUTE, 5 * GIB, "py", 'o"neil', 'python "a b"\\ \nx'),
        GpuProcess(0, 12, ProcessType.GRAPHICS, None, "Xorg", "root", "Xorg"),  # left out
        GpuProcess(1, 13, ProcessType.COMPUTE, 1234567, None, None, "y" * 300),
        GpuProcess(7, 14, ProcessType.COMPUTE, 1, "ghost", "u", None),  # a GPU not listed
    )
    for step in range(3):
        if step == 2:  # the same number of GPUs, one of them another card: labels rebuilt
            gpus = (*gpus[:2], GpuInfo(2, "D", "GPU-3", "0000:04:00.0"))
        samples = (
            GpuSample(0, 1.0, mem_total_bytes=80 * GIB, mem_used_bytes=step * GIB + 1,
                      mem_free_bytes=80 * GIB - step * GIB - 1, gpu_util_pct=float(step),
                      power_w=float("inf"), pcie_rx_bytes_per_s=1.5e16, pstate="P2"),
            GpuSample(1, 1.0, temperature_c=-1e7, pstate="Unknown", fan_pct=0.1 + 0.2),
            # GPU 2 has no sample: lost, like a GPU that fell off the bus
        )
        yield Snapshot(1.0, MachineInfo("m", "NVML"), SourceStatus(SourceState.OK, "ok"),
                       gpus=gpus, samples=samples, processes=processes[step % 2:])


def test_scripted_processes_odd_values_and_a_missing_sample() -> None:
    clock = Clock()
    collector = GpuCollector(partial(ScriptedSource, _readings()), interval_s=1.0,
                             host=NASTY, clock=clock)
    exposition = Exposition(collector)
    for step in range(3):
        families = dict((f[0], f[3]) for f in assert_same(collector, exposition))
        lost = families["gpumon_gpu_lost"]
        assert lost[2][1]["modelName"] == ("D" if step == 2 else "C")  # type: ignore
        processes = families["gpumon_process_gpu_memory_bytes"]
        assert all(len(s[1]["command"]) <= MAX_COMMAND_CHARS for s in processes)  # type: ignore
        assert [s[2] for s in families["gpumon_gpu_lost"]] == [0.0, 0.0, 1.0]  # type: ignore
        assert [s[2] for s in families["DCGM_FI_DEV_POWER_USAGE"]] == [math.inf]  # type: ignore
        clock.t += 1.0
    collector.close()


def test_one_render_per_reading_for_every_scraper(fake_nvml: FakeNvml) -> None:
    clock = Clock()
    collector = GpuCollector(NvmlSource, interval_s=1.0, clock=clock)
    exposition = Exposition(collector)
    first = exposition.body()
    assert exposition.body() is first and exposition.renders == 1 and collector.reads == 1
    assert gzip.decompress(exposition.body(gzipped=True)) == first
    clock.t += 1.0
    assert exposition.body() is not first and exposition.renders == 2 and collector.reads == 2
    collector.close()


@given(st.floats(allow_nan=True, allow_infinity=True))
def test_number_is_prometheus_clients_float_text(value: float) -> None:
    assert number(value) == floatToGoString(value)


@pytest.mark.parametrize("value", [0.0, -0.0, 999999.0, 1e6, 1234567.0, 1e15, 1e16, 1e21,
                                   85899345920.0, -5e10, 5e-7, math.inf, -math.inf, math.nan])
def test_number_edges(value: float) -> None:
    assert number(value) == floatToGoString(value)


def test_accepted_formats() -> None:
    assert accepts_text(None) and accepts_text("") and accepts_text(PROMETHEUS_ACCEPT)
    assert accepts_text("text/plain") and accepts_text("*/*")
    assert accepts_text("text/plain;version=0.0.4;q=0.3")
    assert not accepts_text("application/openmetrics-text;version=1.0.0")
    assert not accepts_text("text/plain;version=1.0.0")
    assert not accepts_text("application/openmetrics-text, text/plain;q=0")


def test_http_fast_text_gzip_openmetrics_and_name_filter() -> None:
    collector = GpuCollector(partial(SimulatedSource, n_gpus=2, seed=1), host="web")
    registry = CollectorRegistry(auto_describe=True)  # so that name[] has names to filter
    registry.register(collector)
    exposition = Exposition(collector)
    server, thread = serve("127.0.0.1", 0, make_app(exposition, registry))
    url = f"http://127.0.0.1:{server.server_address[1]}/metrics"

    def get(accept: str | None = None, encoding: str | None = None,
            query: str = "") -> tuple[str, str | None, bytes]:
        headers = {k: v for k, v in (("Accept", accept), ("Accept-Encoding", encoding)) if v}
        with urllib.request.urlopen(urllib.request.Request(url + query, headers=headers),
                                    timeout=10) as r:
            return r.headers["Content-Type"], r.headers["Content-Encoding"], r.read()

    try:
        ctype, enc, body = get(PROMETHEUS_ACCEPT)
        assert ctype == CONTENT_TYPE and enc is None and body == exposition.body()
        assert body == generate_latest(registry)  # the same reading, cached
        ctype, enc, zipped = get(PROMETHEUS_ACCEPT, "gzip")
        assert enc == "gzip" and gzip.decompress(zipped) == body
        assert get()[2] == body  # no Accept header: the text format
        ctype, _, om = get("application/openmetrics-text;version=1.0.0")
        assert ctype.startswith("application/openmetrics-text") and om.endswith(b"# EOF\n")
        _, _, one = get(PROMETHEUS_ACCEPT, query="?name[]=DCGM_FI_DEV_GPU_UTIL")
        assert [f[0] for f in parsed(one)] == ["DCGM_FI_DEV_GPU_UTIL"]  # prometheus_client's
        with pytest.raises(urllib.error.HTTPError) as post:  # prometheus_client's answer
            urllib.request.urlopen(urllib.request.Request(url, data=b"x"), timeout=10)
        assert post.value.code == 405
        post.value.close()
        assert exposition.renders == 1
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
        collector.close()
