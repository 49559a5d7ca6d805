"""Remote GPUs in the cluster window get the same clock words and health mark as local ones,
and a remote XID reaches the event log: a real Prometheus scraping gpumon's exporter on the
fake NVML (the reasons bitmask, a pending row remap, an XID 79)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cluster"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "telemetry"))

from cluster_helpers import Cluster, prometheus_binary, wait_for
from fakenvml import FakeNvmlUnavailable, build_fake_nvml

from gpumon.telemetry.cluster.prometheus import PrometheusSource
from gpumon.ui.window.cluster_window import ClusterWindow

pytestmark = [
    pytest.mark.slow,  # a real Prometheus and an exporter process
    pytest.mark.xdist_group("test_health_cluster_window"),  # its module fixture: made once
]


@pytest.fixture
def cluster(tmp_path_factory: pytest.TempPathFactory,
            monkeypatch: pytest.MonkeyPatch) -> Iterator[Cluster]:
    prometheus_binary()
    try:
        lib = build_fake_nvml(tmp_path_factory.mktemp("fakenvml"))
    except FakeNvmlUnavailable as err:
        pytest.skip(f"fake NVML library not available: {err}")
    monkeypatch.setenv("FAKE_VALUES", "0:clock_events=68,0:remap_pending=1")
    monkeypatch.setenv("FAKE_XIDS", "1:79:0")
    c = Cluster(tmp_path_factory.mktemp("cluster"))
    try:
        c.add_fake_nvml("node-fake", lib, 2)
        c.start_server()
        c.wait_scraped(2)
        yield c
    finally:
        c.stop()


def test_remote_panels_have_the_words_the_mark_and_the_event(qtbot, cluster: Cluster
                                                             ) -> None:
    window = ClusterWindow(PrometheusSource(cluster.url, backfill_s=60), 0.3)
    qtbot.addWidget(window)
    window.resize(1400, 900)
    window.show()
    qtbot.waitUntil(lambda: len(window.gpu_grid.shown_panels()) == 2, timeout=15000)
    p0, p1 = window.gpu_grid.shown_panels()
    qtbot.waitUntil(lambda: p0.health.held.isVisibleTo(p0), timeout=15000)  # Monitor is behind
    assert p0.health.held.text() == "clocks held down: power cap, thermal"
    assert p0.health.mark.text() == "▲ warning"
    assert not p1.health.held.isVisibleTo(p1)  # nothing holds GPU 1's clocks down
    wait_for(lambda: len(cluster.query("DCGM_FI_DEV_XID_ERRORS > 0")) == 1, 30, "the XID")
    # an XID the exporter already had when the window first read it is said too
    qtbot.waitUntil(lambda: window.event_log.count() == 1, timeout=15000)
    assert "GPU 1: XID 79, GPU has fallen off the bus." in window.event_log.lines()[0]
    assert p1.health.mark.text() == "✖ error"
