"""The monitor's readouts in Simplified Chinese: the hover line, a panel's readout line and
tooltip, the status line and the simulated source's sentences, word for word."""

from __future__ import annotations

import dataclasses
import math
import time

from gpumon.telemetry.model.metrics import TIME_KEY
from gpumon.telemetry.model.readouts import (
    extra_readouts,
    format_readout,
    readout_line,
    status_summary,
)
from gpumon.telemetry.model.types import GpuSample
from gpumon.telemetry.sources.sampler import Sampler
from gpumon.telemetry.sources.simulated import SimulatedFaults, SimulatedSource
from gpumon.units import GIB, MIB


def test_hover_readout_in_chinese(chinese: None) -> None:
    t = time.mktime((2026, 1, 2, 14, 3, 12, 0, 0, -1))
    values = {TIME_KEY: t, "mem_used_bytes": 12.34 * GIB, "gpu_util_pct": 45.0,
              "mem_util_pct": math.nan, "temperature_c": 61.0, "power_w": 123.4,
              "torch_allocated_bytes": 2 * GIB, "self_mem_bytes": 512 * MIB}
    assert format_readout(1, t + 12.3, values) == (
        "GPU 1，14:03:12（\u221212.3 s）：已用显存 12.34 GiB · GPU 利用率 45 % · "
        "显存控制器利用率 N/A · 温度 61 °C · 功耗 123 W · torch 已分配 2.00 GiB · "
        "gpumon 自身占用的显存 512.00 MiB")
    assert format_readout(3, 0.0, {}) == "GPU 3：此时没有数据"


def test_panel_readout_line_and_tooltip_in_chinese(chinese: None) -> None:
    s = GpuSample(0, 1.0, temperature_c=61.0, power_w=120.0, power_limit_w=250.0,
                  fan_pct=40.0, sm_clock_mhz=1410.0, mem_clock_mhz=1215.0, pstate="P2",
                  mem_free_bytes=4 * GIB, mem_reserved_bytes=512 * MIB,
                  failed_reads=("nvmlDeviceGetEncoderUtilization: Not Supported",))
    assert "".join(text for text, _ in readout_line(s)) == (
        "温度 61 °C · 功耗 120 / 250 W · 风扇 40 % · SM 1410 MHz · 显存 1215 MHz · 性能状态 P2")
    assert extra_readouts(s).splitlines() == [
        "驱动保留显存：0.50 GiB", "空闲显存：4.00 GiB", "PCIe 接收：N/A", "PCIe 发送：N/A",
        "编码器：N/A", "解码器：N/A", "能耗：N/A", "显存温度：N/A",
        "以下读数本次为 N/A，因为 NVML 读取失败：",
        "  nvmlDeviceGetEncoderUtilization: Not Supported"]  # NVML's own words stay


def test_status_line_in_chinese(chinese: None) -> None:
    src = SimulatedSource(3, seed=1)
    assert src.open().message == "这里的 GPU 都是模拟的，没有读取任何真实 GPU。"
    snap = src.sample()
    snap = dataclasses.replace(snap, read_duration_s=0.0123, samples=(
        dataclasses.replace(snap.samples[0], lost=True), *snap.samples[1:]))
    assert status_summary(snap, 0.5) == "3 块 GPU · 1 块已丢失 · 读取耗时 12 ms · 每 0.5 s 一次"


def test_lost_simulated_gpu_and_failed_source_in_chinese(chinese: None) -> None:
    clock = [0.0]
    src = SimulatedSource(2, seed=1, clock=lambda: clock[0],
                          faults=SimulatedFaults(lost_after_s={1: 2.0}))
    src.open()
    clock[0] = 3.0
    lost = src.sample().sample_for(1)
    assert lost is not None and lost.message == (
        "模拟 GPU 1 在启动 2 s 后从总线上掉线（GPU is lost）；其他 GPU 照常运行。")

    class Broken(SimulatedSource):
        def sample(self, include_slow: bool = True):
            raise RuntimeError("boom")

    snap = Sampler(Broken(1)).tick()
    assert (snap.status.message, snap.status.hint) == (
        "读取 GPU 失败（RuntimeError: boom）。", "gpumon 会在下一次采样时重试。")


def test_english_is_unchanged_by_the_catalogue() -> None:
    """The same calls in English: the msgids are the English text."""
    assert format_readout(3, 0.0, {}) == "GPU 3: no data at this time"
    assert "".join(t for t, _ in readout_line(None)).endswith(" · Perf N/A")
