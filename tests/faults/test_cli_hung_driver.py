"""The command line on a driver call that never returns (issue 53): ``gpumon --once``,
``gpumon dmon`` and ``gpumon topo`` as child processes whose pynvml loads the fake NVML, one
call scripted to hang. Each says which call it waits for in one sentence on stderr and ends
with status 1 after ``--timeout``; Ctrl+C ends it while the call still hangs; a driver that
is only slow (200 ms a call) is waited for.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fakenvml import fake_driver_env

pytestmark = pytest.mark.slow  # child processes on the fake driver: seconds each

ENDS_WITHIN_S = 60.0  # a guard against a hang of the test, not a measurement


def _gpumon(lib: Path, tmp_path: Path, delay: str, *argv: str,
            gpus: int = 2) -> subprocess.Popen[str]:
    env = fake_driver_env(lib, tmp_path, gpus=str(gpus), delay=delay,
                          hang_file=str(tmp_path / "hanging"))
    return subprocess.Popen([sys.executable, "-m", "gpumon", *argv], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _ended(app: subprocess.Popen[str]) -> tuple[int, str, str]:
    try:
        out, err = app.communicate(timeout=ENDS_WITHIN_S)
    except subprocess.TimeoutExpired:
        app.kill()
        app.communicate()
        pytest.fail(f"gpumon did not end within {ENDS_WITHIN_S:g} s")
    return app.returncode, out, err


@pytest.mark.parametrize(("call", "argv"), [
    ("nvmlDeviceGetUtilizationRates", ("--once",)),
    ("nvmlDeviceGetUtilizationRates", ("--once", "--json")),
    ("nvmlDeviceGetUtilizationRates", ("dmon", "-c", "3")),
    ("nvmlDeviceGetTopologyCommonAncestor", ("topo",)),
    ("nvmlInit", ("--once",)),
], ids=["once", "json", "dmon", "topo", "init"])
def test_a_hung_call_is_named_and_ends_the_command(fake_nvml_lib: Path, tmp_path: Path,
                                                   call: str, argv: tuple[str, ...]) -> None:
    app = _gpumon(fake_nvml_lib, tmp_path, f"{call}=-1", *argv, "--timeout", "1")
    code, out, err = _ended(app)
    assert (tmp_path / "hanging").exists(), "the scripted call was never made"
    assert code == 1, (code, out, err)
    assert "Traceback" not in err, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err  # one sentence
    assert call in lines[0] and "--timeout" in lines[0], err


def test_ctrl_c_ends_the_command_while_a_call_hangs(fake_nvml_lib: Path,
                                                    tmp_path: Path) -> None:
    app = _gpumon(fake_nvml_lib, tmp_path, "nvmlDeviceGetUtilizationRates=-1", "--once",
                  "--timeout", "3600")
    deadline = time.monotonic() + ENDS_WITHIN_S
    while not (tmp_path / "hanging").exists():
        assert app.poll() is None, app.communicate()
        assert time.monotonic() < deadline, "the scripted call was never made"
        time.sleep(0.05)
    app.send_signal(signal.SIGINT)
    code, _, err = _ended(app)
    assert code == 0, err
    assert "Traceback" not in err, err


def test_a_slow_driver_is_waited_for(fake_nvml_lib: Path, tmp_path: Path) -> None:
    # Each utilization call takes 0.3 s, a reading of the four GPUs 1.2 s: longer than
    # --timeout in all, but the driver answers each call well within it.
    app = _gpumon(fake_nvml_lib, tmp_path, "nvmlDeviceGetUtilizationRates=300", "--once",
                  "--timeout", "1", gpus=4)
    code, out, err = _ended(app)
    assert code == 0, err
    assert err == "", err
    assert out.count("NVIDIA") >= 4, out  # every GPU in the table
