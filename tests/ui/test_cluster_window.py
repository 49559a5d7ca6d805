"""The window on a Prometheus source: the overview of every machine, a click that opens one
machine's panels with the server's history, the playground's note, and a hung server that
never freezes the window. Against a real Prometheus where the test says so."""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, Qt, QTimer
from PySide6.QtWidgets import QLabel

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cluster"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "telemetry"))

from cluster_helpers import Cluster, prometheus_binary
from scripted_http import ScriptedServer

from gpumon.telemetry.cluster.prometheus import PrometheusSource
from gpumon.telemetry.model.types import Snapshot
from gpumon.ui.window.cluster_window import ClusterWindow

pytestmark = [
    pytest.mark.slow,  # real servers or subprocesses: seconds each (docs/development.md)
    pytest.mark.xdist_group("test_cluster_window"),  # its module fixture: made once
]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    prometheus_binary()
    c = Cluster(tmp_path_factory.mktemp("cluster"))
    try:
        c.add_simulated("node-a", 2, seed=1)
        c.add_simulated("node-b", 3, seed=2)
        c.start_server()
        c.wait_scraped(5)
        yield c
    finally:
        c.stop()


def make(qtbot, source: PrometheusSource, interval_s: float = 0.3) -> ClusterWindow:
    window = ClusterWindow(source, interval_s)
    qtbot.addWidget(window)
    window.resize(1400, 900)
    window.show()
    return window


def test_overview_then_a_click_opens_that_machines_panels(qtbot, cluster: Cluster) -> None:
    window = make(qtbot, PrometheusSource(cluster.url, backfill_s=120))
    heatmap = window.overview.heatmap
    qtbot.waitUntil(lambda: len(heatmap.hosts) == 2, timeout=15000)
    assert window.tabs.tabText(window.tabs.currentIndex()) == "Overview"
    assert window.overview.summary.text().startswith("2 machines, 5 GPUs")
    assert heatmap.frames > 0
    # The first machine is in focus before any click.
    qtbot.waitUntil(lambda: len(window.gpu_grid.shown_panels()) == 2, timeout=15000)
    # Click node-b's row: the Monitor page shows its three GPUs, titled with the host.
    row = heatmap.row_height()
    qtbot.mouseClick(heatmap, Qt.MouseButton.LeftButton, pos=QPoint(10, row + row // 2))
    assert window.tabs.tabText(window.tabs.currentIndex()) == "Monitor: node-b"
    qtbot.waitUntil(lambda: len(window.gpu_grid.shown_panels()) == 3, timeout=15000)
    panel = window.gpu_panel(0)
    assert panel is not None and "node-b · GPU 0" in panel.title.text()
    # The header names the machine and counts as the overview does (it said "3 GPUs" beside
    # the overview's 5, issue 54 item 11).
    qtbot.waitUntil(lambda: window.header.status_line.text().startswith(
        "node-b: 3 GPUs of 5 on 2 machines · "), timeout=15000)
    # Its history came from the server's range queries: more points than ticks so far.
    qtbot.waitUntil(lambda: window.history.count(0) >= 3, timeout=15000)
    assert window.history.gpu_indices() == [0, 1, 2]  # only what is drawn is kept
    assert window.latest_snapshot is not None
    assert [h.host for h in window.latest_snapshot.hosts] == ["node-a", "node-b"]


def test_playground_says_it_stays_local(qtbot, cluster: Cluster) -> None:
    window = make(qtbot, PrometheusSource(cluster.url))
    note = window.playground.findChild(QLabel, "playgroundStaysLocal")
    assert note is not None and note.isVisibleTo(window.playground)
    assert note.text() == ("The playground runs on this computer, with its own GPUs; the "
                           f"Monitor shows machines read from {cluster.url}.")


def test_a_hung_server_never_freezes_the_window(qtbot) -> None:
    """Each query hangs; the source gives up after 1 s, in the sampling thread: the GUI
    thread keeps running its timers meanwhile, and the banner says what happened."""
    with ScriptedServer(lambda _: (200, "application/json", b"{}", 30.0)) as server:
        source = PrometheusSource(server.url, timeout_s=1.0)
        reading = threading.Event()  # set while the sampling thread waits on the server
        sample = source.sample

        def watched(include_slow: bool = True) -> Snapshot:
            reading.set()
            try:
                return sample(include_slow)
            finally:
                reading.clear()

        source.sample = watched  # type: ignore[method-assign]
        window = make(qtbot, source, interval_s=0.5)
        beats: list[bool] = []  # each beat of a GUI-thread timer: during a query or not
        timer = QTimer()
        timer.setInterval(20)
        timer.timeout.connect(lambda: beats.append(reading.is_set()))
        timer.start()
        try:  # the GUI thread never waited on HTTP: its timer beats while a query hangs
            qtbot.waitUntil(lambda: window.banner.isVisible() and beats.count(True) > 20,
                            timeout=10000)
        finally:
            timer.stop()
        assert window.banner.message.text() == (
            f"The Prometheus server at {server.url} did not answer within 1 s.")
        assert server.url not in window.overview.summary.text()  # the banner says it, once
        window.close()


def test_a_dcgm_exporter_beside_gpumon_in_the_window(qtbot, tmp_path_factory) -> None:
    """gpumon's exporter and two real dcgm-exporter pages that report one GPU, all with the
    host name node-a: the overview shows two machines; the dcgm machine's panel names the B200
    with the page's numbers, its duplicate, and the driver the page's label gives."""
    from cluster_helpers import DCGM_PAGES

    prometheus_binary()
    c = Cluster(tmp_path_factory.mktemp("cluster"))
    try:
        c.add_simulated("node-a", 2, seed=1)
        c.add_static("dcgm", DCGM_PAGES / "b200_node_a.prom")
        c.add_static("dcgm-old", DCGM_PAGES / "b200_driver_version.prom")
        c.start_server()
        c.wait_scraped(4, metric="DCGM_FI_DEV_GPU_TEMP")
        window = make(qtbot, PrometheusSource(c.url, backfill_s=60))
        heatmap = window.overview.heatmap
        qtbot.waitUntil(lambda: len(heatmap.hosts) == 2, timeout=15000)
        rows = [h.host for h in heatmap.hosts]
        dcgm_row = next(i for i, h in enumerate(rows) if "NVIDIA B200" in
                        heatmap.hosts[i].gpus[0].name)
        assert rows[1 - dcgm_row] == f"node-a ({c.instance('node-a')})"
        row = heatmap.row_height()
        qtbot.mouseClick(heatmap, Qt.MouseButton.LeftButton,
                         pos=QPoint(10, dcgm_row * row + row // 2))
        qtbot.waitUntil(lambda: window.gpu_panel(0) is not None
                        and "NVIDIA B200" in window.gpu_panel(0).title.text(), timeout=15000)
        panel = window.gpu_panel(0)
        assert "also reported by" in panel.title.text()
        assert len(window.gpu_grid.shown_panels()) == 1
        qtbot.waitUntil(lambda: "595.58" in window.header.machine_label.text(), timeout=15000)
        snap = window.latest_snapshot
        assert snap is not None and snap.samples[0].temperature_c == 41
        assert snap.samples[0].power_w == 77 and snap.samples[0].mem_used_bytes == 1024 * 2**20
        window.close()
    finally:
        c.stop()
