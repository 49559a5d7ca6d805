"""File ▸ Open cluster…: the cluster view from the menu, not only from ``--prometheus``.

The entry asks for a Prometheus server's address, checks it as the command line does
(``promapi.check_url``: an http(s) address, no space, a numeric port), says what is wrong in
the dialog and asks again, and opens the cluster window on it beside this one. That window
is made by the ``make`` function the frame gives (``launch.py``): the main window's modules
never import the cluster window, which is a main window itself.

Credentials (``--prometheus-header``) are given on the command line only.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QInputDialog,
    QMainWindow,
    QMenu,
    QWidget,
)

from gpumon.i18n import tr
from gpumon.ui.widgets.checked_input import CheckedInput
from gpumon.ui.window.beside import show_beside

EXAMPLE = "http://localhost:9090"


def _check_url(text: str) -> str:
    """``promapi.check_url``, imported when first asked: it brings http.client and ssl,
    ~35 ms that a start without a cluster window need not pay."""
    from gpumon.telemetry.cluster.promapi import check_url

    return check_url(text)


class UrlDialog(CheckedInput[str]):
    """Asks for a Prometheus address; OK with one that is not usable says why and stays."""

    def __init__(self, parent: QWidget | None = None, text: str = "") -> None:
        super().__init__(parent, "clusterUrlDialog", tr("Open cluster"),
                         tr("The address of a Prometheus server that scrapes gpumon's exporter "
                            "or NVIDIA's dcgm-exporter, for example {example}:", example=EXAMPLE),
                         _check_url)
        self.setTextValue(text or EXAMPLE)

    @property
    def url(self) -> str | None:
        """The checked address, once accepted."""
        return self.value


class ClusterOpener(QObject):
    """The menu entry and the cluster windows it opened (closed when the application quits)."""

    def __init__(self, window: QMainWindow, menu: QMenu, before: QAction | None,
                 make: Callable[[str], QMainWindow]) -> None:
        super().__init__(window)
        self._window = window
        self._make = make
        self.windows: list[QMainWindow] = []
        self.action = QAction(tr("&Open cluster…"), window)
        self.action.setObjectName("actionOpenCluster")
        self.action.setToolTip(tr("The GPUs of every machine a Prometheus server knows, in a "
                                  "window of its own"))
        self.action.triggered.connect(lambda *_: self.ask())
        if before is None:
            menu.addAction(self.action)
        else:
            menu.insertAction(before, self.action)
            menu.insertSeparator(before)
        self.dialog: UrlDialog | None = None  # the open dialog (tests answer it)

    def ask(self) -> QMainWindow | None:
        """Ask for the address (modal) and open the cluster window on it."""
        self.dialog = UrlDialog(self._window)
        try:
            if self.dialog.exec() != QInputDialog.DialogCode.Accepted or self.dialog.url is None:
                return None
            return self.open(self.dialog.url)
        finally:
            self.dialog.deleteLater()
            self.dialog = None

    def open(self, url: str) -> QMainWindow:
        """A cluster window on ``url`` (checked), shown beside this one."""
        return show_beside(self._make(url), self.windows)


def install(window: QMainWindow, menu: QMenu, before: QAction | None,
            make: Callable[[str], QMainWindow]) -> ClusterOpener:
    """Put File ▸ Open cluster… in ``menu`` (before ``before``); ``make(url)`` builds the
    cluster window."""
    return ClusterOpener(window, menu, before, make)
