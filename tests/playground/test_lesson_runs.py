"""The lesson's steps, run: step 1 runs the real nvidia-smi (a program on PATH here,
since this machine has none) or says that its box is gpumon's; transcripts print what a Python
prompt prints; the meta note is said once; exercise 4 runs only on two GPUs; the Chinese
lesson's code comments and result lines are Chinese or numbers. The words are checked in
test_lesson_wording.py."""

from __future__ import annotations

import io
import pickle
import re
import stat
from collections.abc import Callable
from pathlib import Path

import pytest
import torch
from testkit import cpu_only_build

from gpumon import i18n
from gpumon.cli.lesson import format_step
from gpumon.cli.main import _lesson_snapshot
from gpumon.playground.data.actions import RunCode
from gpumon.playground.data.devices import DeviceOption
from gpumon.playground.kernel import lesson_runner
from gpumon.playground.kernel.engine import Engine
from gpumon.playground.kernel.lesson_runner import LessonRunner
from gpumon.playground.lesson import results
from gpumon.playground.lesson.step_code import MINIBATCHES
from gpumon.playground.lesson.steps import LESSON
from gpumon.telemetry.model.types import Snapshot
from gpumon.telemetry.sources.sampler import Sampler
from gpumon.telemetry.sources.simulated import SimulatedSource
from gpumon.text.smi_text import render

# The timing step in this process: a short budget (tests/conftest.py says why).

pytestmark = pytest.mark.xdist_group("test_lesson_runs")  # its module fixture: made once

NUMBER = {s.id: i for i, s in enumerate(LESSON, start=1)}
TOTAL = len(LESSON)


def simulated(n: int = 2) -> Snapshot:
    sampler = Sampler(SimulatedSource(n_gpus=n, seed=0))
    try:
        return sampler.tick()
    finally:
        sampler.close()


def fake_smi(folder: Path, body: str) -> None:
    """An ``nvidia-smi`` program in ``folder``: a shell script with ``body``."""
    path = folder / "nvidia-smi"
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


@pytest.fixture
def only_path(no_nvidia_smi: Path) -> Path:
    """PATH without the real nvidia-smi (conftest.py): none unless a test puts one in this
    folder, even on a GPU machine."""
    return no_nvidia_smi


def in_language(language: str, text: Callable[[], str]) -> str:
    i18n.set_language(language)
    try:
        return text()
    finally:
        i18n.set_language("en")


# 10. Step 1: the real nvidia-smi, or gpumon's view said to be so ------------------------------

SMI_OUTPUT = ("+---------------------------------------------------------------+\n"
              "| NVIDIA-SMI 570.86.15   Driver Version: 570.86.15   CUDA Version: 12.8 |\n"
              "| GPU  Name   Persistence-M | Bus-Id   Disp.A | Volatile Uncorr. ECC |\n")


def nvml() -> Snapshot | None:
    """What ``gpumon lesson`` reads for step 1 without --simulate: this machine's NVML (here,
    no driver: a snapshot that says so)."""
    return _lesson_snapshot(None, 0)


def test_10_the_real_nvidia_smi_is_run_and_shown_as_it_printed(only_path: Path) -> None:
    fake_smi(only_path, f"printf '%s' '{SMI_OUTPUT}'")
    result = LessonRunner(Engine(), nvml).run_step(1)
    assert result.smi_real and result.smi_text == SMI_OUTPUT and result.note == ""
    for language, label in (("en", "nvidia-smi is not installed"), ("zh_CN", "没有安装")):
        text = in_language(language, lambda: format_step(result, TOTAL))
        assert "  $ nvidia-smi\n    +----" in text and "Volatile Uncorr. ECC" in text
        assert label not in text and "gpumon 0.1.0" not in text


def test_10_without_nvidia_smi_the_box_is_labelled_gpumon_s(only_path: Path) -> None:
    snapshot = nvml()
    assert snapshot is not None
    result = LessonRunner(Engine(), lambda: snapshot).run_step(1)
    assert not result.smi_real and result.smi_text == render(snapshot)
    en = format_step(result, TOTAL)
    assert "$ nvidia-smi" not in en
    assert en.index("nvidia-smi is not installed here") < en.index("gpumon 0.1.0")
    assert "gpumon's own view of NVML" in en
    cn = in_language("zh_CN", lambda: format_step(result, TOTAL))
    assert "$ nvidia-smi" not in cn and "这里没有安装 nvidia-smi" in cn


@pytest.mark.parametrize(("body", "said"), [
    ("echo 'NVIDIA-SMI has failed because it could not communicate' >&2; exit 9",
     "exit status 9: NVIDIA-SMI has failed"),
    ("exit 0", "exit status 0"),  # printed nothing
])
def test_10_a_failing_nvidia_smi_is_said_and_gpumon_s_view_shown(only_path: Path, body: str,
                                                                 said: str) -> None:
    fake_smi(only_path, body)
    result = LessonRunner(Engine(), nvml).run_step(1)
    assert not result.smi_real and result.smi_text is not None
    assert "nvidia-smi did not answer" in result.note and said in result.note


def test_10_a_hung_nvidia_smi_is_given_up_on(only_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    fake_smi(only_path, "sleep 30")
    monkeypatch.setattr(lesson_runner, "SMI_TIMEOUT_S", 0.5)
    result = LessonRunner(Engine(), lambda: None).run_step(1)
    assert not result.smi_real and "no answer within" in result.note


def test_10_nvidia_smi_s_output_is_bounded(only_path: Path) -> None:
    fake_smi(only_path, "yes 'GPU 0: <b>x</b>' | head -c 200000")
    result = LessonRunner(Engine(), lambda: None).run_step(1)
    assert result.smi_real and result.smi_text is not None
    assert len(result.smi_text) <= lesson_runner.SMI_MAX_CHARS + 2
    assert result.smi_text.endswith("\n…")


def test_10_simulated_gpus_asked_for_are_shown_not_nvidia_smi(only_path: Path) -> None:
    fake_smi(only_path, f"printf '%s' '{SMI_OUTPUT}'")
    snapshot = simulated()
    result = LessonRunner(Engine(), lambda: snapshot).run_step(1)
    assert not result.smi_real and result.smi_text == render(snapshot)
    assert result.note.startswith(results.SIMULATED_VIEW) and "simulated" in result.note
    assert "$ nvidia-smi" not in format_step(result, TOTAL)


@pytest.mark.parametrize("language", ["en", "zh_CN"])
def test_10_the_seed_s_columns_are_explained_a_line_each(only_path: Path, language: str) -> None:
    result = LessonRunner(Engine(), lambda: simulated()).run_step(1)
    text = in_language(language, lambda: format_step(result, TOTAL))
    for column in ("Persistence-M", "Disp.A", "Volatile Uncorr. ECC", "Fan", "Perf",
                   "Compute M.", "MIG M.", "Type", "GI ID, CI ID"):
        lines = [line for line in text.splitlines() if line.startswith(f"    {column}")]
        assert len(lines) == 1, column
    assert ("C is a compute process" in text) == (language == "en")
    assert ("C 表示计算进程" in text) == (language == "zh_CN")


# 11, 12, 13, 19: the whole lesson as the terminal prints it, in both languages ---------------

@pytest.fixture(scope="module")
def printed() -> dict[str, str]:
    runner = LessonRunner(Engine(), lambda: simulated())
    steps = list(runner.run_all())
    return {language: in_language(language, lambda: "".join(format_step(r, TOTAL)
                                                           for r in steps))
            for language in ("en", "zh_CN")}


@pytest.mark.parametrize("language", ["en", "zh_CN"])
def test_11_an_assignment_is_followed_by_its_name_never_by_a_value(
        printed: dict[str, str], language: str) -> None:
    lines = printed[language].splitlines()
    for before, line in zip(lines, lines[1:], strict=False):
        assigned = re.match(r"\s+>>> (\w+) = ", before)
        if assigned and not line.strip().startswith(("...", "#")) \
                and not re.match(r"\s+[\w.]+Error: ", line):
            assert line.strip() == f">>> {assigned.group(1)}", (before, line)
    assert not [line for line in lines if line.strip() == "None"]
    facts = [line for line in lines if re.match(r"    (# )?(device: |设备：)", line)]
    assert facts and all(line.strip().startswith("# ") for line in facts)


@cpu_only_build
def test_12_the_error_step_also_shows_what_a_gpu_prints(printed: dict[str, str]) -> None:
    step6 = printed["en"].split("Step 6 of")[1].split("Step 7 of")[0]
    assert "RuntimeError: Cannot access accelerator device" in step6
    gpu = step6.split("On a CUDA GPU, this step shows (not run here):")[1]
    assert ">>> x = x.cuda(0)\n    >>> x\n    tensor([1, 2, 3], device='cuda:0')" in gpu
    step3 = printed["en"].split("Step 3 of")[1].split("Step 4 of")[0]
    assert ">>> torch.cuda.is_available()\n    True" in step3


@cpu_only_build
@pytest.mark.parametrize("language", ["en", "zh_CN"])
def test_13_the_meta_device_is_explained_once(printed: dict[str, str], language: str) -> None:
    text = re.sub(r"\s+", "", printed[language])
    meta_ran = re.sub(r"\s+", "", in_language(language, lambda: i18n.tr(results.META_RAN)))
    again = re.sub(r"\s+", "", in_language(language, lambda: i18n.tr(results.META_AGAIN)))
    assert text.count(meta_ran) == 1 and text.count(again) >= 4
    window = re.sub(r"\s+", "", in_language(language, lambda: i18n.tr(
        LESSON[NUMBER["memory"] - 1].window_note)))
    assert window not in text  # the window's graphs are not in the terminal


@pytest.mark.parametrize("step_id", ["asynchronous", "timing"])
def test_19_result_lines_are_numbers_in_every_language(printed: dict[str, str],
                                                        step_id: str) -> None:
    runner = LessonRunner(Engine())
    result = runner.run_step(NUMBER[step_id])
    values = [o.preview for o in result.outcomes if o.code.count("\n") > 3]
    names = r"cpu|cuda|b?float\d+|tf32"  # devices and dtypes: code, the same in every language
    assert values and all(not re.search(r"[A-Za-z]{3,}", re.sub(names, "", v))
                          for v in values), values


def test_19_chinese_code_comments_and_docstrings(printed: dict[str, str]) -> None:
    cn, en = printed["zh_CN"], printed["en"]
    assert '"""如果存在，则返回gpu(i)，否则返回cpu()"""' in cn  # d2l-zh's own words
    assert "# 预热：GPU 上的第一次矩阵乘法还要加载 cuBLAS" in cn
    assert "warm-up: the first product" not in cn and "warm-up: the first product" in en
    # torch's own words stay English: the meta device's error, which the lesson shows where
    # there is no CUDA GPU (its meta variants); on a GPU the steps run on cuda:0 instead
    meta_error = "RuntimeError: Tensor on device cpu is not on the expected device meta!"
    assert (meta_error in cn) == (not torch.cuda.is_available())


# 8, 9, 17: what the text says, run ---------------------------------------------------------------

def test_8_numpy_of_a_tensor_that_requires_grad_is_torch_s_error() -> None:
    result = LessonRunner(Engine()).run_step(NUMBER["copy-to-host"])
    step = LESSON[NUMBER["copy-to-host"] - 1]
    failed = {o.code: o.error.message for o in result.outcomes if o.error is not None}
    assert failed.pop("w.numpy()") == step.on_gpu[-2].split(": ", 1)[1]
    if result.cuda_devices:  # h lives on cuda:0 there: torch refuses its .numpy() too
        assert failed.pop("h.numpy()") == step.on_gpu[5].split(": ", 1)[1]
    assert failed == {}


class Kept:
    """A pickled object that is not a tensor nor a plain container."""


def test_9_torch_load_refuses_other_objects_by_default() -> None:
    buffer = io.BytesIO()
    torch.save({"weight": torch.ones(1), "extra": Kept()}, buffer)
    buffer.seek(0)
    with pytest.raises(pickle.UnpicklingError, match="weights_only"):
        torch.load(buffer)
    buffer.seek(0)
    assert torch.load(buffer, weights_only=False)["weight"].item() == 1.0


def test_17_the_minibatch_loop_runs_with_its_inputs_moved() -> None:
    engine = Engine()
    model = LessonRunner(engine).run_step(NUMBER["model-on-gpu"])
    if torch.cuda.is_available():
        assert model.outcomes[-1].ok
        assert model.outcomes[-1].preview == "device(type='cuda', index=0)"
        return
    # not run here after torch's error at step 6: the same code, with the CPU as device
    engine.run(RunCode("device = torch.device('cpu')\nnet = nn.Linear(3, 1)"))
    out = engine.run(RunCode(MINIBATCHES))
    assert out.ok and out.preview == "device(type='cpu')", out.error


# 14. Exercise 4 runs only with two GPUs ----------------------------------------------------------

class GpusEngine(Engine):
    """An Engine that says ``gpus`` CUDA devices exist and records what it is asked to run."""

    def __init__(self, gpus: int) -> None:
        super().__init__()
        self.gpus, self.ran = gpus, []  # type: ignore[var-annotated]

    def devices(self) -> list[DeviceOption]:
        return [DeviceOption("cpu", "cpu"),
                *(DeviceOption(f"cuda:{i}", f"cuda:{i}") for i in range(self.gpus))]

    def run(self, action):
        self.ran.append(action)
        return super().run(action)


def test_14_exercise_4_is_not_run_without_a_gpu_and_says_why() -> None:
    engine = GpusEngine(0)
    runner = LessonRunner(engine)
    runner.run_step(NUMBER["two-gpus-at-once"] - 1)
    engine.ran.clear()
    result = runner.run_step(NUMBER["two-gpus-at-once"])
    assert not result.ran and result.outcomes == () and engine.ran == []
    assert result.note == results.TOO_FEW_GPUS.format(needed=2, seen=0)
    assert result.shows_gpu  # its transcript, headed as what two GPUs print
    text = format_step(result, TOTAL)
    assert "a0 @ a0" in text and "# two times in ms and a share: both at once takes about " \
        "half as long" in text
    assert "On a machine with 2 GPUs, expect:" in text and "On a CUDA GPU" not in text
    cn = in_language("zh_CN", lambda: format_step(result, TOTAL))
    assert "只看到 0 块" in cn and "在有 2 块 GPU 的机器上，预期输出如下：" in cn


def test_14_exercise_4_on_one_gpu_runs_both_loops_on_cuda0_then_shows_two_gpus() -> None:
    """One GPU: the one-GPU variant runs (both products on cuda:0: 'at once' brings nothing
    there); what two GPUs print follows under its own heading, with no torch version."""
    engine = GpusEngine(1)
    runner = LessonRunner(engine)
    runner.run_step(NUMBER["two-gpus-at-once"] - 1)
    engine.ran.clear()
    result = runner.run_step(NUMBER["two-gpus-at-once"])
    step = LESSON[NUMBER["two-gpus-at-once"] - 1]
    assert result.ran and engine.ran == list(step.one_gpu_variant)
    assert result.actions == step.one_gpu_variant and len(result.outcomes) == 1
    code = step.one_gpu_variant[0].code()
    assert "first, second = 'cuda:0', 'cuda:0'" in code and "'cuda:1'" not in code
    assert result.note.startswith(results.ONE_GPU_RAN.split("'")[0])
    assert results.TOO_FEW_GPUS.split("{")[0] not in result.note
    text = format_step(result, TOTAL)
    assert ">>> import time\n  ... first, second = 'cuda:0', 'cuda:0'" in text  # what ran
    assert text.index("first, second = 'cuda:0', 'cuda:0'") < \
        text.index("On a machine with 2 GPUs, expect:") < \
        text.index("first, second = 'cuda:0', 'cuda:1'")
    assert "On a CUDA GPU" not in text and "torch 2.13" not in text


def test_14_exercise_4_runs_where_torch_sees_two_gpus() -> None:
    engine = GpusEngine(2)
    result = LessonRunner(engine).run_step(NUMBER["two-gpus-at-once"])
    step = LESSON[NUMBER["two-gpus-at-once"] - 1]
    assert result.ran and engine.ran[-1] == step.actions[0]  # handed to torch, as written
    assert results.TOO_FEW_GPUS.split("{")[0] not in result.note


# 20. The data-source words in Chinese: 无 and 模拟 ------------------------------------------

def test_20_source_words_are_chinese_in_the_box() -> None:
    from dataclasses import replace

    snapshot = simulated(1)
    none = replace(snapshot, simulated=False,
                   machine=replace(snapshot.machine, source_name="none", simulated=False))
    assert "Source: none" in render(none) and "Source: simulated" in render(snapshot)
    assert "数据源：无" in in_language("zh_CN", lambda: render(none))
    cn = in_language("zh_CN", lambda: render(snapshot))
    assert "数据源：模拟" in cn and "SIMULATED)" not in cn
