"""The Topology window (View ▸ Topology…): how the GPUs of this machine are joined, as
``nvidia-smi topo -m`` shows it, with the data moving on the links now.

A matrix of the path between each pair of GPUs (X, NV#, PIX, PXB, PHB, NODE, SYS; ``gpumon
topo``'s codes, from the Snapshot's ``Topology``), each GPU's CPU affinity, NUMA affinity and
own NUMA id, and its current PCIe and NVLink rates (receive ↓, send ↑). A pair joined by its
own NVLinks shows their rate in its cell; links to NVSwitches (an HGX board: NV18 between
every pair) carry traffic to every GPU, so there a pair's share is not known and the GPU's
total at the right is what there is. Each cell's tooltip says what its code means and
whether the two GPUs can read each other's memory (P2P). The legend is under the matrix.

The window follows the snapshots while someone sees it and does nothing while no one does
(closed, minimised, covered where the system says so: ``seen.py``); it catches up from the
latest snapshot when seen again. The matrix is rebuilt only when the topology changes (it is
read about once a minute); each snapshot sets only the rate cells whose text changed. A
Prometheus source has no topology, and the window says so.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, QSize, Qt
from PySide6.QtGui import QAction, QFont
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QScrollArea,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from gpumon.i18n import N_, tr
from gpumon.telemetry.model.topology import (
    P2P_LEGEND,
    PATH_LEGEND,
    UNKNOWN,
    Topology,
    pair_rates,
)
from gpumon.telemetry.model.types import GpuSample, Snapshot
from gpumon.ui.widgets.close_keys import close_on_keys
from gpumon.ui.widgets.screen_fit import keep_on_screen, within_room
from gpumon.ui.widgets.seen import SeenWatch, window_seen
from gpumon.units import NA, format_bytes, format_clock

TITLE = N_("GPU topology")
OPTION_TEXT = N_("Topolog&y…")  # T is &Theme's
NO_TOPOLOGY_PROMETHEUS = N_("A Prometheus server does not carry how the GPUs are joined: run "
                            "gpumon (or 'gpumon topo') on the machine itself to see it.")
NOT_READ = N_("The topology has not been read yet.")
NO_GPUS = N_("No GPUs to show.")
READ_AT = N_("The topology was read at {time}; the rates are those of the latest reading.")
SIMULATED = N_("SIMULATED: these GPUs are simulated; no real GPU was read.")
SWITCH_NOTE = N_("Through NVSwitches: these links carry traffic to every GPU, so this pair's "
                 "own rate is not known (each GPU's NVLink total is at the right).")
NIC_NOTE = N_("NIC columns are not shown: NVML knows only the GPUs.")
AFFINITY = (N_("CPU Affinity"), N_("NUMA Affinity"), N_("GPU NUMA ID"))
RATES = (N_("PCIe ↓ / ↑"), N_("NVLink ↓ / ↑"))


def rate_text(rx: float | None, tx: float | None) -> str:
    """``12.80 MiB/s ↓ 4.60 MiB/s ↑``, N/A for a direction not known."""
    def one(v: float | None) -> str:
        return NA if v is None else format_bytes(v) + "/s"
    return f"{one(rx)} ↓  {one(tx)} ↑"


def gpu_rates(sample: GpuSample | None) -> tuple[str, str]:
    """A GPU's PCIe and NVLink rates now, receive then send."""
    if sample is None or sample.lost:
        return NA, NA
    pcie = rate_text(sample.pcie_rx_bytes_per_s, sample.pcie_tx_bytes_per_s)
    if sample.nvlink_rx_bytes_per_s is None and sample.nvlink_tx_bytes_per_s is None:
        return pcie, NA  # no NVLink (most PCIe cards): nothing to say, not 0
    return pcie, rate_text(sample.nvlink_rx_bytes_per_s, sample.nvlink_tx_bytes_per_s)


def path_meaning(code: str) -> str:
    """What a matrix code means, in words (the legend's line for NV#, with its count)."""
    if code.startswith("NV") and code[2:].isdigit():
        return tr("Connection traversing a bonded set of {n} NVLinks", n=code[2:])
    return next((tr(text) for c, text in PATH_LEGEND if c == code), tr("Unknown"))


def p2p_meaning(code: str) -> str:
    return next((tr(text) for c, text in P2P_LEGEND if c == code), tr("Unknown"))


class TopologyView(QWidget):
    """The window; ``show_snapshot`` with each snapshot (the window ignores it unseen)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent, Qt.WindowType.Window)
        self.setObjectName("topologyView")
        self.setWindowTitle(tr(TITLE))
        self._topology: Topology | None = None
        self._latest: Snapshot | None = None
        self._shown: Snapshot | None = None  # the snapshot the matrix shows
        self.note = QLabel()
        self.note.setObjectName("topologyNote")
        self.note.setWordWrap(True)
        self.table = QTableWidget()
        self.table.setObjectName("topologyTable")
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setWordWrap(False)
        for header in (self.table.horizontalHeader(), self.table.verticalHeader()):
            header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.legend = QLabel()
        self.legend.setObjectName("topologyLegend")
        self.legend.setTextFormat(Qt.TextFormat.PlainText)
        self.legend.setWordWrap(True)
        self.legend.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        self.legend.setText(self._legend_text())
        legend_box = QScrollArea()
        legend_box.setWidgetResizable(True)
        legend_box.setWidget(self.legend)
        self.splitter = QSplitter(Qt.Orientation.Vertical)
        self.splitter.addWidget(self.table)
        self.splitter.addWidget(legend_box)
        self.splitter.setChildrenCollapsible(False)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setSizes([3000, 1000])  # scaled to the real height: the matrix first
        layout = QVBoxLayout(self)
        layout.addWidget(self.note)
        layout.addWidget(self.splitter, 1)
        self.resize(within_room(self, QSize(1000, 560)))  # an 800 x 500 screen (1600 x 1000
        close_on_keys(self)  # at 200 %) had it 1002 x 562: its edges off the screen
        self._seen = SeenWatch(self, self._catch_up)

    # -- snapshots ----------------------------------------------------------------------------
    def show_snapshot(self, snap: Snapshot) -> None:
        """Show ``snap`` now if anyone sees the window, else keep it for when one does."""
        self._latest = snap
        if self.isVisible() and window_seen(self):
            self._show(snap)

    def _catch_up(self) -> None:
        if self._latest is not None and self._latest is not self._shown and window_seen(self):
            self._show(self._latest)

    def _show(self, snap: Snapshot) -> None:
        self._shown = snap
        topo = snap.topology
        if topo is None or not topo.places:
            self._set_matrix(None)
            if snap.machine.source_name == "Prometheus":
                self._set_note(tr(NO_TOPOLOGY_PROMETHEUS))
            else:
                self._set_note(tr(NO_GPUS) if not snap.gpus else tr(NOT_READ))
            return
        if topo is not self._topology:
            self._set_matrix(topo)
        when = format_clock(topo.read_at_s)
        note = tr(READ_AT, time=when)
        self._set_note(f"{tr(SIMULATED)} {note}" if snap.simulated else note)
        self._set_rates(topo, snap)

    # -- the matrix ---------------------------------------------------------------------------
    def _set_matrix(self, topo: Topology | None) -> None:
        """The codes, affinities and tooltips of ``topo``; the rate cells are left empty."""
        self._topology = topo
        self.table.setVisible(topo is not None)
        if topo is None:
            self.table.clear()
            self.table.setRowCount(0)
            self.table.setColumnCount(0)
            return
        n = len(topo.places)
        names = [f"GPU{p.index}" for p in topo.places]
        self.table.clear()
        self.table.setRowCount(n)
        self.table.setColumnCount(n + len(AFFINITY) + len(RATES))
        self.table.setHorizontalHeaderLabels(
            [*names, *(tr(t) for t in AFFINITY), *(tr(t) for t in RATES)])
        self.table.setVerticalHeaderLabels(names)
        bold = QFont(self.font())
        bold.setBold(True)
        for i, place in enumerate(topo.places):
            for j, other in enumerate(topo.places):
                code = topo.paths[i][j] if i < len(topo.paths) and j < len(topo.paths[i]) \
                    else UNKNOWN
                item = _cell(code or NA)
                tip = f"GPU{place.index} ↔ GPU{other.index}: {code or NA} = {path_meaning(code)}"
                if code.startswith("NV") and pair_rates(place, (), other.index) is None:
                    tip += "\n" + tr(SWITCH_NOTE)
                p2p = topo.p2p_read[i][j] if i < len(topo.p2p_read) and \
                    j < len(topo.p2p_read[i]) else UNKNOWN
                if i != j and p2p:
                    tip += "\n" + tr("P2P read: {code} = {meaning}", code=p2p,
                                     meaning=p2p_meaning(p2p))
                item.setToolTip(tip)
                if code.startswith("NV"):
                    item.setFont(bold)
                self.table.setItem(i, j, item)
            affinity = (place.cpu_affinity or NA, place.numa_affinity or NA,
                        NA if place.numa_id is None else str(place.numa_id))
            for k, text in enumerate(affinity):
                self.table.setItem(i, n + k, _cell(text))
            for k in range(len(RATES)):
                self.table.setItem(i, n + len(AFFINITY) + k, _cell(""))

    def _set_rates(self, topo: Topology, snap: Snapshot) -> None:
        """Each GPU's PCIe and NVLink rates, and each directly joined pair's NVLink rate."""
        n = len(topo.places)
        for i, place in enumerate(topo.places):
            sample = snap.sample_for(place.index)
            for k, text in enumerate(gpu_rates(sample)):
                _set_text(self.table.item(i, n + len(AFFINITY) + k), text)
            links = sample.nvlink_links if sample is not None and not sample.lost else ()
            for j, other in enumerate(topo.places):
                code = topo.paths[i][j] if i < len(topo.paths) and j < len(topo.paths[i]) \
                    else UNKNOWN
                rates = pair_rates(place, links, other.index) if i != j else None
                text = code or NA
                if rates is not None:
                    text += "  " + rate_text(*rates)
                _set_text(self.table.item(i, j), text)

    # -- text ---------------------------------------------------------------------------------
    def _set_note(self, text: str) -> None:
        if self.note.text() != text:
            self.note.setText(text)

    @staticmethod
    def _legend_text() -> str:
        lines = [tr("Legend:")]
        lines += [f"  {code:<4} = {tr(text)}" for code, text in PATH_LEGEND]
        lines += ["", tr("↓ receive, ↑ send: the data rates of the latest reading."),
                  tr(NIC_NOTE)]
        return "\n".join(lines)

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange and self._topology is not None:
            bold = QFont(self.font())  # the zoom: NV# cells keep their bold in the new size
            bold.setBold(True)
            for i in range(self.table.rowCount()):
                for j in range(self.table.rowCount()):
                    item = self.table.item(i, j)
                    if item is not None and item.text().startswith("NV"):
                        item.setFont(bold)


def _cell(text: str) -> QTableWidgetItem:
    item = QTableWidgetItem(text)
    item.setTextAlignment(Qt.AlignmentFlag.AlignCenter)
    return item


def _set_text(item: QTableWidgetItem | None, text: str) -> None:
    if item is not None and item.text() != text:  # a change repaints, and may resize
        item.setText(text)


class TopologyWindows(QObject):
    """The option: ``action`` opens the window (made on first use, a child of ``parent``, so
    it follows the zoom and the theme and closes with it); ``on_snapshot`` with every
    snapshot; ``latest()`` the snapshot to show at once when it opens."""

    def __init__(self, parent: QWidget, latest: Callable[[], Snapshot | None]) -> None:
        super().__init__(parent)
        self._parent = parent
        self._latest = latest
        self.view: TopologyView | None = None
        self.shared_actions: list[QAction] = []  # the main window's zoom keys, also here
        self.action = QAction(tr(OPTION_TEXT), parent)
        self.action.setObjectName("actionTopology")
        self.action.setToolTip(tr("How the GPUs are joined (nvidia-smi topo -m), with the "
                                  "PCIe and NVLink rates"))
        self.action.triggered.connect(self.open)

    def open(self) -> TopologyView:
        if self.view is None:
            self.view = TopologyView(self._parent)
            self.view.addActions(self.shared_actions)
        self.view.show()
        keep_on_screen(self.view)
        self.view.raise_()
        self.view.activateWindow()
        snap = self._latest()
        if snap is not None:
            self.view.show_snapshot(snap)
        return self.view

    def on_snapshot(self, snap: Snapshot) -> None:
        if self.view is not None:
            self.view.show_snapshot(snap)
