"""What the GPU table and the process table share: a flat model with titled columns that
reports which columns' longest text changed, and a view that fits only those columns and
is updated only while it can be seen (``FittedTableView.when_seen``).

A header in ResizeToContents mode measures every cell of a column (every role) on every
dataChanged; with a table updated every tick that was ~1000 ``data()`` calls a tick."""

from __future__ import annotations

from collections.abc import Callable, Sequence, Sized

from PySide6.QtCore import (
    QAbstractTableModel,
    QEvent,
    QModelIndex,
    QPersistentModelIndex,
    Qt,
    Signal,
    Slot,
)
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableView, QWidget

from gpumon.ui.widgets.next_frame import after_next_frame
from gpumon.ui.widgets.seen import SeenWatch, window_seen

Index = QModelIndex | QPersistentModelIndex
ROW_PADDING_PX = 6  # above and below the text: 22 px rows at 100 % with a 16 px font


def row_height(metrics: QFontMetrics) -> int:
    """A table row's height for a font: its line height and some padding, so rows grow with
    the zoom instead of clipping their text (rows stayed 22 px at 300 % before)."""
    return metrics.height() + ROW_PADDING_PX


def fit_rows(view: QTableView, least_rows: int = 1) -> None:
    """Rows of ``view`` as tall as its font needs (call again after a font change), and its
    least height the header with ``least_rows`` rows."""
    height = row_height(view.fontMetrics())
    header = view.verticalHeader()
    header.setMinimumSectionSize(min(header.minimumSectionSize(), height))
    header.setDefaultSectionSize(height)
    # At least the header and one whole row (a splitter pane sized at 100 % cut the only
    # row in half at 300 %), and the horizontal scroll bar when there is one.
    frame = 2 * view.frameWidth()
    view.setMinimumHeight(view.horizontalHeader().sizeHint().height() + least_rows * height
                          + frame
                          + view.horizontalScrollBar().sizeHint().height())


class TitledTableModel(QAbstractTableModel):
    """A flat table: subclasses set ``titles`` and keep their rows in ``_rows``."""

    titles: tuple[str, ...] = ()
    _rows: Sized
    widthsChanged = Signal(object)  # list[int]: columns whose longest text changed length

    def _note_widths(self, texts: Sequence[Sequence[str]], *, every: bool = False) -> None:
        """Emit ``widthsChanged`` for the columns whose longest text (in characters) differs
        from the last call's; ``every``: for all columns."""
        widths = [max((len(t[c]) for t in texts), default=0) for c in range(len(self.titles))]
        old: list[int] = getattr(self, "_widths", [])
        self._widths = widths
        changed = list(range(len(widths))) if every else [
            c for c, w in enumerate(widths) if c >= len(old) or w != old[c]]
        if changed:
            self.widthsChanged.emit(changed)

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.titles)

    def headerData(self, section: int, orientation: Qt.Orientation,
                   role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if (role == Qt.ItemDataRole.DisplayRole
                and orientation == Qt.Orientation.Horizontal and 0 <= section < len(self.titles)):
            return self.titles[section]
        return None


class FittedTableView(QTableView):
    """A read-only table of whole-row selection and rows as tall as the font (``row_height``)
    whose columns fit their contents, measured only when the model's ``widthsChanged`` names
    them (or the font changes); the last column stretches."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setAlternatingRowColors(True)
        self.verticalHeader().hide()
        self._least_rows = 1
        fit_rows(self)
        header = self.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(True)
        self._pending: Callable[[], None] | None = None  # the latest update, kept unseen
        self._seen_watch: SeenWatch | None = None  # made by the first when_seen

    def set_least_rows(self, rows: int) -> None:
        """Let a splitter squeeze the view down to its header and ``rows`` whole rows (1 by
        default; the Monitor's table 0, for graphs that lack the room)."""
        self._least_rows = rows
        fit_rows(self, rows)

    def when_seen(self, update: Callable[[], None]) -> None:
        """Run ``update`` (one tick's change of the model) now if the table can be seen;
        else keep it, replacing the one kept, and run it when the table is seen again (its
        tab shown, its window restored or exposed): no one pays for rows no one sees."""
        if self._seen_watch is None:
            self._seen_watch = SeenWatch(self, self._catch_up)
        if self.isVisible() and window_seen(self):
            self._pending = None
            update()
        else:
            self._pending = update

    def _catch_up(self) -> None:
        update = self._pending
        if update is not None and self.isVisible() and window_seen(self):
            self._pending = None
            update()

    def content_height(self, rows: int | None = None) -> int:
        """The height that shows the header and ``rows`` rows (default: every row) whole,
        with the horizontal scroll bar when the columns are wider than the view."""
        model = self.model()
        count = (model.rowCount() if model else 0) if rows is None else rows
        header = self.horizontalHeader()
        height = (header.sizeHint().height() + count * self.verticalHeader().defaultSectionSize()
                  + 2 * self.frameWidth())
        columns = [c for c in range(header.count()) if not header.isSectionHidden(c)]
        wide = sum(header.sectionSize(c) for c in columns[:-1]) + (
            header.sectionSizeHint(columns[-1]) if columns else 0)
        if wide > self.width() - 2 * self.frameWidth():
            height += self.horizontalScrollBar().sizeHint().height()
        return height

    def watch_widths(self, model: TitledTableModel) -> None:
        model.widthsChanged.connect(self.fit_columns)

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:  # zoom: every column measured again
            fit_rows(self, self._least_rows)
            # after the frame that answers the zoom key: measuring every cell of every
            # column was ~90 ms of that frame (8 GPUs and their processes, here)
            after_next_frame(self, self._fit_all_columns)

    def _fit_all_columns(self) -> None:
        model = self.model()
        self.fit_columns(list(range(model.columnCount() if model else 0)))

    @Slot(object)
    def fit_columns(self, columns: list[int]) -> None:
        model = self.model()
        last = (model.columnCount() if model else 0) - 1
        for c in columns:
            if c != last:  # the last column stretches
                self.resizeColumnToContents(c)
