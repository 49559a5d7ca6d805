"""The real window on a real X server: ``python -m gpumon --simulate 2`` under Xvfb (xcb).

Starts its own Xvfb on a free display, runs the app as a subprocess with the xcb platform
plugin (not offscreen), finds its top-level window with ``xwininfo``, takes a screenshot
of the screen (a PySide6 one-liner on the same display), then stops the app with SIGTERM or
SIGINT (Ctrl+C) and expects a clean exit: status 0, no traceback, no fatal error.

Set ``GPUMON_SMOKE_SCREENSHOT=/some/file.png`` to keep a copy of the screenshot.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.xdist_group("test_xvfb_smoke"),  # its module fixture: made once
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("Xvfb") is None,
                       reason="Xvfb is not installed (CI installs it: see .ci/run)"),
    pytest.mark.skipif(shutil.which("xwininfo") is None,
                       reason="xwininfo is not installed (x11-utils; CI installs it)"),
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="X11 smoke test"),
]

STARTUP_S = 45.0  # a cold start imports PySide6, pyqtgraph and numpy
SHOT = """
import sys
from PySide6.QtGui import QGuiApplication
app = QGuiApplication(sys.argv)
image = app.primaryScreen().grabWindow(0).toImage()
w, h = image.width(), image.height()
colors = {image.pixel(x, y) for x in range(0, w, 7) for y in range(0, h, 7)}
image.save(sys.argv[1])
print(image.width(), image.height(), len(colors))
"""


def _env(display: str, config: Path) -> dict[str, str]:
    env = dict(os.environ, DISPLAY=display, QT_QPA_PLATFORM="xcb", XDG_CONFIG_HOME=str(config))
    env.pop("WAYLAND_DISPLAY", None)
    return env


def _gpumon_windows(display: str) -> list[str]:
    tree = subprocess.run(["xwininfo", "-root", "-tree"], env=dict(os.environ, DISPLAY=display),
                          capture_output=True, text=True, timeout=10).stdout
    return [line.strip() for line in tree.splitlines() if '"gpumon' in line]


def _start(display: str, tmp_path: Path) -> tuple[subprocess.Popen[bytes], Path]:
    err_path = tmp_path / "stderr.txt"
    with err_path.open("wb") as err:  # the child keeps its own copy of the descriptor
        app = subprocess.Popen(
            [sys.executable, "-m", "gpumon", "--simulate", "2", "--interval", "0.2"],
            env=_env(display, tmp_path / "config"), stdout=subprocess.DEVNULL, stderr=err)
    deadline = time.monotonic() + STARTUP_S
    while not any("(simulated)" in t for t in _gpumon_windows(display)):  # titled once data came
        if app.poll() is not None:
            pytest.fail(f"gpumon exited with {app.returncode} before showing a window:\n"
                        f"{err_path.read_text(errors='replace')}")
        if time.monotonic() > deadline:
            app.kill()
            pytest.fail("no window titled gpumon … (simulated) appeared within "
                        f"{STARTUP_S:.0f} s:\n{err_path.read_text(errors='replace')}")
        time.sleep(0.2)
    return app, err_path


def _stop(app: subprocess.Popen[bytes], sig: signal.Signals, err_path: Path) -> str:
    app.send_signal(sig)
    try:
        code = app.wait(20)
    except subprocess.TimeoutExpired:
        app.kill()
        app.wait()
        pytest.fail(f"gpumon did not quit within 20 s of {sig.name}")
    err = err_path.read_text(errors="replace")
    assert code == 0, f"exit status {code} after {sig.name}:\n{err}"
    assert "Traceback" not in err and "Fatal Python error" not in err, err
    return err


@pytest.fixture
def started(display: str, tmp_path: Path) -> Iterator[tuple[subprocess.Popen[bytes], Path]]:
    """The app, running on ``display``; killed after the test if it is still running."""
    app, err_path = _start(display, tmp_path)
    yield app, err_path
    if app.poll() is None:
        app.kill()
        app.wait()


def test_real_window_shows_and_quits_on_sigterm(
        display: str, tmp_path: Path, started: tuple[subprocess.Popen[bytes], Path]) -> None:
    app, err_path = started
    shot = tmp_path / "screen.png"
    done = subprocess.run([sys.executable, "-c", SHOT, str(shot)], env=_env(display, tmp_path),
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    # still running after the screenshot's own start-up, sampling every 0.2 s meanwhile
    assert app.poll() is None, err_path.read_text(errors="replace")
    width, height, colors = (int(v) for v in done.stdout.split())
    assert (width, height) == (1280, 1024)
    assert colors > 20, "the screen is nearly uniform: nothing was drawn"
    keep = os.environ.get("GPUMON_SMOKE_SCREENSHOT")
    if keep:
        shutil.copyfile(shot, keep)
    _stop(app, signal.SIGTERM, err_path)


def test_ctrl_c_quits_cleanly(display: str, started: tuple[subprocess.Popen[bytes], Path]
                             ) -> None:
    app, err_path = started  # in its event loop, its data shown: the title says "(simulated)"
    _stop(app, signal.SIGINT, err_path)
    assert not _gpumon_windows(display)
