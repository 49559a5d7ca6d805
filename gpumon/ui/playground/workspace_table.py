"""The workspace table: named tensors and models, updated by difference.

The kernel sends the first few thousand entries and the count of the rest
(:class:`~gpumon.playground.data.outcome.WorkspacePage`). The model merges each page into the
rows it has, as KDAB hotspot's process list merges by PID instead of resetting: rows are
inserted and removed where names came and went (difflib matches the two lists of names), and
dataChanged names the rows whose entry changed, so a run that changes one name of 2,000
touches one row. No item per cell (a QTableWidget replacing 2,000 rows of items took 27 s,
measured); the view fits a column only when its longest text changed (table_model.py).
Below the table, "… and N more names".
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence

from PySide6.QtCore import QEvent, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QBrush, QColor, QFont
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from gpumon.i18n import N_, ntr, tr
from gpumon.playground.data.outcome import WorkspaceEntry, WorkspacePage
from gpumon.ui.playground.style import device_color, on_background, shape_text, tones
from gpumon.ui.widgets.table_model import FittedTableView, TitledTableModel
from gpumon.ui.widgets.theme import is_dark
from gpumon.units import format_bytes

Index = QModelIndex | QPersistentModelIndex
#: The table's columns (name, kind, shape, dtype, device, size), in the chosen language.
COLUMN_TITLES = (N_("name"), N_("kind"), N_("shape"), N_("dtype"), N_("device"), N_("size"))
#: The workspace's kinds as the table shows them (the kernel names them in English).
KINDS = {"tensor": N_("tensor"), "model": N_("model")}
#: Rows, besides those in view, whose text a column is fitted to.
SIZED_ROWS = 100
DEVICE, SIZE = 4, 5  # columns drawn apart: the device coloured and bold, the size right-aligned


def row_cells(e: WorkspaceEntry) -> tuple[str, ...]:
    """One entry as the table's six cells of text."""
    if e.shape is not None:
        shape = shape_text(e.shape)
    else:
        shape = "" if e.parameters is None else ntr(
            "{n} parameter", "{n} parameters", e.parameters)
    kind = tr(KINDS[e.kind]) if e.kind in KINDS else e.kind
    return (e.name, kind, shape, e.dtype or "", e.device, format_bytes(e.size_bytes))


def name_edits(old: Sequence[str], new: Sequence[str]) -> list[tuple[str, int, int, int, int]]:
    """How ``old`` names became ``new`` ones: difflib's opcodes (delete, insert, replace;
    ``equal`` left out), last first, so applying them in that order keeps indices valid."""
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    return [op for op in reversed(matcher.get_opcodes()) if op[0] != "equal"]


class WorkspaceModel(TitledTableModel):
    """The workspace's entries as rows; :meth:`set_entries` merges by name."""

    def __init__(self) -> None:
        super().__init__()
        self.titles = tuple(tr(c) for c in COLUMN_TITLES)
        self._rows: list[WorkspaceEntry] = []
        self._texts: list[tuple[str, ...]] = []
        self.dark = False
        self.rows_changed = 0  # rows inserted or changed so far: tests check the difference

    @property
    def entries(self) -> list[WorkspaceEntry]:
        return self._rows

    def set_entries(self, entries: Sequence[WorkspaceEntry]) -> None:
        """Show ``entries``: insert and remove the rows whose names came and went, and
        report the rows whose entry changed; the others are not touched."""
        new = list(entries)
        moved = False  # rows inserted or removed
        for _tag, i1, i2, j1, j2 in name_edits([e.name for e in self._rows],
                                               [e.name for e in new]):
            if i2 > i1:
                moved = True
                self.beginRemoveRows(QModelIndex(), i1, i2 - 1)
                del self._rows[i1:i2]
                del self._texts[i1:i2]
                self.endRemoveRows()
            if j2 > j1:
                self.beginInsertRows(QModelIndex(), i1, i1 + j2 - j1 - 1)
                self._rows[i1:i1] = new[j1:j2]
                self._texts[i1:i1] = [row_cells(e) for e in new[j1:j2]]
                self.endInsertRows()
                self.rows_changed += j2 - j1
                moved = True
        # Now the names match row for row: tell the view which rows' entries changed.
        changed = [r for r in range(len(new)) if self._rows[r] != new[r]]
        for first, last in _runs(changed):
            self._rows[first:last + 1] = new[first:last + 1]
            self._texts[first:last + 1] = [row_cells(e) for e in new[first:last + 1]]
            self.dataChanged.emit(self.index(first, 0), self.index(last, len(self.titles) - 1))
        self.rows_changed += len(changed)
        if changed or moved:
            self._note_widths(self._texts)

    def restyle(self, dark: bool) -> None:
        """The device colours for a light or a dark background."""
        self.dark = dark
        if self._rows:
            self.dataChanged.emit(self.index(0, DEVICE), self.index(len(self._rows) - 1, DEVICE),
                                  [Qt.ItemDataRole.ForegroundRole])

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if not index.isValid():
            return None
        row, col = index.row(), index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return self._texts[row][col]
        if col == DEVICE and role == Qt.ItemDataRole.ForegroundRole:
            return QBrush(QColor(on_background(device_color(self._rows[row].device), self.dark)))
        if col == DEVICE and role == Qt.ItemDataRole.FontRole:
            font = QFont()
            font.setBold(True)
            return font
        if col == SIZE and role == Qt.ItemDataRole.TextAlignmentRole:
            return Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
        return None


def _runs(rows: list[int]) -> list[tuple[int, int]]:
    """Consecutive rows as (first, last) pairs: one dataChanged per run."""
    runs: list[tuple[int, int]] = []
    for r in rows:
        if runs and runs[-1][1] == r - 1:
            runs[-1] = (runs[-1][0], r)
        else:
            runs.append((r, r))
    return runs


class WorkspaceTable(FittedTableView):
    """Named tensors and models: name, kind, shape, dtype, device (coloured), size."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("workspaceTable")
        self.setAccessibleName(tr("Workspace: named tensors and models"))
        self.setAlternatingRowColors(False)
        self.workspace = WorkspaceModel()
        self.workspace.dark = is_dark(self.palette())
        self.setModel(self.workspace)
        self.watch_widths(self.workspace)
        # A column is fitted to the rows in view and SIZED_ROWS more, not to all 2,000: Qt's
        # default (1000 rows) took 0.3 s on the first page of a big workspace (measured).
        self.horizontalHeader().setResizeContentsPrecision(SIZED_ROWS)

    @property
    def entries(self) -> list[WorkspaceEntry]:
        """The entries shown, in order."""
        return self.workspace.entries

    def set_entries(self, entries: Sequence[WorkspaceEntry]) -> None:
        self.workspace.set_entries(entries)

    def rowCount(self) -> int:
        return self.workspace.rowCount()

    def changeEvent(self, event: QEvent) -> None:
        """A theme switch: device colours light enough for a dark palette, or back."""
        super().changeEvent(event)
        dark = is_dark(self.palette())
        if event.type() == QEvent.Type.PaletteChange and dark != self.workspace.dark:
            self.workspace.restyle(dark)

    def row_texts(self) -> list[tuple[str, ...]]:
        """The table as text, for tests."""
        m = self.workspace
        return [tuple(str(m.index(r, c).data()) for c in range(m.columnCount()))
                for r in range(m.rowCount())]

    def device_color(self, row: int) -> str:
        """The device cell's colour in ``row`` (``#rrggbb``), for tests."""
        brush = self.workspace.index(row, DEVICE).data(Qt.ItemDataRole.ForegroundRole)
        return str(brush.color().name())


class WorkspaceView(QWidget):
    """The table and, when the kernel sent only the first rows, a line counting the rest."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("workspaceView")
        self.table = WorkspaceTable()
        self.more_label = QLabel()
        self.more_label.setObjectName("workspaceMore")
        self.more_label.setAccessibleName(tr("Names not listed in the workspace table"))
        self.more_label.hide()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.more_label)
        self._dark: bool | None = None
        self._restyle()

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            self._restyle()

    def _restyle(self) -> None:
        """The count of the rest in the faint tone of hints, for a light or dark palette."""
        dark = is_dark(self.palette())
        if dark != self._dark:
            self._dark = dark
            self.more_label.setStyleSheet(f"color: {tones(dark).faint}; padding-left: 4px;")

    def set_page(self, page: WorkspacePage) -> None:
        """Show the page's entries and count what it left out."""
        self.table.set_entries(page.entries)
        more = page.more
        self.more_label.setVisible(more > 0)
        if more:
            self.more_label.setText(ntr("… and {count} more name", "… and {count} more names",
                                        more, count=f"{more:,}"))
