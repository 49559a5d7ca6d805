"""The cluster's and the exporter's sentences in Simplified Chinese: a Prometheus server that
cannot be reached, an address that is not one, ``--prometheus URL --once``'s machine lines,
and ``gpumon exporter``'s option errors. The OS's own reason ("Connection refused") stays as
the OS wrote it."""

from __future__ import annotations

import socket

import pytest

from gpumon.cli.cluster import render_cluster
from gpumon.telemetry.cluster.promapi import PromClient, PromError, check_url
from gpumon.telemetry.cluster.prometheus import PrometheusSource
from gpumon.telemetry.model.types import (
    GpuInfo,
    GpuSample,
    HostView,
    MachineInfo,
    Snapshot,
    SourceState,
    SourceStatus,
)


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])  # closed again when the with block ends


def test_unreachable_server_in_chinese(chinese: None) -> None:
    url = f"http://127.0.0.1:{_closed_port()}"
    with pytest.raises(PromError) as err:
        PromClient(url, timeout_s=2.0).query("up")
    assert str(err.value).startswith(f"无法连接 {url} 上的 Prometheus 服务器（")
    source = PrometheusSource(url, timeout_s=2.0)
    assert source.open().message == f"正在从 {url} 读取 GPU。"
    snap = source.sample()
    assert snap.status.hint == "gpumon 会在每个采样间隔重试。"
    assert source.machine().host_name == f"{url} 上的 Prometheus"


def test_bad_address_in_chinese(chinese: None) -> None:
    with pytest.raises(ValueError, match="^'ftp://x' 不是 Prometheus 服务器的 http:// 或 "):
        check_url("ftp://x")


def test_once_machine_lines_in_chinese(chinese: None) -> None:
    info = GpuInfo(index=0, name="Tesla T4", uuid="GPU-1", pci_bus_id="0:1", simulated=True,
                   host="node-a")
    up = HostView("node-a", True, "", (info,), (GpuSample(0, 1.0, gpu_util_pct=5.0),))
    down = HostView("node-b", False, "Prometheus 无法抓取 node-b（node-b:9401）：抓取失败。")
    status = SourceStatus(SourceState.OK, "2 台机器上共 1 块 GPU。")
    snap = Snapshot(timestamp_s=1.0, machine=MachineInfo(host_name="P", source_name="p"),
                    status=status, hosts=(up, down))
    lines = render_cluster(snap).splitlines()
    assert "node-a（模拟）：1 块 GPU" in lines
    assert ("node-b：0 块 GPU，离线：Prometheus 无法抓取 node-b（node-b:9401）：抓取失败。"
            in lines)


def test_exporter_address_and_interval_errors_in_chinese(chinese: None) -> None:
    import argparse

    from gpumon.cli.exporter import _seconds, parse_listen

    with pytest.raises(argparse.ArgumentTypeError) as bad_address:
        parse_listen("nowhere")
    assert str(bad_address.value) == ("格式必须是 HOST:PORT，例如 127.0.0.1:9401 或 "
                                      "0.0.0.0:9401，收到的是 'nowhere'")
    with pytest.raises(argparse.ArgumentTypeError, match="^必须是 0.1 到 60 之间的秒数"):
        _seconds("99")
