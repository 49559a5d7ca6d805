"""File ▸ Open cluster… reaches the cluster view: it asks for a Prometheus address, checks it
as the command line does (saying why and asking again), and opens the cluster window beside
this one at its zoom and theme, at 100 % and 300 %."""

from __future__ import annotations

import socket

import pytest
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from gpumon.ui.window import launch, open_cluster
from gpumon.ui.window.cluster_window import ClusterWindow

pytestmark = pytest.mark.usefixtures("restore_app_look")


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize("zoom", [1.0, 3.0])
def test_file_open_cluster_asks_checks_and_opens_the_cluster_window(
        qtbot, make_window, zoom: float) -> None:
    w = make_window()
    w.presentation.set_zoom(zoom)
    w.presentation.set_theme("dark")
    opener = open_cluster.install(w, w.menus.file_menu, w.menus.actions["actionQuit"],
                                  lambda url: launch.cluster_window_for(url, w))
    texts = [a.text() for a in w.menus.file_menu.actions()]
    assert texts.index("&Open cluster…") == texts.index("&Quit") - 2  # then a line, Quit
    keys = [t[t.index("&") + 1].lower() for t in texts if "&" in t]
    assert len(keys) == len(set(keys)), texts  # Alt+F, O: one entry per letter
    url = f"http://127.0.0.1:{_closed_port()}"
    said: list[str] = []

    def answer() -> None:
        dialog = opener.dialog
        assert dialog is not None and dialog.isVisible()
        dialog.setTextValue("prometheus:9090")  # no scheme: refused, with the reason
        dialog.accept()
        said.append(dialog.labelText())
        assert dialog.isVisible()  # still asking
        dialog.setTextValue(url + "/")
        dialog.accept()

    QTimer.singleShot(0, answer)
    opener.action.trigger()  # the dialog is modal: answered above
    assert len(said) == 1 and "'prometheus:9090' is not an http:// or https:// address" in said[0]
    assert len(opener.windows) == 1
    cluster = opener.windows[0]
    qtbot.addWidget(cluster)
    assert isinstance(cluster, ClusterWindow) and cluster.isVisible()
    assert cluster.source.client.url == url
    assert cluster.presentation.zoom == zoom and cluster.presentation.theme.name == "dark"
    assert cluster.tabs.tabText(cluster.tabs.currentIndex()) == "Overview"
    qtbot.waitUntil(cluster.banner.isVisible, timeout=10000)
    cluster.close()
    QApplication.processEvents()


def test_the_command_line_opens_the_same_cluster_window(qtbot, monkeypatch) -> None:
    """``gpumon --prometheus URL`` hands the cluster window to launch.run (replaced here)."""
    from gpumon.cli.main import main
    from gpumon.ui.window.settings import Settings

    made: list[ClusterWindow] = []

    def run(simulate: int | None, interval_s: float | None, *, make_window, lang):
        window = make_window(interval_s or 1.0, Settings.memory())
        qtbot.addWidget(window)
        made.append(window)
        return 0

    monkeypatch.setattr(launch, "run", run)
    url = f"http://127.0.0.1:{_closed_port()}"
    assert main(["--prometheus", url, "--interval", "0.5"]) == 0
    assert len(made) == 1 and isinstance(made[0], ClusterWindow)
    assert made[0].source.client.url == url and made[0].interval_s == 0.5
