"""The window on a Prometheus source: the cluster overview first, one machine's panels beside.

The Monitor page shows the machine in focus (the first, or the one clicked in the overview);
its graphs open with the history the server keeps (the source's range queries), so opening
a machine shows the last hour at once. Queries run in the sampling thread, as NVML does.
The playground stays on this computer and says so.
"""

from __future__ import annotations

from typing import Protocol

from PySide6.QtCore import Slot
from PySide6.QtWidgets import QWidget

from gpumon.i18n import N_, tr
from gpumon.interval import SAMPLING
from gpumon.telemetry.cluster.prometheus import PrometheusSource
from gpumon.telemetry.model.types import Snapshot, Source
from gpumon.ui.monitor.cluster_overview import ClusterOverview
from gpumon.ui.window.main_window import MainWindow
from gpumon.ui.window.presentation import note_over_page
from gpumon.ui.window.settings import Settings

OVERVIEW = N_("Overview")
NO_ANSWER = N_("No machines to show: the server has not answered (the note above says why).")
MONITOR = N_("Monitor")


def _monitor_of(host: str) -> str:
    """The Monitor tab's label while it shows ``host``."""
    return tr("Monitor: {host}", host=host)


class FleetSource(Source, Protocol):
    """A source of many machines (PrometheusSource, RemoteFleet): ``Snapshot.hosts`` has
    every machine, and the one in focus is the snapshot's own."""

    def set_focus(self, host: str | None) -> None: ...


class ClusterWindow(MainWindow):
    """MainWindow over a source of many machines, with the Overview page in front."""

    def __init__(self, source: FleetSource, interval_s: float = SAMPLING.default, *,
                 settings: Settings | None = None, parent: QWidget | None = None,
                 where: str | None = None) -> None:
        """``where``: what the playground's note names as the machines' origin (default:
        the Prometheus server's URL)."""
        self.source = source
        self._where = where
        super().__init__(lambda: source, interval_s, settings=settings, parent=parent)
        self.banner.simulate_button.hide()  # the choice here is the server, not a demo
        self.overview = ClusterOverview()
        self.tabs.add_keyed(self.overview, OVERVIEW, 0)
        self.tabs.setCurrentIndex(0)
        self.overview.hostActivated.connect(self.open_host)

    @Slot(str)
    def open_host(self, host: str) -> None:
        """Show ``host``'s panels: the next tick brings its GPUs and their history."""
        self.source.set_focus(host)
        index = self._monitor_index()
        self.tabs.setTabText(index, _monitor_of(host))
        self.tabs.setCurrentIndex(index)

    def _monitor_index(self) -> int:
        for i in range(self.tabs.count()):
            if self.tabs.key(i) == MONITOR:
                return i
        return 1

    # -- MainWindow's slots, extended --------------------------------------------------------
    @Slot(object)
    def _on_snapshot(self, snap: Snapshot) -> None:
        """The overview gets every machine; the panels and History the one in focus,
        with the server's history of it recorded first when the focus changed."""
        if snap.gpus and self.gpu_grid.set_gpus(snap.gpus, self.window_s):
            self.history.clear()
            self.gpuPanelsChanged.emit()
        if snap.backfill:  # the server's history of the machine in focus: MainWindow adds it
            self.history.clear()
        if snap.gpus:
            index = self._monitor_index()
            host = snap.gpus[0].host
            if self.tabs.tabText(index) != _monitor_of(host):
                self.tabs.setTabText(index, _monitor_of(host))
        super()._on_snapshot(snap)
        # Why there is no data is the banner's to say, above the tabs: once, not twice.
        self.overview.show_hosts(snap.hosts, "" if snap.status.usable else tr(NO_ANSWER))

    def _make_playground(self) -> QWidget:
        page = super()._make_playground()
        where = self._where
        if where is None and isinstance(self.source, PrometheusSource):
            where = self.source.client.shown_url
        return note_over_page(page, tr("The playground runs on this computer, with its own "
                                       "GPUs; the Monitor shows machines read from {url}.",
                                       url=where),
                              "playgroundStaysLocal", self.presentation)


