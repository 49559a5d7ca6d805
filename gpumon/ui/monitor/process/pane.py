"""The process table with its filter box above it.

The box filters as one types (process_fields.matches: user, command, container/job, PID,
``gpu:N``); the table keeps sorting and selection while rows come and go.
"""

from __future__ import annotations

from PySide6.QtCore import QSize
from PySide6.QtWidgets import QLayout, QLineEdit, QVBoxLayout, QWidget

from gpumon.i18n import tr
from gpumon.ui.monitor.process.table import ProcessTable


class ProcessPane(QWidget):
    """``filter_edit`` over ``table``."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("processPane")
        self.table = ProcessTable(self)
        self.filter_edit = QLineEdit(self)
        self.filter_edit.setObjectName("processFilter")
        self.filter_edit.setClearButtonEnabled(True)
        self.filter_edit.setPlaceholderText(tr("Filter: user, command, container or job, "
                                               "gpu:N"))
        self.filter_edit.setAccessibleName(tr("Filter the processes"))
        self.filter_edit.textChanged.connect(self.table.proxy.set_query)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(self.filter_edit)
        layout.addWidget(self.table, 1)
        # No more height than the table alone asks for: at the largest zoom the box would
        # push the window past a small screen's height (it grew 14 px beyond 600 px); a
        # squeezed pane shrinks the table's rows, the box keeps its line.
        layout.setSizeConstraint(QLayout.SizeConstraint.SetNoConstraint)

    def minimumSizeHint(self) -> QSize:
        return self.table.minimumSizeHint().expandedTo(self.table.minimumSize())

    def least_height(self) -> int:
        """The filter box and the table's header with one row: the least height the Monitor
        page gives the list when the graphs need the rest."""
        layout = self.layout()
        spacing = layout.spacing() if layout is not None else 0
        return (self.filter_edit.sizeHint().height() + spacing
                + max(self.table.minimumHeight(), self.table.minimumSizeHint().height()))
