"""``gpumon --exporter URL,...``: the machines of real exporters read straight from their
/metrics, with no Prometheus: gpumon exporters, a dcgm-exporter's real page, and an exporter
that does not answer (its GPUs kept, shown lost, with the reason)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from cluster_helpers import DCGM_PAGES, ROOT, Cluster, free_port

from gpumon.telemetry.cluster.exporters import ExporterSource, metrics_url
from gpumon.telemetry.model.types import SourceState

pytestmark = pytest.mark.slow  # exporter processes: seconds


@pytest.fixture
def exporters(tmp_path: Path) -> Iterator[Cluster]:
    cluster = Cluster(tmp_path)  # its exporters only: no server is started
    try:
        cluster.add_simulated("node-a", 2, seed=1)
        cluster.add_simulated("node-b", 3, seed=2)
        cluster.add_static("dcgm", DCGM_PAGES / "b200_node_a.prom")
        yield cluster
    finally:
        cluster.stop()


def urls(cluster: Cluster, *names: str) -> list[str]:
    return [f"http://{cluster.instance(n)}" for n in names]


def test_machines_from_their_exporters(exporters: Cluster) -> None:
    dead = f"http://127.0.0.1:{free_port()}"
    source = ExporterSource([*urls(exporters, "node-a", "node-b"), dead], timeout_s=2.0)
    try:
        source.open()
        snap = source.sample()
        assert snap.status.state is SourceState.OK
        up = {h.host: len(h.gpus) for h in snap.hosts if h.up}
        assert up == {"node-a": 2, "node-b": 3}
        assert [len(s.samples) for s in snap.hosts if s.host == "node-a"] == [2]
        assert snap.gpus and snap.gpus[0].host == "node-a"  # the first machine in focus
        source.set_focus("node-b")
        snap = source.sample()
        assert len(snap.samples) == 3 and snap.gpus[0].host == "node-b"
        assert all(s.gpu_util_pct is not None for s in snap.samples)
        # node-a's exporter stops: its GPUs stay, lost, with why
        exporters.exporters["node-a"][0].terminate()
        exporters.exporters["node-a"][0].wait(10)
        snap = source.sample()
        (node_a,) = [h for h in snap.hosts if h.host == "node-a"]
        assert not node_a.up and len(node_a.gpus) == 2
        assert all(s.lost for s in node_a.samples)
        assert "127.0.0.1" in node_a.message
    finally:
        source.close()


def test_a_dcgm_exporters_page_is_read_too(exporters: Cluster) -> None:
    source = ExporterSource(urls(exporters, "dcgm"))
    try:
        snap = source.sample()
        (host,) = snap.hosts
        assert host.host == "node-a" and host.up and len(host.gpus) == 1
        assert host.gpus[0].name.startswith("NVIDIA B200")
    finally:
        source.close()


def test_once_prints_each_machine(exporters: Cluster) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "gpumon", "--exporter", ",".join(urls(exporters, "node-a",
                                                                       "node-b")), "--once"],
        capture_output=True, text=True, timeout=60,
        env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert done.returncode == 0, done.stderr
    assert "node-a (simulated): 2 GPUs" in done.stdout
    assert "node-b (simulated): 3 GPUs" in done.stdout


def test_the_metrics_path_is_added_only_when_none_is_given() -> None:
    assert metrics_url("http://n1:9401") == "http://n1:9401/metrics"
    assert metrics_url("http://n1:9401/") == "http://n1:9401/metrics"
    assert metrics_url("https://n1/gpu/metrics") == "https://n1/gpu/metrics"
