"""No torch until it is wanted: the kernel starts when a kernel tab is hovered or shown, or
at launch only if the last session used the playground (ui/window/kernel_warmup.py)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QEvent, QPointF, Qt
from PySide6.QtGui import QMouseEvent
from PySide6.QtWidgets import QApplication

from gpumon.ui.playground.kernel_link import KernelLink
from gpumon.ui.window.settings import Settings


def _move_over(bar, index: int) -> None:
    at = QPointF(bar.tabRect(index).center())
    event = QMouseEvent(QEvent.Type.MouseMove, at, bar.mapToGlobal(at),
                        Qt.MouseButton.NoButton, Qt.MouseButton.NoButton,
                        Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(bar, event)


def _tab(w, key: str) -> int:
    return next(i for i in range(w.tabs.count()) if w.tabs.key(i) == key)


def test_a_monitor_only_session_starts_no_kernel(qtbot, make_window) -> None:
    w = make_window()
    qtbot.waitUntil(lambda: w.snapshot_count >= 3, timeout=10000)
    _move_over(w.tabs.tabBar(), _tab(w, "Monitor"))
    assert not w.warmup.start_due  # no start is on its way
    assert w.findChild(KernelLink) is None  # no KernelLink made, no process started
    assert not w.settings.playground_used


def test_resting_on_the_playground_tab_starts_the_kernel_before_the_click(
        qtbot, make_window) -> None:
    w = make_window()
    qtbot.waitUntil(lambda: w.snapshot_count >= 1, timeout=10000)
    _move_over(w.tabs.tabBar(), _tab(w, "Playground"))
    # loading, or loaded already (a kernel forked from the fork server has torch at once)
    qtbot.waitUntil(lambda: w.findChild(KernelLink) is not None and (
        w.kernel_link.loading or w.kernel_link.load_status is not None), timeout=3000)
    assert w.tabs.key(w.tabs.currentIndex()) == "Monitor"  # not shown: only warmed
    assert not w.settings.playground_used  # only showing it counts as use
    qtbot.waitUntil(lambda: w.kernel_link.load_status is not None, timeout=60000)
    assert w.kernel_link.load_status.ok


def test_showing_the_lesson_starts_the_kernel_and_is_remembered(qtbot, make_window) -> None:
    w = make_window()
    w.show_tab("Lesson")
    qtbot.waitUntil(lambda: w.findChild(KernelLink) is not None and w.kernel_link.running,
                    timeout=10000)
    assert w.settings.playground_used


def test_the_remembered_use_survives_in_the_settings_file(tmp_path) -> None:
    path = tmp_path / "gpumon.ini"
    first = Settings.ini(path)
    assert first.playground_used is False
    first.playground_used = True
    first.sync()
    assert Settings.ini(path).playground_used is True


def _kernel_children_after_start(config_home, seconds: float = 6.0
                                 ) -> tuple[list[str], float]:
    """The app's kernel processes, looked for until one shows or ``seconds`` passed, and the
    seconds that took."""
    import os
    import subprocess
    import sys
    import time

    import psutil

    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", XDG_CONFIG_HOME=str(config_home))
    app = subprocess.Popen([sys.executable, "-m", "gpumon", "--simulate", "1"], env=env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + seconds
        found: list[str] = []
        start = time.monotonic()
        while time.monotonic() < deadline and not found:
            time.sleep(0.2)
            found = [" ".join(c.cmdline()) for c in psutil.Process(app.pid).children()
                     if "gpumon.playground.kernel.main" in " ".join(c.cmdline())]
        return found, time.monotonic() - start
    finally:
        app.terminate()
        app.wait(10)


@pytest.mark.slow
def test_the_app_starts_its_kernel_at_launch_only_after_a_session_that_used_it(
        tmp_path) -> None:
    used = tmp_path / "used"
    import os
    import subprocess
    import sys

    remember = ("from gpumon.ui.window.settings import Settings\n"
                "s = Settings.user(); s.playground_used = True; s.sync()")
    subprocess.run([sys.executable, "-c", remember], check=True,
                   env=dict(os.environ, XDG_CONFIG_HOME=str(used)))
    kernels, took = _kernel_children_after_start(used, 20.0)
    assert kernels != []
    # A fresh app, watched twice as long as that one took to start its kernel (3 to 6 s)
    fresh = tmp_path / "fresh"
    assert _kernel_children_after_start(fresh, min(6.0, max(3.0, 2 * took)))[0] == []
