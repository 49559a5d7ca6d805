"""Quitting while a driver call hangs: ``python -m gpumon`` on the fake NVML library.

The app runs as a child process whose pynvml loads the fake as libnvidia-ml.so.1; one NVML
call is scripted to never return (or to take 200 ms). SIGTERM (the same path as Ctrl+Q:
the window closes) must end the process with status 0 within 3 s, with no "QThread:
Destroyed while thread is still running" abort, and the settings file written.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fakenvml import fake_driver_env

pytestmark = pytest.mark.slow  # real servers or subprocesses: seconds each (docs/development.md)

QUIT_WITHIN_S = 3.0


def _run_until(app: subprocess.Popen[bytes], ready: Path | None, wait_s: float) -> None:
    deadline = time.monotonic() + 45.0
    while ready is not None and not ready.exists():
        assert app.poll() is None, f"gpumon exited early ({app.returncode})"
        assert time.monotonic() < deadline, "the scripted driver call never started"
        time.sleep(0.05)
    time.sleep(wait_s)


def _quit(app: subprocess.Popen[bytes], err_path: Path) -> tuple[float, str]:
    sent = time.monotonic()
    app.send_signal(signal.SIGTERM)
    try:
        code = app.wait(20)
    except subprocess.TimeoutExpired:
        app.kill()
        app.wait()
        pytest.fail("gpumon did not exit within 20 s of SIGTERM")
    took = time.monotonic() - sent
    err = err_path.read_text(errors="replace")
    assert code == 0, f"exit status {code}:\n{err}"
    assert "QThread" not in err and "Traceback" not in err, err
    return took, err


@pytest.mark.parametrize("delay", ["-1", "200"], ids=["never-returns", "200ms-calls"])
def test_quit_while_a_driver_call_hangs(fake_nvml_lib: Path, tmp_path: Path,
                                        delay: str) -> None:
    hang = tmp_path / "hanging"
    env = fake_driver_env(fake_nvml_lib, tmp_path, gpus="8",
                          delay=f"nvmlDeviceGetUtilizationRates={delay}", hang_file=str(hang))
    env.update(QT_QPA_PLATFORM="offscreen", XDG_CONFIG_HOME=str(tmp_path / "config"))
    err_path = tmp_path / "stderr.txt"
    with err_path.open("wb") as err:
        app = subprocess.Popen([sys.executable, "-m", "gpumon", "--interval", "0.2"],
                               env=env, stdout=subprocess.DEVNULL, stderr=err)
    try:
        # until a delayed call has begun (the window is up, sampling), then a while more: a
        # call that never returns, or readings of 8 GPUs x 200 ms one after the other
        _run_until(app, hang, 1.0 if delay == "-1" else 3.0)
        took, _ = _quit(app, err_path)
    finally:
        if app.poll() is None:
            app.kill()
            app.wait()
    assert took < QUIT_WITHIN_S, f"quitting took {took:.1f} s"
    settings = list((tmp_path / "config").rglob("*.conf"))
    assert settings, "the settings were not saved"
    assert os.path.getsize(settings[0]) > 0
