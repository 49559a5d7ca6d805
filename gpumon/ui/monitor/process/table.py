"""The GPU process table: a model that merges each new process list, and its view.

``ProcessModel.merge`` compares the new list with the rows it holds, keyed by (gpu, pid):
vanished rows go with beginRemoveRows, new ones come with beginInsertRows, changed ones
emit dataChanged over the cells whose text changed. Never a reset, so sorting, selection and
scrolling survive every tick (KDAB hotspot's ProcessModel::mergeProcesses, in spirit).
Columns are fitted to their contents only when a column's longest text changes
(``TitledTableModel.widthsChanged``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence

from PySide6.QtCore import (
    QModelIndex,
    QPersistentModelIndex,
    QPoint,
    QSortFilterProxyModel,
    Qt,
    Signal,
)
from PySide6.QtGui import QFont, QResizeEvent
from PySide6.QtWidgets import QAbstractItemView, QLabel, QMenu, QWidget

from gpumon.i18n import N_, tr
from gpumon.telemetry.model.types import GpuProcess
from gpumon.ui.monitor.process.fields import format_pct, format_run_time, matches, run_time_s
from gpumon.ui.widgets.table_model import FittedTableView, TitledTableModel
from gpumon.units import NA, format_bytes
from gpumon.untrusted import for_terminal

Index = QModelIndex | QPersistentModelIndex
Key = tuple[int, int]
SORT_ROLE = Qt.ItemDataRole.UserRole
SELF_SUFFIX = N_("(this app)")


def _name(p: GpuProcess) -> str:
    name = for_terminal(p.name or NA)
    return f"{name} {tr(SELF_SUFFIX)}" if p.is_self else name


def _number(value: float | None) -> float:
    """A numeric sort key as a float: PySide turns a Python int below 2**31 into a C++ int and
    one above into a long long, and QSortFilterProxyModel does not order those against each
    other (180 MiB sorted above 40 GiB). A double is one type, exact up to 2**53 (8 PiB)."""
    return -1.0 if value is None else float(value)


# (header, display text, sort key); sort keys are floats or strings, never None. GPU and
# PID read the same in every language; the other headers are marked N_() and shown
# translated (ProcessModel.headerData): an English "Type / Process name" beside 用户 / 显存
# read as a half-translated table. The text functions take the process and the time of the
# model's latest merge (the run time counts to it).
Text = Callable[[GpuProcess, float], str]
COLUMNS: tuple[tuple[str, Text, Callable[[GpuProcess], object]], ...] = (
    ("GPU", lambda p, _: str(p.gpu_index), lambda p: _number(p.gpu_index)),
    ("PID", lambda p, _: str(p.pid), lambda p: _number(p.pid)),
    (N_("Type"), lambda p, _: p.type.value, lambda p: p.type.value),
    (N_("Process name"), lambda p, _: _name(p), lambda p: (p.name or "").lower()),
    (N_("User"), lambda p, _: for_terminal(p.user or NA), lambda p: p.user or ""),
    (N_("GPU memory"), lambda p, _: format_bytes(p.gpu_mem_bytes),
     lambda p: _number(p.gpu_mem_bytes)),
    (N_("SM %"), lambda p, _: format_pct(p.sm_util_pct), lambda p: _number(p.sm_util_pct)),
    (N_("Memory bandwidth %"), lambda p, _: format_pct(p.mem_bw_util_pct),
     lambda p: _number(p.mem_bw_util_pct)),
    (N_("Encoder %"), lambda p, _: format_pct(p.enc_util_pct),
     lambda p: _number(p.enc_util_pct)),
    (N_("Decoder %"), lambda p, _: format_pct(p.dec_util_pct),
     lambda p: _number(p.dec_util_pct)),
    (N_("CPU %"), lambda p, _: format_pct(p.cpu_pct), lambda p: _number(p.cpu_pct)),
    (N_("Host memory"), lambda p, _: format_bytes(p.host_rss_bytes),
     lambda p: _number(p.host_rss_bytes)),
    (N_("Run time"), lambda p, now: format_run_time(run_time_s(p, now)),
     lambda p: -1.0e18 if p.started_s is None else -p.started_s),
    (N_("Container / job"), lambda p, _: for_terminal(p.container or ""),
     lambda p: p.container or ""),
    # another user's text: a carriage return or an escape shown as \r or \x1b, never obeyed
    # by the view nor dropped from sight (untrusted.py)
    (N_("Command"), lambda p, _: for_terminal(p.command or NA), lambda p: p.command or ""),
)
TITLES = tuple(title for title, *_ in COLUMNS)
MEMORY_COLUMN = TITLES.index("GPU memory")
RUN_COLUMN = TITLES.index("Run time")
NUMERIC_COLUMNS = frozenset({0, 1, 5, 6, 7, 8, 9, 10, 11, 12})
OUR_TITLES = frozenset(TITLES[2:])  # Type .. Command
DEFAULT_HIDDEN = ("Encoder %", "Decoder %")  # video work is rare on compute machines


def key_of(p: GpuProcess) -> Key:
    return (p.gpu_index, p.pid)


def texts_of(p: GpuProcess, now_s: float = 0.0) -> list[str]:
    return [text(p, now_s) for _, text, _ in COLUMNS]


class ProcessModel(TitledTableModel):
    """Rows of GpuProcess in arrival order; sort with a QSortFilterProxyModel on SORT_ROLE."""

    titles = TITLES

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._rows: list[GpuProcess] = []
        # each row's cell texts as of the latest merge: what a change is compared with and
        # what the column widths come from, made once per changed row (with 30 processes,
        # formatting every cell of every row twice a tick was most of the table's tick)
        self._texts: list[list[str]] = []
        self._now = 0.0  # time.time() of the latest merge: run times count to it

    def headerData(self, section: int, orientation: Qt.Orientation,
                   role: int = Qt.ItemDataRole.DisplayRole) -> object:
        """The titles in the chosen language (``titles`` keeps the English keys)."""
        title = super().headerData(section, orientation, role)
        return tr(title) if title in OUR_TITLES else title

    @property
    def processes(self) -> list[GpuProcess]:
        return list(self._rows)

    def process_at(self, row: int) -> GpuProcess:
        return self._rows[row]

    def merge(self, processes: Iterable[GpuProcess], now_s: float | None = None) -> None:
        """Make the rows equal ``processes`` with removes, inserts and dataChanged only;
        ``now_s``: the snapshot's time (default: now), which run times count to."""
        self._now = time.time() if now_s is None else now_s
        new: dict[Key, GpuProcess] = {}
        for p in processes:
            new.setdefault(key_of(p), p)  # a duplicate key keeps its first entry
        self._remove_missing(new)
        self._update_changed(new)
        held = {key_of(p) for p in self._rows}
        added = [p for k, p in new.items() if k not in held]
        if added:
            first = len(self._rows)
            self.beginInsertRows(QModelIndex(), first, first + len(added) - 1)
            self._rows.extend(added)
            self._texts.extend(texts_of(p, self._now) for p in added)
            self.endInsertRows()
        self._note_widths(self._texts)

    def _remove_missing(self, new: dict[Key, GpuProcess]) -> None:
        i = len(self._rows) - 1
        while i >= 0:  # from the bottom, one call per contiguous run
            if key_of(self._rows[i]) in new:
                i -= 1
                continue
            j = i
            while j > 0 and key_of(self._rows[j - 1]) not in new:
                j -= 1
            self.beginRemoveRows(QModelIndex(), j, i)
            del self._rows[j:i + 1]
            del self._texts[j:i + 1]
            self.endRemoveRows()
            i = j - 1

    def _update_changed(self, new: dict[Key, GpuProcess]) -> None:
        """dataChanged for each changed row, over the columns whose text changed."""
        run = COLUMNS[RUN_COLUMN][1]
        for i, old in enumerate(self._rows):
            fresh = new[key_of(old)]
            shown = self._texts[i]
            if fresh == old:  # only its run time can read differently: one cell compared
                text = run(fresh, self._now)
                if text != shown[RUN_COLUMN]:
                    shown[RUN_COLUMN] = text
                    cell = self.index(i, RUN_COLUMN)
                    self.dataChanged.emit(cell, cell)
                continue
            self._rows[i] = fresh
            texts = self._texts[i] = texts_of(fresh, self._now)
            cols = [c for c, (a, b) in enumerate(zip(texts, shown, strict=True)) if a != b]
            if fresh.is_self != old.is_self or fresh.command != old.command:
                cols = list(range(len(COLUMNS)))  # font or tooltip of the whole row
            if cols:
                self.dataChanged.emit(self.index(i, min(cols)), self.index(i, max(cols)))

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if not index.isValid() or not 0 <= index.row() < len(self._rows):
            return None
        p = self._rows[index.row()]
        col = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[col][1](p, self._now)
        if role == SORT_ROLE:
            return COLUMNS[col][2](p)
        if role == Qt.ItemDataRole.FontRole and p.is_self:
            font = QFont()
            font.setBold(True)
            return font
        if role == Qt.ItemDataRole.ToolTipRole:
            return for_terminal(p.command) if p.command else None
        if role == Qt.ItemDataRole.TextAlignmentRole and col in NUMERIC_COLUMNS:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None


class ProcessFilter(QSortFilterProxyModel):
    """Sorts on SORT_ROLE and keeps the rows that match ``query`` (process_fields.matches)."""

    def __init__(self, model: ProcessModel) -> None:
        super().__init__(model)
        self._model = model
        self.query = ""

    def set_query(self, query: str) -> None:
        if query == self.query:
            return
        if not hasattr(self, "beginFilterChange"):  # Qt before 6.9
            self.query = query
            self.invalidateFilter()
            return
        self.beginFilterChange()  # Qt 6.10 deprecates invalidateRowsFilter for this pair
        self.query = query
        self.endFilterChange(QSortFilterProxyModel.Direction.Rows)

    def filterAcceptsRow(self, row: int, parent: Index) -> bool:
        return not self.query or matches(self._model.process_at(row), self.query)


class ProcessTable(FittedTableView):
    """Sortable view of a ProcessModel; ``process_model`` and ``proxy`` are public. Right-click
    on the header shows or hides columns (``hiddenColumnsChanged`` gives their titles)."""

    hiddenColumnsChanged = Signal(object)  # list[str]: the English titles now hidden

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("processTable")
        self.setAccessibleName(tr("GPU processes"))
        self.process_model = ProcessModel(self)
        self.proxy = ProcessFilter(self.process_model)
        self.proxy.setSourceModel(self.process_model)
        self.proxy.setSortRole(SORT_ROLE)
        self.proxy.setDynamicSortFilter(True)
        self.setModel(self.proxy)
        self.setSortingEnabled(True)
        self.sortByColumn(MEMORY_COLUMN, Qt.SortOrder.DescendingOrder)
        header = self.horizontalHeader()
        header.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        header.customContextMenuRequested.connect(self._on_header_menu)
        self.set_hidden_columns(DEFAULT_HIDDEN)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setWordWrap(False)
        self.watch_widths(self.process_model)
        # Why the table may be empty (or short): a driver without process lists.
        self.note = QLabel(self.viewport())
        self.note.setObjectName("processNote")
        self.note.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.note.setStyleSheet("color: #777; font-style: italic; padding: 4px;")
        self.note.hide()
        self.process_model.rowsInserted.connect(self._place_note)
        self.process_model.rowsRemoved.connect(self._place_note)

    def show_processes(self, processes: Sequence[GpuProcess], now_s: float) -> None:
        """The rows become ``processes`` now, or when the table is seen again."""
        self.when_seen(lambda: self.process_model.merge(processes, now_s))

    def set_note(self, text: str) -> None:
        """Show ``text`` in the table (centred when it has no rows, at its foot otherwise);
        "" hides it. Set on every tick: does nothing when unchanged."""
        if text == self.note.text() and self.note.isVisible() == bool(text):
            return
        self.note.setText(text)
        self.note.setVisible(bool(text))
        self._place_note()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._place_note()

    def _place_note(self) -> None:
        if not self.note.isVisible():
            return
        area = self.viewport().rect()
        if self.process_model.rowCount() == 0:
            self.note.setGeometry(area)
        else:
            height = self.note.sizeHint().height()
            self.note.setGeometry(area.left(), area.bottom() - height + 1, area.width(), height)

    def hidden_columns(self) -> list[str]:
        return [t for c, t in enumerate(TITLES) if self.isColumnHidden(c)]

    def set_hidden_columns(self, titles: Iterable[str]) -> None:
        """Hide the columns titled ``titles`` (English keys; unknown ones are ignored), show
        the others; one column always stays."""
        hidden = set(titles) & set(TITLES)
        if len(hidden) == len(TITLES):
            hidden.discard("PID")
        for c, title in enumerate(TITLES):
            self.setColumnHidden(c, title in hidden)

    def header_menu(self) -> QMenu:
        """A checkable entry per column; the last visible one cannot be unchecked."""
        menu = QMenu(self)
        shown = len(TITLES) - len(self.hidden_columns())
        for c in range(len(TITLES)):
            action = menu.addAction(str(self.process_model.headerData(
                c, Qt.Orientation.Horizontal)))
            action.setCheckable(True)
            action.setChecked(not self.isColumnHidden(c))
            action.setEnabled(self.isColumnHidden(c) or shown > 1)
            action.toggled.connect(lambda on, c=c: self._show_column(c, on))
        return menu

    def _show_column(self, column: int, shown: bool) -> None:
        self.setColumnHidden(column, not shown)
        if shown:
            self.resizeColumnToContents(column)
        self.hiddenColumnsChanged.emit(self.hidden_columns())

    def _on_header_menu(self, pos: QPoint) -> None:
        self.header_menu().exec(self.horizontalHeader().mapToGlobal(pos))

    def selected_keys(self) -> list[Key]:
        """(gpu, pid) of the selected rows."""
        rows = {self.proxy.mapToSource(i).row() for i in self.selectionModel().selectedRows()}
        procs = self.process_model.processes
        return [key_of(procs[r]) for r in sorted(rows)]
