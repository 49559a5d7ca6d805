"""A plain ``pip install gpumon`` (no extras) serves ``--once``, ``--json``, ``-l`` and the
exporter's DCGM series, and the window and the lesson say in one sentence which extra to
install.

Each run is a fresh ``python -m gpumon`` that cannot import what the extras bring (PySide6,
pyqtgraph, numpy, torch, bcrypt, PyYAML): tests/gpu/noqt's sitecustomize hides them from the
import system, so ``import`` raises ModuleNotFoundError and ``find_spec`` returns None, as
where they are not installed. The real-NVML runs read a fake libnvidia-ml (built from C) that
the real nvidia-ml-py loads.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
if str(TESTS / "telemetry") not in sys.path:  # for `from fakenvml import ...`
    sys.path.insert(0, str(TESTS / "telemetry"))

from fakenvml import FakeNvmlUnavailable, build_fake_nvml, fake_driver_env  # noqa: E402

pytestmark = [
    pytest.mark.slow,  # subprocesses and a real server: seconds each
    pytest.mark.xdist_group("test_without_extras"),  # its module fixture: made once
]

NOQT = TESTS / "gpu" / "noqt"
#: What the extras bring, by import name: gui (Qt, pyqtgraph, numpy), playground (torch),
#: exporter (bcrypt, PyYAML).
EXTRAS_MODULES = "PySide6,shiboken6,pyqtgraph,numpy,torch,bcrypt,yaml"


def _env(base: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ if base is None else base)
    env["PYTHONPATH"] = str(NOQT)
    env["GPUMON_HIDE_MODULES"] = EXTRAS_MODULES
    env["QT_QPA_PLATFORM"] = "offscreen"  # a display: only the missing extra stops the window
    return env


def _gpumon(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gpumon", *args], env=_env(env),
                          capture_output=True, text=True, timeout=120, check=False)


@pytest.fixture(scope="module")
def fake_driver(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The environment of a process whose NVML is the fake driver with two GPUs."""
    where = tmp_path_factory.mktemp("fakenvml")
    try:
        lib = build_fake_nvml(where)
    except FakeNvmlUnavailable as err:
        pytest.skip(f"fake NVML library not available: {err}")
    return fake_driver_env(lib, where, gpus="2")


def test_the_block_hides_every_extra() -> None:
    code = ("import importlib.util\n"
            f"print([m for m in {EXTRAS_MODULES.split(',')!r} "
            "if importlib.util.find_spec(m) is not None])\n")
    done = subprocess.run([sys.executable, "-c", code], env=_env(), capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_once_prints_simulated_gpus() -> None:
    done = _gpumon("--simulate", "2", "--once")
    assert done.returncode == 0, done.stderr
    assert "Source: simulated" in done.stdout and "Traceback" not in done.stderr
    assert "NVIDIA GeForce RTX 4090" in done.stdout and "NVIDIA H100 80GB HBM3" in done.stdout


def test_json_prints_a_document() -> None:
    done = _gpumon("--simulate", "2", "--once", "--json")
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert len(document["gpus"]) == 2 and document["simulated"] is True


def test_watch_prints_each_reading() -> None:
    done = _gpumon("--simulate", "2", "-l", "0.1", "--count", "2", "--json")
    assert done.returncode == 0, done.stderr
    assert [len(json.loads(line)["gpus"]) for line in done.stdout.splitlines()] == [2, 2]


def test_once_reads_the_driver_through_nvml(fake_driver: dict[str, str]) -> None:
    done = _gpumon("--once", "--json", env=fake_driver)
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert len(document["gpus"]) == 2
    assert not document.get("simulated")


def test_stream_prints_a_header_and_snapshots(fake_driver: dict[str, str]) -> None:
    """What ``gpumon --ssh`` runs on the other machine, a core install there (no Qt, numpy
    or torch): its header, then snapshots that decode back to the fake's two GPUs."""
    from gpumon.text.json_in import decode_header, decode_snapshot

    done = _gpumon("stream", "--interval", "0.1", "--count", "2", env=fake_driver)
    assert done.returncode == 0, done.stderr
    header, *lines = done.stdout.splitlines()
    assert decode_header(header).schema == "gpumon.snapshot/1"
    assert [len(decode_snapshot(line).samples) for line in lines] == [2, 2]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _metrics(port: int, timeout_s: float) -> str:
    """/metrics once it serves GPU series (the first reading is made after start-up)."""
    deadline = time.monotonic() + timeout_s
    body = ""
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
                body = r.read().decode()
        except (urllib.error.URLError, OSError):
            pass
        if "DCGM_FI_DEV_FB_USED{" in body:
            return body
        time.sleep(0.1)
    raise AssertionError(f"no GPU series within {timeout_s:g} s; last /metrics:\n{body}")


def _serve(args: list[str], env: dict[str, str] | None) -> tuple[str, str]:
    """Start ``gpumon exporter ARGS`` on a free loopback port; its /metrics and its output."""
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "gpumon", "exporter", *args,
                             "--listen", f"127.0.0.1:{port}"], env=_env(env),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        body = _metrics(port, 60)
    finally:
        proc.terminate()
        out, _ = proc.communicate(timeout=20)
    assert proc.returncode == 0, out
    return body, out


def test_the_exporter_serves_dcgm_series_of_simulated_gpus() -> None:
    body, out = _serve(["--simulate", "2"], None)
    assert 'DCGM_FI_DEV_GPU_UTIL{' in body and 'simulated="1"' in body
    assert body.count("DCGM_FI_DEV_FB_USED{") == 2
    assert "Traceback" not in out


def test_the_exporter_serves_dcgm_series_read_through_nvml(
        fake_driver: dict[str, str]) -> None:
    body, out = _serve([], fake_driver)
    assert re.search(r"^gpumon_nvml_up\{[^}]*\} 1\.0$", body, re.MULTILINE), body
    assert body.count("DCGM_FI_DEV_FB_USED{") == 2 and 'simulated="1"' not in body
    assert "Traceback" not in out


@pytest.mark.parametrize(("args", "sentence"), [
    ((), "gpumon: the window needs PySide6, which comes with the gui extra: "
         "pip install 'gpumon[gui]'\n"),
    (("--simulate", "2"), "gpumon: the window needs PySide6, which comes with the gui extra: "
                          "pip install 'gpumon[gui]'\n"),
    (("--prometheus", "http://127.0.0.1:9"),
     "gpumon: the window needs PySide6, which comes with the gui extra: "
     "pip install 'gpumon[gui]'\n"),
    (("lesson",), "gpumon: the lesson needs PyTorch, which comes with the playground extra: "
                  "pip install 'gpumon[playground]'\n"),
], ids=["window", "simulated window", "cluster window", "lesson"])
def test_the_window_and_the_lesson_say_which_extra(args: tuple[str, ...], sentence: str) -> None:
    done = _gpumon(*args)
    assert (done.returncode, done.stdout, done.stderr) == (1, "", sentence)


def test_without_a_display_the_missing_extra_is_said_first() -> None:
    """Setting DISPLAY would not help: the extra is what is missing."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    proc = subprocess.run([sys.executable, "-m", "gpumon", "--simulate", "1"],
                          env={**_env(env), "QT_QPA_PLATFORM": ""}, capture_output=True,
                          text=True, timeout=120, check=False)
    assert proc.returncode == 1
    assert proc.stderr.startswith("gpumon: the window needs PySide6"), proc.stderr


@pytest.mark.parametrize(("hidden", "package"), [("pyqtgraph", "pyqtgraph"), ("numpy", "numpy")])
def test_each_missing_package_of_the_gui_extra_is_named(hidden: str, package: str) -> None:
    proc = subprocess.run([sys.executable, "-m", "gpumon", "--simulate", "1"],
                          env={**_env(), "GPUMON_HIDE_MODULES": hidden}, capture_output=True,
                          text=True, timeout=120, check=False)
    assert (proc.returncode, proc.stderr) == (
        1, f"gpumon: the window needs {package}, which comes with the gui extra: "
           "pip install 'gpumon[gui]'\n")


def test_the_exporter_s_web_config_says_which_extra(tmp_path: Path) -> None:
    config = tmp_path / "web.yml"
    config.write_text("basic_auth_users: {}\n")
    done = _gpumon("exporter", "--simulate", "1", "--listen", f"127.0.0.1:{_free_port()}",
                   "--web.config.file", str(config))
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == ("gpumon exporter: --web.config.file needs bcrypt, which comes with "
                           "the exporter extra: pip install 'gpumon[exporter]'\n")
