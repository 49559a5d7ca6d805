"""No settings file stops the window from starting: a file QSettings must not read (a FIFO, a
directory, a device, a serialised value gpumon never writes, binary data, a huge file) is
moved aside with a sentence that names it, and every value read back is checked."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from PySide6.QtCore import QByteArray

from gpumon.interval import SAMPLING
from gpumon.ui.window.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
VARIANT = "[view]\nhidden_gpus=@Variant(\\0\\0\\0\\xb\\x7f\\xff\\xff\\xff)\n"

# The real start-up path (launch.run, the user's settings under XDG_CONFIG_HOME), quitting
# once the shown window's status bar says something, or after it has said nothing for 2 s
# of its event loop; prints what its status bar says.
START = textwrap.dedent("""
    import sys, time
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication, QMainWindow
    app = QApplication(sys.argv)
    began = []
    def look():
        shown = [w for w in app.topLevelWidgets()
                 if isinstance(w, QMainWindow) and w.isVisible()]
        if not shown:
            return
        (window,) = shown
        began[:] = began or [time.monotonic()]
        said = window.statusBar().currentMessage()
        if said or time.monotonic() - began[0] >= 2.0:
            poll.stop()
            print("shown:", said, flush=True)
            app.quit()
    poll = QTimer()
    poll.timeout.connect(look)
    poll.start(50)
    from gpumon.ui.window import launch
    sys.exit(launch.run(1))
""")


def start(config_home: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, XDG_CONFIG_HOME=str(config_home), QT_QPA_PLATFORM="offscreen")
    try:
        return subprocess.run([sys.executable, "-c", START], env=env, cwd=ROOT, text=True,
                              capture_output=True, timeout=90, check=False)
    except subprocess.TimeoutExpired as err:  # the FIFO's old hang
        raise AssertionError(f"the window never started: {err.stderr!r}") from None


def make_fifo(path: Path) -> None:
    os.mkfifo(path)


def make_link_to_fifo(path: Path) -> None:
    """A link to a FIFO of the test's own: never a link to a real device, which a QSettings
    saving through the link (as the code before this check did) would replace, as root, by a
    regular file."""
    fifo = path.with_name("elsewhere")
    os.mkfifo(fifo)
    path.symlink_to(fifo)


def make_directory(path: Path) -> None:
    path.mkdir()


@pytest.mark.slow  # a window process each
@pytest.mark.parametrize(("make", "why"), [
    (VARIANT, "it holds a value of a kind gpumon never writes "
              "(@Variant(\\0\\0\\0\\xb\\x7f\\x)"),
    ("[view]\nhidden_gpus=\\x40Variant(\\0\\0\\0\\xb\\x7f\\xff\\xff\\xff)\n",
     "it holds a value of a kind gpumon never writes (\\x40)"),
    ("[window]\ngeometry=@Rect(0 0 100000 100000)\n",
     "it holds a value of a kind gpumon never writes (@Rect(0 0 100000 100000))"),
    (make_fifo, "it is not a regular file"),
    (make_link_to_fifo, "it is not a regular file"),
    (make_directory, "it is not a regular file"),
    ("[view]\ntheme=dark\n" + "x" * (1 << 20), "it is larger than 1024 KiB"),
    ("[view]\ntheme=\0\0\0\n", "it is not text"),
], ids=["variant", "escaped-variant", "rect", "fifo", "link-to-fifo", "directory", "huge",
        "binary"])
def test_an_unusable_settings_file_is_moved_aside_and_the_window_starts(
        tmp_path: Path, make: object, why: str) -> None:
    conf = tmp_path / "gpumon" / "gpumon.conf"
    conf.parent.mkdir()
    if callable(make):
        make(conf)
    else:
        conf.write_text(str(make))
    out = start(tmp_path)
    assert out.returncode == 0, out.stderr
    (aside,) = conf.parent.glob("gpumon.conf.bad-*")
    sentence = (f"gpumon could not use its settings file and moved it to {aside} ({why}); it "
                "starts with its default settings.")
    assert f"gpumon: {sentence}\n" in out.stderr
    assert f"shown: {sentence}\n" in out.stdout
    assert conf.is_file()  # the window saved its settings anew on closing


@pytest.mark.slow
def test_values_out_of_range_start_the_window_with_defaults(tmp_path: Path) -> None:
    conf = tmp_path / "gpumon" / "gpumon.conf"
    conf.parent.mkdir()
    conf.write_text("[sampling]\nwindow_s=1e300\ninterval_s=-inf\n[view]\nzoom=nan\n")
    out = start(tmp_path)
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
    assert out.stdout == "shown: \n"  # nothing to say: the file itself was fine
    assert not list(conf.parent.glob("gpumon.conf.bad-*"))


def test_every_value_is_checked(tmp_path: Path) -> None:
    path = tmp_path / "gpumon.ini"
    gpus = ", ".join(f"GPU-{i}" for i in range(5000))
    path.write_text(f"[sampling]\nwindow_s=1e300\ninterval_s=1e308\n[view]\nzoom=-inf\n"
                    f"hidden_gpus={gpus}\nhidden_process_columns=User, 7\n"
                    f"[window]\ngeometry=@ByteArray({'x' * 10000})\n")
    s = Settings.ini(path)
    assert s.notice == ""
    assert s.window_s is None
    assert s.interval_s == SAMPLING.high  # clamped to the range
    assert s.zoom == 1.0  # not a number: the default
    assert s.hidden_gpus == set()  # 5,000 are not gpumon's
    assert s.hidden_process_columns == ["User", "7"]
    assert s.geometry is None
    path = tmp_path / "good.ini"  # another file: QSettings caches what it read of one
    path.write_text("[sampling]\nwindow_s=900\n[window]\ngeometry=@ByteArray(abc)\n")
    s = Settings.ini(path)
    assert s.window_s == 900 and s.geometry == QByteArray(b"abc")


def test_a_hostile_file_in_a_test_s_ini_is_moved_too(tmp_path: Path) -> None:
    """Settings.ini() checks too: QSettings never sees the blob that aborted the process."""
    path = tmp_path / "gpumon.ini"
    path.write_text(VARIANT)
    s = Settings.ini(path)
    assert s.hidden_gpus == set()
    assert s.notice.startswith("gpumon could not use its settings file and moved it to "
                               f"{path}.bad-")
    assert not path.exists() and len(list(tmp_path.glob("gpumon.ini.bad-*"))) == 1


def test_a_file_that_cannot_be_moved_aside_leaves_settings_in_memory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "gpumon.ini"
    os.mkfifo(path)

    def refuse(*_: object) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(os, "replace", refuse)
    s = Settings.ini(path)
    assert s.file_name == ""  # nothing is written over what could not be moved
    assert s.notice == (f"gpumon cannot use its settings file {path} (it is not a regular "
                        "file) and cannot move it aside (Permission denied); it starts with "
                        "its default settings and saves none this time.")


def test_the_user_s_file_is_where_qsettings_keeps_it(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from PySide6.QtCore import QSettings

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    if sys.platform in ("win32", "darwin"):
        pytest.skip("QSettings keeps them in the registry or a property list there")
    assert Settings.user().file_name == QSettings("gpumon", "gpumon").fileName()
