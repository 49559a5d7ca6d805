"""The window on machines reached over SSH: one machine's Monitor, or many in the overview.

One machine (``gpumon --ssh lab1``) is the ordinary window over a RemoteSource: every panel,
table and view as for local GPUs, the machine's name in the title and the header (the
snapshot's machine is named as the user named it), and a badge in the header that says
the Playground's and the Lesson's code runs there. Many machines are the cluster window over
a RemoteFleet: the overview in front, a machine's whole Monitor when it is opened. With one
machine the Playground and the Lesson run their kernel there too (``gpumon kernel --stdio``
over ssh, ``playground/client/ssh_kernel.py``), and the Playground says so.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Slot
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from gpumon.i18n import ntr, tr
from gpumon.playground.client.ssh_kernel import Remote
from gpumon.remote.fleet import RemoteFleet
from gpumon.remote.source import FALLBACK_SOURCE, RemoteSource
from gpumon.ssh.command import SshOptions
from gpumon.ssh.target import Target
from gpumon.telemetry.model.types import Snapshot
from gpumon.ui.window.cluster_window import ClusterWindow
from gpumon.ui.window.main_window import MainWindow
from gpumon.ui.window.presentation import keep_note_styled, note_over_page
from gpumon.ui.window.settings import Settings
from gpumon.untrusted import for_terminal


class RemoteWindow(MainWindow):
    """The main window over one machine's RemoteSource."""

    def __init__(self, target: Target, options: SshOptions, interval_s: float,
                 extra_args: tuple[str, ...] = (), *, settings: Settings | None = None
                 ) -> None:
        self.target = target
        self._options, self._extra_args = options, extra_args
        self.stream_interval_s = 0.0  # the interval the remote streams at now
        # the Playground's kernel runs there too (``gpumon kernel --stdio`` over ssh)
        self.kernel_remote = Remote(target, options)
        super().__init__(self._make_source, interval_s, settings=settings)
        self.banner.simulate_button.hide()  # the choice here is the machine, not a demo
        self.header.show_code_host(target.name)  # on every page, not only the Playground's
        # Where gpumon is not installed there: which fields nvidia-smi does not give.
        self.fallback_note = QLabel()
        self.fallback_note.setObjectName("remoteFallbackNote")
        self.fallback_note.setWordWrap(True)
        keep_note_styled(self.fallback_note, self.presentation)
        self.fallback_note.hide()
        central = self.centralWidget()
        layout = central.layout() if central is not None else None
        if isinstance(layout, QVBoxLayout):
            layout.insertWidget(2, self.fallback_note)  # under the header and the banner

    def _make_source(self) -> RemoteSource:
        """The machine's source at the window's interval (called in the sampling thread)."""
        self.stream_interval_s = self.interval_s
        return RemoteSource(self.target, self._options, self.interval_s,
                            extra_args=self._extra_args)

    @Slot(float)
    def set_interval(self, interval_s: float) -> None:
        """The remote reads at the window's pace: a new interval is a new stream (one
        reconnect; the history is kept)."""
        super().set_interval(interval_s)
        if self.sampling.running and self.interval_s != self.stream_interval_s:
            self.sampling.set_source(self._make_source)

    @Slot(object)
    def _on_snapshot(self, snap: Snapshot) -> None:
        super()._on_snapshot(snap)
        fallback = snap.machine.source_name == FALLBACK_SOURCE
        if fallback and self.fallback_note.text() != snap.status.message:
            self.fallback_note.setText(snap.status.message)
        self.fallback_note.setVisible(fallback)

    def _make_playground(self) -> QWidget:
        return self._with_note(super()._make_playground(), "playgroundRunsThere")

    def _make_lesson(self) -> QWidget:
        return self._with_note(super()._make_lesson(), "lessonRunsThere")

    def _with_note(self, page: QWidget, name: str) -> QWidget:
        """``page`` under a line saying where its code runs."""
        return note_over_page(page, tr("Code in the Playground and the Lesson runs on {host}, "
                                       "with its Python, PyTorch and GPUs, over SSH.",
                                       host=for_terminal(self.target.name)),
                              name, self.presentation)


def remote_window(targets: Sequence[Target], options: SshOptions, interval_s: float,
                  extra_args: tuple[str, ...], settings: Settings, *,
                  overview: bool = False) -> MainWindow:
    """The window for ``targets``: one machine's, or the overview of all of them (also of
    one, with ``overview``: machines are added to it later)."""
    if len(targets) == 1 and not overview:
        return RemoteWindow(targets[0], options, interval_s, extra_args, settings=settings)
    fleet = RemoteFleet(targets, options, interval_s, extra_args=extra_args)
    return ClusterWindow(fleet, interval_s, settings=settings,
                         where=ntr("{n} machine over SSH", "{n} machines over SSH",
                                   len(targets)))
