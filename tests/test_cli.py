"""The command line: --once with simulated and (absent) real GPUs, argument errors."""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest

from gpumon import __version__, ending
from gpumon.cli.main import main


def _gpu_rows(text: str) -> list[str]:
    return [line for line in text.splitlines() if "MiB /" in line]


def test_simulate_once_in_process(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--simulate", "4", "--once"]) == 0
    out, err = capsys.readouterr()
    assert len(_gpu_rows(out)) == 4
    assert "SIMULATED" in out and "Processes:" in out and err == ""


def test_seed_changes_the_machine(capsys: pytest.CaptureFixture[str]) -> None:
    main(["--simulate", "3", "--seed", "1", "--once"])
    first = capsys.readouterr().out
    main(["--simulate", "3", "--seed", "2", "--once"])
    second = capsys.readouterr().out
    bus = [line for line in first.splitlines() if "00000000:" in line]
    assert bus and bus != [line for line in second.splitlines() if "00000000:" in line]


def test_simulate_once_as_a_program() -> None:
    done = subprocess.run([sys.executable, "-m", "gpumon", "--simulate", "4", "--once"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert len(_gpu_rows(done.stdout)) == 4 and "SIMULATED" in done.stdout
    assert done.stderr == ""


def test_once_without_gpu_gives_a_short_reason() -> None:
    """On a machine without NVIDIA driver (as in CI): exit 1, a sentence, no traceback."""
    pynvml = pytest.importorskip("pynvml")
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError:
        pass
    else:
        pynvml.nvmlShutdown()
        pytest.skip("NVML works here; this test is for machines without a GPU")
    done = subprocess.run([sys.executable, "-m", "gpumon", "--once"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert "Traceback" not in done.stderr and done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert 1 <= len(lines) <= 2 and lines[0].startswith("gpumon: ")


def test_real_source_reports_library_not_found_without_gpu() -> None:
    """The contract --once relies on: NvmlSource().open() explains, it does not raise."""
    pynvml = pytest.importorskip("pynvml")
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError_LibraryNotFound:
        pass
    except pynvml.NVMLError:
        pytest.skip("NVML is present but failed otherwise; covered by the test above")
    else:
        pynvml.nvmlShutdown()
        pytest.skip("NVML works here")
    from gpumon.cli.main import make_source
    from gpumon.telemetry.model.types import SourceState

    source = make_source(None)
    status = source.open()
    try:
        assert status.state is SourceState.LIBRARY_NOT_FOUND and status.message
    finally:
        source.close()


@pytest.mark.parametrize(("args", "needle"), [
    (["--simulate", "0"], "from 1 to 16"),
    (["--simulate", "17"], "from 1 to 16"),
    (["--simulate", "four"], "from 1 to 16"),
    (["--interval", "0.05"], "from 0.1 to 10"),
    (["--interval", "11"], "from 0.1 to 10"),
    (["--interval", "nan"], "from 0.1 to 10"),
    (["--interval", "soon"], "from 0.1 to 10"),
    (["--seed", "x"], "--seed"),
])
def test_bad_arguments_are_explained(
    args: list[str], needle: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main([*args, "--once"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert needle in err and "Traceback" not in err


@pytest.mark.parametrize("interval", ["0.1", "1", "10"])
def test_interval_limits_are_accepted(
    interval: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--simulate", "1", "--interval", interval, "--once"]) == 0


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.strip() == f"gpumon {__version__}"


def test_gui_is_launched_with_the_arguments(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without --once, main() hands over to gpumon.ui.window.launch.run (replaced here: no Qt)."""
    import types

    calls: list[dict[str, object]] = []
    fake = types.ModuleType("gpumon.ui.window.launch")

    def run(**kwargs: object) -> int:
        calls.append(kwargs)
        return 3

    fake.run = run  # type: ignore[attr-defined]
    # The package first: with only the fake module in sys.modules, `import
    # gpumon.ui.window.launch` would find no gpumon.ui.window when this test runs alone.
    import gpumon.ui.window

    monkeypatch.setitem(sys.modules, "gpumon.ui.window.launch", fake)
    monkeypatch.setattr(gpumon.ui.window, "launch", fake, raising=False)
    before = {sig: signal.getsignal(sig) for sig in ending.ENDING_SIGNALS}
    try:
        assert main(["--simulate", "2", "--interval", "0.5", "--seed", "9"]) == 3
        # A signal ends the process on the spot while Qt is imported (gpumon/ending.py).
        assert {signal.getsignal(sig) for sig in ending.ENDING_SIGNALS} == {ending._end_now}
        assert main(["--lang", "zh_CN.UTF-8", "--no-gpm"]) == 3
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)
    assert calls == [{"simulate": 2, "interval_s": 0.5, "seed": 9, "lang": None, "gpm": True},
                     {"simulate": None, "interval_s": None, "seed": 0, "lang": "zh_CN",
                      "gpm": False}]
