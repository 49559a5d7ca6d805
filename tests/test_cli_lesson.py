"""`gpumon lesson`: every step printed with its code and torch's answer; options; exit codes."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from collections.abc import Callable

import pytest
import torch
from testkit import cpu_only_build, torch_error

from gpumon.cli.main import main
from gpumon.playground.lesson.steps import LESSON

# The timing step in this process: a short budget (tests/conftest.py says why).

pytestmark = pytest.mark.xdist_group("test_cli_lesson")  # its module fixture: made once

NOT_COMPILED = "Torch not compiled with CUDA enabled"
NUMBER = {step.id: i for i, step in enumerate(LESSON, start=1)}
TOTAL = len(LESSON)


def torch_message(fn: Callable[[], object]) -> str:
    """``Type: message`` as the lesson prints torch's error for ``fn()``."""
    error = torch_error(fn)
    assert error is not None, "torch did not raise; the test premise is wrong here"
    return f"{error[0]}: {error[1]}"


def gpu_rows(text: str) -> list[str]:
    return [line for line in text.splitlines() if "MiB /" in line]


def assert_whole_lesson(out: str, simulated: bool = False) -> None:
    for number, step in enumerate(LESSON, start=1):
        assert f"Step {number} of {len(LESSON)}: {step.title}" in out
        for action in step.actions:
            first, *more = action.code().splitlines()
            assert f">>> {first}" in out
            for line in more:
                assert f"... {line}" in out
        for line in step.preamble.splitlines():
            assert line.rstrip() in out
    # the real nvidia-smi where it is installed, else gpumon's view, said to be so; simulated
    # GPUs asked for are shown as such, never nvidia-smi's output
    installed = shutil.which("nvidia-smi") is not None
    assert ("$ nvidia-smi" in out) == (installed and not simulated)
    assert ("nvidia-smi is not installed here" in out) == (not installed and not simulated)
    assert ("Simulated GPUs were asked for" in out) == simulated
    assert "Traceback" not in out


@pytest.fixture(scope="module")
def lesson_output() -> tuple[int, str, str]:
    """The whole lesson, run once as a program, as a student would type it."""
    done = subprocess.run([sys.executable, "-m", "gpumon", "lesson"], capture_output=True,
                          text=True, timeout=120)
    return done.returncode, done.stdout, done.stderr


@pytest.mark.slow
def test_lesson_as_a_program(lesson_output: tuple[int, str, str]) -> None:
    code, out, err = lesson_output
    assert code == 0, err
    assert err == "" and "Traceback" not in out + err
    assert_whole_lesson(out)


@pytest.mark.slow
def test_a_reader_that_stops_early_gets_no_traceback() -> None:
    """`gpumon lesson | head`: the pipe closes; no 'runner failed', no traceback."""
    # Step 1 is printed before torch is imported; the later steps then meet a closed pipe.
    with subprocess.Popen([sys.executable, "-m", "gpumon", "lesson", "--simulate", "1"],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=0) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        assert proc.stdout.read(10) == b"Step 1 of "
        proc.stdout.close()
        err = proc.stderr.read().decode()
        assert proc.wait(timeout=120) in (0, 1)
    assert err == ""


@pytest.mark.slow
@cpu_only_build
def test_program_shows_torchs_own_errors(lesson_output: tuple[int, str, str]) -> None:
    out = lesson_output[1]
    assert NOT_COMPILED in out
    assert torch_message(lambda: torch.cuda.current_device()) in out
    x = torch.tensor([1, 2, 3])
    assert torch_message(lambda: x.cuda(0)) in out  # 'Cannot access accelerator device ...'
    m = torch.tensor([1, 2, 3], device="meta")
    assert torch_message(lambda: m ** 2 + x.cpu()) in out  # the meta variant of mixed-devices
    assert "why: " in out and "Note: This step needs a CUDA GPU" in out


def test_lesson_in_process_with_simulated_gpus(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["lesson", "--simulate", "2"]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    assert_whole_lesson(out, simulated=True)
    step_one = out.split("Step 2 of")[0]
    assert "SIMULATED" in step_one and len(gpu_rows(step_one)) == 2
    assert out.count("Step ") >= len(LESSON)


@pytest.mark.parametrize("argv", [
    ["lesson", "--simulate", "3", "--step", "1"],
    ["--simulate", "3", "lesson", "--step", "1"],  # the top-level option is honoured too
    ["--simulate", "3", "--seed", "5", "lesson", "--step", "1"],
])
def test_step_one_uses_simulated_gpus(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"Step 1 of {TOTAL}: ") and "Step 2 of" not in out
    assert len(gpu_rows(out)) == 3 and "SIMULATED" in out


def test_one_step_only(capsys: pytest.CaptureFixture[str]) -> None:
    number = NUMBER["mixed-devices"]
    assert main(["lesson", "--step", str(number)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"Step {number} of {TOTAL}: ") and out.count("Step ") == 1
    assert ">>> z = y + x.cpu()" in out
    if not torch.cuda.is_available():
        assert "The same rule on the meta device:" in out
        assert "is not on the expected device" in out


def test_timing_step_shows_medians_on_every_device(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["lesson", "--step", str(NUMBER["timing"])]) == 0
    out = capsys.readouterr().out
    assert "benchmark.Timer('a @ a'" in out
    devices = ["cpu"] + [f"cuda:{i}" for i in range(min(1, torch.cuda.device_count()))]
    for size in (10, 1000):
        for device in devices:
            assert re.search(rf"\({size}, '{device}'\): [0-9.]+", out), (size, device)


def test_big_tensors_are_printed_as_their_shape(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["lesson", "--step", str(NUMBER["asynchronous"])]) == 0
    out = capsys.readouterr().out
    n = 4096 if torch.cuda.is_available() else 256  # the step's size on this machine
    assert f"tensor of shape ({n}, {n}), float32" in out and "tensor([[" not in out


@pytest.mark.parametrize(("value", "needle"), [
    ("0", f"from 1 to {TOTAL}"), (str(TOTAL + 1), f"from 1 to {TOTAL}"),
    ("two", "invalid int value"),
])
def test_bad_step_is_explained(value: str, needle: str,
                               capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["lesson", "--step", value])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert needle in err and "Traceback" not in err


def test_bad_simulate_is_explained(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["lesson", "--simulate", "0"])
    assert exit_info.value.code == 2 and "from 1 to 16" in capsys.readouterr().err


def test_a_failing_runner_exits_non_zero(monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    from gpumon.playground.kernel import lesson_runner as lesson

    def broken(self: object, number: int, meta: bool = True) -> object:
        raise ValueError("broken on purpose")

    monkeypatch.setattr(lesson.LessonRunner, "run_step", broken)
    assert main(["lesson", "--step", "3"]) == 1
    out, err = capsys.readouterr()
    assert out == "" and "the lesson runner failed (ValueError: broken on purpose)" in err


def test_lesson_does_not_open_the_window(monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    """`gpumon lesson` never reaches the GUI: a poisoned gpumon.ui.window.launch would raise."""
    monkeypatch.setitem(sys.modules, "gpumon.ui.window.launch", None)
    assert main(["lesson", "--step", str(NUMBER["tensor-on-cpu"])]) == 0
    assert ">>> x = torch.tensor([1, 2, 3])" in capsys.readouterr().out


def test_help_lists_the_lesson(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--help"])
    assert exit_info.value.code == 0
    assert "lesson" in capsys.readouterr().out
