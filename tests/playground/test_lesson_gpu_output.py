"""The lesson as a machine with one CUDA GPU shows it, held to a real GPU's transcript (an
H200): each sentence is true on a GPU, and says what the GPU does, in English and Chinese.

What a machine with CUDA prints is built here from the runner's own choices on an engine that
reports one CUDA GPU (the code then runs on this machine's torch; the choices, the headings and
the notes are what is checked). What a real run printed is checked in tests/gpu (recorded
transcripts, and a live run where there is a GPU).
"""

from __future__ import annotations

import re

import pytest
from testkit import cpu_only_build

from gpumon import i18n
from gpumon.cli.lesson import format_step
from gpumon.playground.data.devices import DeviceOption
from gpumon.playground.data.outcome import MemoryReading, Outcome
from gpumon.playground.kernel import lesson_runner
from gpumon.playground.kernel.engine import Engine
from gpumon.playground.kernel.explain import FALLBACK, explanation_msgid
from gpumon.playground.kernel.lesson_runner import LessonRunner
from gpumon.playground.kernel.memory import with_process_memory
from gpumon.playground.lesson import glossary, measured, results, smi_columns
from gpumon.playground.lesson.step_code import ASYNC_N, LOG_EVERY_STEP, OUT_OF_MEMORY, PRECISION
from gpumon.playground.lesson.steps import LESSON, LessonStep

pytestmark = pytest.mark.xdist_group("test_lesson_gpu_output")  # its module fixture: made once

STEP = {s.id: s for s in LESSON}
NUMBER = {s.id: i for i, s in enumerate(LESSON, start=1)}
TOTAL = len(LESSON)
MIB = 2**20
#: torch's message for a GPU index that does not exist, as torch 2.11 on an H200 wrote it:
#: the first line, torch's hint, then the footer it puts under every CUDA error.
ORDINAL = ("CUDA error: invalid device ordinal\nGPU device may be out of range, do you have "
           "enough GPUs?\nCUDA kernel errors might be asynchronously reported at some other API "
           "call, so the stacktrace below might be incorrect.\nFor debugging consider passing "
           "CUDA_LAUNCH_BLOCKING=1\nCompile with `TORCH_USE_CUDA_DSA` to enable device-side "
           "assertions.\n")


def said(step: LessonStep) -> str:
    """What a step says in English: its narration, then its "More" (what a class may skip)."""
    return " ".join(t for t in (step.narration, step.more) if t)


def zh(message: str, **fields: object) -> str:
    i18n.set_language("zh_CN")
    try:
        return i18n.tr(message, **fields)
    finally:
        i18n.set_language("en")


def in_chinese(text: object) -> str:
    i18n.set_language("zh_CN")
    try:
        return text() if callable(text) else str(text)
    finally:
        i18n.set_language("en")


class OneGpuEngine(Engine):
    """An Engine that says torch sees ``gpus`` CUDA GPUs (the code runs on this torch)."""

    def __init__(self, gpus: int = 1) -> None:
        super().__init__()
        self.gpus = gpus

    def devices(self) -> list[DeviceOption]:
        return [DeviceOption("cpu", "cpu"),
                *(DeviceOption(f"cuda:{i}", f"cuda:{i}") for i in range(self.gpus))]


@pytest.fixture(scope="module")
def on_one_gpu() -> list[results.StepResult]:
    """Every step as the runner plays it where torch sees one CUDA GPU."""
    return list(LessonRunner(OneGpuEngine(1), lambda: None).run_all())


# Must fix 1: step 1's Perf, and the columns it did not explain --------------------------------

def test_perf_says_desktop_gpus_drop_and_data_centre_gpus_often_stay_at_p0() -> None:
    meaning = dict(smi_columns.SMI_COLUMNS)
    perf = meaning["Perf"]
    assert "drops to a high number" not in perf
    assert "desktop GPU drops to a higher number such as P8" in perf
    assert "data-centre GPUs often stay at P0" in perf and "measured on an idle H200" in perf
    cn = zh(perf)
    assert "台式机 GPU" in cn and "P8" in cn and "数据中心 GPU 往往一直保持 P0" in cn


@pytest.mark.parametrize(("column", "needles"), [
    ("Fan", ("N/A where the GPU has no fan of its own", "风扇")),
    ("MIG M.", ("Multi-Instance GPU", "多实例 GPU")),
    ("GI ID, CI ID", ("GPU instance and the compute instance", "GPU 实例和计算实例")),
])
def test_fan_mig_and_the_instance_ids_are_explained(column: str,
                                                    needles: tuple[str, str]) -> None:
    meaning = dict(smi_columns.SMI_COLUMNS)[column]
    assert needles[0] in meaning and needles[1] in zh(meaning)
    lines = smi_columns.column_lines()
    assert sum(line.startswith(f"{column}: ") for line in lines) == 1


# Must fix 2: step 11 names the line by what it is -----------------------------------------------

ORDINAL_LINE = r"\b(?:first|second|third|fourth|fifth|sixth|seventh) line\b"


@pytest.mark.parametrize("step", LESSON, ids=lambda s: s.id)
def test_no_narration_points_at_a_line_by_its_number(step: object) -> None:
    narration = step.narration  # type: ignore[attr-defined]
    assert not re.search(ORDINAL_LINE, narration), narration
    assert not re.search(r"第[一二三四五六七]行", zh(narration))


def test_step_11_names_the_fix_and_the_loop_line_by_their_code() -> None:
    step = STEP["model-on-gpu"]
    assert "as net(torch.rand(2, 3).to(device)) does" in step.narration
    assert "net(torch.rand(2, 3).to(device))" in [a.code() for a in step.actions]
    assert "X, y = X.to(device), y.to(device)" in said(step)
    assert "X, y = X.to(device), y.to(device)" in step.code()
    assert "就像 net(torch.rand(2, 3).to(device)) 那样" in zh(step.narration)


# Must fix 3: step 18's heading, and one GPU -----------------------------------------------------

def test_no_heading_names_a_torch_version() -> None:
    for message in (results.GPU_LABEL, results.GPU_NOT_RUN, results.MORE_GPUS_LABEL):
        assert "torch 2." not in message and "torch 2." not in zh(message)


def test_with_a_cuda_gpu_no_step_says_what_a_cuda_gpu_would_show(
        on_one_gpu: list[results.StepResult]) -> None:
    shown = {r.step.id: r.gpu_heading() for r in on_one_gpu if r.shows_gpu}
    assert shown == {"copy-between-gpus": "On a machine with 2 GPUs, expect:",
                     "two-gpus-at-once": "On a machine with 2 GPUs, expect:"}
    text = "".join(format_step(r, TOTAL) for r in on_one_gpu)
    assert "On a CUDA GPU" not in text and "(not run here)" not in text
    assert not [r.step.id for r in on_one_gpu if r.meta_outcomes]  # meta: only without CUDA


def test_step_18_on_one_gpu_runs_both_loops_on_cuda0(
        on_one_gpu: list[results.StepResult]) -> None:
    result = on_one_gpu[NUMBER["two-gpus-at-once"] - 1]
    step = result.step
    assert result.ran and result.actions == step.one_gpu_variant
    code = result.actions[0].code()
    assert "first, second = 'cuda:0', 'cuda:0'" in code and "cuda:1" not in code
    assert "f'{once / after:.0%}'" in code  # the share is printed, measured where it runs
    assert results.ONE_GPU_RAN.split(":")[0] in result.note
    assert "“同时”在这里带不来任何好处" in in_chinese(lambda: result.note)


# Must fix 4: step 15's sizes, measured figures apart and labelled --------------------------------

def test_step_15_uses_the_sizes_measured_on_the_h200_on_a_gpu_only() -> None:
    assert "4096 if device.type == 'cuda' else 256" in ASYNC_N
    assert "for _ in range(20):" in STEP["asynchronous"].code()
    assert "2048 if device.type == 'cuda' else 64" in LOG_EVERY_STEP
    assert "nn.Linear(width, width)" in LOG_EVERY_STEP and "range(100)" in LOG_EVERY_STEP
    assert "f'{returned / finished:.0%}'" in STEP["asynchronous"].code()  # the ratio, printed
    assert "f'{every / end - 1:+.0%}'" in LOG_EVERY_STEP


def test_no_narration_states_a_figure_only_a_gpu_measured() -> None:
    """What the H200 measured is in lesson/measured.py, under the machine's name; the
    narration holds on every machine (no 'microseconds' promised to a CPU-only student), but for
    a figure that names the machine it was measured on, as step 17's comparison does."""
    for step in LESSON:
        narration = re.sub(r"\([^()]*, on the H200\)", "", step.narration)
        assert "H200's figures below" in narration or "H200" not in narration, step.id
        assert not re.search(r"\d+(\.\d+)? ?(ms|µs|%)", narration), step.id
    gpu = " ".join(text for step in LESSON for text in step.on_gpu)
    assert "the first is microseconds" not in gpu
    for text in (measured.MEMORY, measured.ASYNCHRONOUS, measured.ITEM_EVERY_STEP,
                 measured.TIMING, measured.BUSY):
        assert any(s.measured == text for s in LESSON)
    assert {s.id for s in LESSON if s.measured} == {"memory", "asynchronous", "item-every-step",
                                                    "timing", "gpu-util-is-not-busy"}
    assert all(s.measured_on == measured.H200 for s in LESSON if s.measured)
    assert "slower by 14% to 19%" in measured.ITEM_EVERY_STEP
    assert "only 7%" in measured.ITEM_EVERY_STEP


def test_measured_figures_are_printed_under_the_machine_they_were_measured_on() -> None:
    result = LessonRunner(OneGpuEngine(0)).run_step(NUMBER["asynchronous"])
    text = format_step(result, TOTAL)
    said = " ".join(text.split())
    assert "Measured on an NVIDIA H200 (driver 580.159.04, torch 2.11.0+cu130): 20 " \
        "back-to-back 4096 x 4096" in said
    cn = " ".join(in_chinese(lambda: format_step(result, TOTAL)).split())
    assert "在一块 NVIDIA H200 上实测（驱动 580.159.04，torch 2.11.0+cu130）：连续 20 次" in cn


# Should fix: step 14's three numbers, cuBLAS's workspace, the out-of-memory message ---------------

def test_step_14_says_three_numbers_the_workspace_and_the_oom_advice() -> None:
    step = STEP["memory"]
    for needle in ("Three numbers", "figure for the process (NVML's)", "memory_reserved",
                   "memory_allocated", "no leak", "cuBLAS's workspace", "expandable_segments"):
        assert needle in said(step), needle
    for needle in ("610 MiB", "678 MiB", "96.01 to 32.01 MiB", "98.00 MiB", "34 MiB",
                   "cuBLAS's workspace"):
        assert needle in step.measured, needle
    for needle in ("from 4 to 40 MiB", "712 MiB"):
        assert needle in step.measured_more, needle
    assert step.actions[-1].code() == OUT_OF_MEMORY and step.gpu_only == (len(step.actions) - 1,)
    assert "expandable_segments:True" in step.on_gpu[-1] and step.on_gpu[-1].startswith("# ")
    assert "recorded on an H200" in step.on_gpu[1] and "recorded on an H200" in step.on_gpu[3]
    cn = zh(step.narration) + zh(step.more)
    assert "分配器在报显存不足之前，本来就会先清空缓存再重试" in cn and "不是泄漏" in cn


def _stub_outcome(code: str) -> Outcome:
    reading = MemoryReading("cuda:0", allocated_bytes=int(96.01 * MIB),
                            reserved_bytes=98 * MIB)
    return Outcome(action=None, code=code, ok=True, started_at=0.0,  # type: ignore[arg-type]
                   duration_s=0.0, memory_after=(reading, MemoryReading("cpu", rss_bytes=MIB)))


class StubMemoryEngine(OneGpuEngine):
    """One CUDA GPU, and every action's memory reading on cuda:0 as a GPU gives it."""

    def run(self, action):
        return _stub_outcome(action.code())


def test_the_memory_step_adds_nvml_s_figure_for_this_process_on_a_gpu(
        monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[int] = []

    def nvml(index: int) -> int:
        asked.append(index)
        return 776 * MIB

    monkeypatch.setattr(lesson_runner, "with_process_memory",
                        lambda readings: with_process_memory(readings, nvml))
    result = LessonRunner(StubMemoryEngine(), lambda: None).run_step(NUMBER["memory"])
    assert len(result.outcomes) == len(result.step.actions)  # the out-of-memory line too
    assert asked and set(asked) == {0}
    reading = result.outcomes[0].reading("cuda:0")
    assert reading is not None and reading.process_bytes == 776 * MIB
    assert result.outcomes[0].reading("cpu").process_bytes is None  # type: ignore[union-attr]
    text = format_step(result, TOTAL)
    assert "# cuda:0: this process 776.00 MiB (NVML, as nvidia-smi lists it), reserved " \
        "98.00 MiB, allocated 96.01 MiB" in text
    assert results.NO_PROCESS_FIGURE not in result.note
    cn = in_chinese(lambda: format_step(result, TOTAL))
    assert "# cuda:0：本进程 776.00 MiB（NVML 的数字，即 nvidia-smi 列出的），已预留 98.00 MiB，" \
        "已分配 96.01 MiB" in cn
    # where NVML does not list this process (a container's PIDs), the note says why
    monkeypatch.setattr(lesson_runner, "with_process_memory",
                        lambda readings: with_process_memory(readings, lambda index: None))
    unlisted = LessonRunner(StubMemoryEngine(), lambda: None).run_step(NUMBER["memory"])
    assert results.NO_PROCESS_FIGURE in unlisted.note
    assert "allocated 96.01 MiB, reserved 98.00 MiB" in format_step(unlisted, TOTAL)


def test_other_steps_do_not_ask_nvml(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lesson_runner, "with_process_memory",
                        lambda readings: pytest.fail("NVML asked outside the memory step"))
    runner = LessonRunner(StubMemoryEngine(), lambda: None)
    runner.run_step(NUMBER["memory"] - 1)  # every step before it, quietly and played


@cpu_only_build
def test_without_a_gpu_the_out_of_memory_line_is_shown_not_run() -> None:
    result = LessonRunner(Engine()).run_step(NUMBER["memory"])
    step = result.step
    assert result.actions == step.actions[:-1] and len(result.outcomes) == len(step.actions) - 1
    assert results.ON_CPU_GPU_ONLY in result.note and result.shows_gpu
    assert results.GPU_ONLY_NOT_RUN not in result.note  # said once, not twice
    text = format_step(result, TOTAL)
    gpu = text.split("On a CUDA GPU, this step shows (not run here):")[1]
    assert ">>> twice = 2 * torch.cuda.get_device_properties(device).total_memory" in gpu
    assert ">>> twice" not in text.split("On a CUDA GPU")[0]


# Should fix: step 12 --------------------------------------------------------------------

def test_step_12_s_why_says_the_footer_does_not_apply() -> None:
    why = explanation_msgid("torch.AcceleratorError", ORDINAL)
    assert "no GPU with that index" in why
    assert "CUDA_LAUNCH_BLOCKING and TORCH_USE_CUDA_DSA" in why and "do not apply" in why
    assert "与这个错误无关" in zh(why)
    # no footer there
    assert "do not apply" not in explanation_msgid("RuntimeError", "Invalid device id")


def test_step_12_on_one_gpu_runs_to_torch_s_error_then_shows_two_gpus(
        on_one_gpu: list[results.StepResult]) -> None:
    assert "so it ran anyway" not in results.SECOND_GPU_ERROR
    result = on_one_gpu[NUMBER["copy-between-gpus"] - 1]
    assert results.SECOND_GPU_ERROR in result.note and result.shows_gpu
    assert result.gpu_heading() == "On a machine with 2 GPUs, expect:"
    assert zh(results.MORE_GPUS_LABEL, count=2) == "在有 2 块 GPU 的机器上，预期输出如下："


# Should fix: steps 16, 8, 13 and the glossary ------------------------------------------

def test_step_16_prints_its_threads_and_measures_precision() -> None:
    step = STEP["timing"]
    assert step.actions[0].code() == "torch.get_num_threads()"
    assert "torch.set_float32_matmul_precision('high')" in PRECISION
    assert "a.bfloat16()" in PRECISION and "2 * n ** 3 /" in PRECISION
    assert "8192 if device.type == 'cuda' else 512" in PRECISION
    assert "tensor cores" in step.narration and "datasheet" in said(step)
    for needle in ("51 TFLOP/s in float32", "414 with TF32", "790 in bf16",
                   "of 67, 495 and 989 on the datasheet", "16 CPU threads"):
        assert needle in step.measured, needle


def test_step_8_says_only_a_copy_leaves_the_gpu() -> None:
    narration = said(LESSON[NUMBER["results-stay"] - 1])
    assert "until Python needs" not in narration
    assert "torch copies them to main memory, and y itself stays on the GPU" in narration
    assert "y 本身仍留在 GPU 上" in zh(LESSON[NUMBER["results-stay"] - 1].more)


@cpu_only_build
def test_every_error_the_lesson_shows_here_is_explained() -> None:
    """No error is left with the fallback sentence (step 13's w.numpy() was)."""
    shown = [o for r in LessonRunner(Engine(), lambda: None).run_all()
             for o in (*r.outcomes, *r.meta_outcomes) if o.error is not None]
    assert shown and not [o.code for o in shown if o.error.explanation == i18n.tr(FALLBACK)]
    why = next(o.error.explanation for o in shown if o.code == "w.numpy()")
    assert ".detach()" in why and "autograd" in why


def test_the_glossary_says_when_the_meta_device_appears() -> None:
    meaning = {t.term: t.meaning for t in glossary.GLOSSARY}["meta device"]
    assert "where PyTorch sees no CUDA GPU" in meaning
    assert "with a GPU it does not appear" in meaning
    assert "有 GPU 时不会出现" in zh(meaning)


# Chinese --------------------------------------------------------------------------------

@pytest.mark.parametrize(("message", "wanted", "gone"), [
    (results.UNREADABLE, "原因见下面的框", "上面的文本"),
    ("book", "中文版", "原书"),
    ("English edition", "英文版", "原书"),
    (STEP["model-on-gpu"].narration, "指出不在该设备上的那个输入（mat1）", "那个参数（mat1）"),
    (STEP["asynchronous"].narration,
     "在 torch.cuda.synchronize() 等 GPU 算完之后再停表，量到的才是计算的时间", "时间才真实"),
    (STEP["copy-to-host"].narration, "规则只有一条：Python 需要用到某个数值时",
     "只要 Python 需要一个数值"),
])
def test_the_chinese_sentences_the_review_corrected(message: str, wanted: str, gone: str) -> None:
    assert wanted in zh(message) and gone not in zh(message)


def test_the_same_device_explanation_moves_the_tensor_on_the_wrong_device() -> None:
    why = explanation_msgid("RuntimeError", "Expected all tensors to be on the same device, "
                            "but found at least two devices, cuda:0 and cpu!")
    assert "把放错设备的那个张量" in zh(why) and "不在一起" not in zh(why)
