"""What the GPU table and the process table share: a flat model with titled columns."""

from __future__ import annotations

from collections.abc import Sized

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt

Index = QModelIndex | QPersistentModelIndex


class TitledTableModel(QAbstractTableModel):
    """A flat table: subclasses set ``titles`` and keep their rows in ``_rows``."""

    titles: tuple[str, ...] = ()
    _rows: Sized

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008, N802
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008, N802
        return 0 if parent.isValid() else len(self.titles)

    def headerData(self, section: int, orientation: Qt.Orientation,  # noqa: N802
                   role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if (role == Qt.ItemDataRole.DisplayRole
                and orientation == Qt.Orientation.Horizontal and 0 <= section < len(self.titles)):
            return self.titles[section]
        return None
