"""The lesson: its steps, the runner's per-machine choices, and torch's real answers.

Errors are compared with what torch raises when the step's own code is executed directly
(with the engine's workspace as its variables), never with hand-copied text.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from testkit import cpu_only_build, torch_error

from gpumon.playground.data import actions as act
from gpumon.playground.data.devices import DeviceOption
from gpumon.playground.data.outcome import Outcome
from gpumon.playground.kernel import lesson_runner as lesson
from gpumon.playground.kernel.engine import Engine
from gpumon.playground.kernel.explain import FALLBACK
from gpumon.playground.lesson.results import NO_UUIDS
from gpumon.telemetry.model.types import Snapshot
from gpumon.telemetry.sources.sampler import Sampler
from gpumon.telemetry.sources.simulated import SimulatedSource
from gpumon.text.smi_text import render

# The timing step in this process: a short budget (tests/conftest.py says why).

pytestmark = pytest.mark.xdist_group("test_lesson")  # its module fixture: made once

NUMBER = {step.id: i for i, step in enumerate(lesson.LESSON, start=1)}


def simulated_snapshot(n: int = 2) -> Snapshot:
    sampler = Sampler(SimulatedSource(n_gpus=n, seed=0))
    try:
        return sampler.tick()
    finally:
        sampler.close()


def direct(engine: Engine, code: str) -> tuple[str, str] | None:
    """What torch raises for ``code`` run as Python over the engine's workspace (or None)."""
    namespace: dict[str, object] = {"torch": torch, "nn": torch.nn}
    namespace.update({name: engine.get(name) for name in engine.names()})
    return torch_error(lambda: exec(code, namespace))


def step_alone(step_id: str, meta: bool = True) -> tuple[lesson.StepResult, Engine]:
    engine = Engine()
    return lesson.LessonRunner(engine).run_step(NUMBER[step_id], meta), engine


@pytest.fixture(scope="module")
def results() -> list[lesson.StepResult]:
    return list(lesson.LessonRunner(Engine(), simulated_snapshot).run_all())


# --- the steps as data --------------------------------------------------------------------

def test_the_book_then_the_english_edition() -> None:
    assert len(lesson.LESSON) == 20 and len(NUMBER) == 20  # ids are unique
    book = [s.id for s in lesson.LESSON if s.source == "book"]
    assert book == ["nvidia-smi", "cuda-queries", "tensor-on-cpu", "to-gpu", "create-on-device",
                    "results-stay", "mixed-devices", "model-device", "model-on-gpu"]
    assert {s.source for s in lesson.LESSON} == {"book", "English edition", "gpumon"}
    assert lesson.LESSON[0].kind == "smi" and lesson.LESSON[0].code() == "nvidia-smi"
    assert lesson.LESSON[1].kind == "glossary" and lesson.LESSON[1].code() == ""
    assert not lesson.LESSON[1].actions  # words to read before the code starts
    assert all(s.kind == "torch" and s.actions for s in lesson.LESSON[2:])
    assert all(s.needs_cuda for s in lesson.LESSON if s.needs_two_gpus)
    assert [s.id for s in lesson.LESSON if s.needs_two_gpus] == ["copy-between-gpus"]


@pytest.mark.parametrize("step", lesson.LESSON, ids=lambda s: s.id)
def test_narration_is_one_to_five_sentences(step: lesson.LessonStep) -> None:
    """What a class reads is short (a 45-minute class, lesson/reading.py); more is in More."""
    sentences = re.findall(r"[.!?](?=\s|$)", step.narration)
    assert 1 <= len(sentences) <= 5, step.narration
    assert step.title and step.narration.endswith(".")


def test_book_steps_show_the_book_code() -> None:
    codes = {s.id: s.code() for s in lesson.LESSON}
    assert "torch.cuda.device_count()" in codes["cuda-queries"]
    assert "x = x.cuda(0)" in codes["to-gpu"].splitlines()
    assert codes["results-stay"] == "y = x ** 2"
    assert codes["mixed-devices"].splitlines()[0] == "z = y + x.cpu()"
    assert "Z = X.cuda(1)" in codes["copy-between-gpus"]
    assert "Z.cuda(1) is Z" in codes["copy-between-gpus"]


def test_step_code_is_preamble_then_actions() -> None:
    step = lesson.LESSON[NUMBER["choose-device"] - 1]
    assert step.code() == "\n".join([
        act.TRY_GPU_SOURCE, "", "try_gpu(0)", "try_gpu(10)", "try_all_gpus()",
        "torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device = try_gpu()"])
    for each in lesson.LESSON[1:]:
        compile(each.code(), "<lesson>", "exec")  # the shown code is real Python
    meta = lesson.LESSON[NUMBER["mixed-devices"] - 1].meta_code()
    assert "zm = ym + x.cpu()" in meta.splitlines()


# --- running every step ---------------------------------------------------------------------

def test_every_step_runs_and_yields_outcomes(results: list[lesson.StepResult]) -> None:
    assert [r.number for r in results] == list(range(1, len(lesson.LESSON) + 1))
    for r in results:
        assert r.step is lesson.LESSON[r.number - 1]
        assert r.ran == (r.step.min_gpus == 0)  # exercise 4 needs two GPUs: not run here
        if r.step.kind != "torch" or (r.shows_gpu and not r.outcomes):
            continue
        assert 1 <= len(r.outcomes) <= len(r.actions)
        assert [o.code for o in r.outcomes] == [a.code() for a in r.actions][:len(r.outcomes)]
        for o in r.outcomes:
            assert o.ok == (o.error is None)
            assert o.ok or (o.error is not None and o.error.message)


def test_gpu_util_step_without_a_gpu_shows_the_h200_s_figures_labelled(
        results: list[lesson.StepResult]) -> None:
    r = results[NUMBER["gpu-util-is-not-busy"] - 1]
    assert r.number == NUMBER["timing"] + 1  # after the products were timed
    step = r.step
    if r.cuda_devices:
        pytest.skip("torch sees a CUDA GPU here: the step reads it (tests/gpu)")
    # the reader's code, the size and the tensors ran; the NVML readings need a GPU
    assert [o.code for o in r.outcomes] == [a.code() for a in step.actions[:2]]
    assert all(o.ok for o in r.outcomes), [o.error for o in r.outcomes]
    assert r.outcomes[1].preview == "(torch.Size([256, 256]), torch.Size([10, 10]))"
    assert r.shows_gpu and r.note == lesson.tr(lesson.ON_CPU_GPU_ONLY)  # one note, not two
    gpu = step.gpu_text()
    assert ">>> busy(lambda: big @ big)" in gpu and ">>> busy(lambda: small @ small)" in gpu
    measured = " ".join(r.measured_text().split())
    assert measured.startswith("Measured on an NVIDIA H200 (driver 580.159.04")
    for figure in ("GPU-Util 100%", "SM activity 96.4%", "occupancy 14.3%",
                   "tensor activity 93.6%", "DRAM 16.6%", "691 W of the 700 W power cap",
                   "GPU-Util 36%, SM activity 0.24%"):
        assert figure in measured, figure
    for figure in ("FP32 pipe 0", "4.6 MiB/s out and 12.8 MiB/s in", "SW power cap"):
        assert figure in step.measured_more, figure  # the H200's other figures, in More


@cpu_only_build
def test_steps_without_needs_run_on_the_cpu(results: list[lesson.StepResult]) -> None:
    """Steps written with ``device`` run on the CPU here, every line but those marked as
    needing a GPU (shown from ``on_gpu``); only lines that need what a CPU-only build lacks
    (its CUDA queries, a checkpoint saved on a GPU) fail, and .numpy() of a tensor that
    requires grad, which fails everywhere."""
    may_fail = {"torch.cuda.current_device()", "torch.cuda.get_device_name(0)",
                "torch.load(SAVED_ON_CUDA)", "w.numpy()"}  # w requires grad: on every device
    for r in results:
        if not r.step.needs_cuda and r.step.kind == "torch" and not r.step.min_gpus:
            here = [a for i, a in enumerate(r.step.actions) if i not in r.step.gpu_only]
            assert r.actions == tuple(here) and len(r.outcomes) == len(here), r.step.id
            assert [o.code for o in r.outcomes if not o.ok] == \
                [a.code() for a in here if a.code() in may_fail], r.step.id
            assert r.shows_gpu == bool(r.step.on_gpu)


def test_step_one_renders_the_snapshot() -> None:
    snapshot = simulated_snapshot(3)
    result = lesson.LessonRunner(Engine(), lambda: snapshot).run_step(1)
    assert result.smi_text == render(snapshot) and result.outcomes == ()
    assert "simulated" in result.note


@pytest.mark.parametrize(("provider", "needle"), [
    (lambda: None, lesson.NO_TELEMETRY),
    (lambda: 1 / 0, "ZeroDivisionError"),
])
def test_step_one_without_telemetry(provider: object, needle: str,
                                    no_nvidia_smi: Path) -> None:
    engine = Engine()  # no nvidia-smi either: where there is one, step 1 shows its output
    result = lesson.LessonRunner(engine, provider).run_step(1)  # type: ignore[arg-type]
    assert result.smi_text is None and needle in result.note
    assert not engine.is_loaded  # nvidia-smi is no torch step: torch is not even imported


def test_the_glossary_step_runs_no_code_and_loads_no_torch() -> None:
    engine = Engine()
    runner = lesson.LessonRunner(engine, lambda: None)
    result = runner.run_step(NUMBER["glossary"])  # alone: step 1 is replayed quietly first
    assert result.ran and result.outcomes == () and result.note == ""
    assert result.step.kind == "glossary" and not engine.is_loaded


def test_notes_are_put_into_words_when_read_in_the_language_then_in_use() -> None:
    """A StepResult made in one language (the kernel's) reads in the window's."""
    from gpumon import i18n

    result = lesson.LessonRunner(Engine(), lambda: None).run_step(NUMBER["cuda-queries"])
    assert result.note.endswith(NO_UUIDS)
    i18n.set_language("zh_CN")
    assert result.note.endswith(i18n.tr(NO_UUIDS)) and i18n.tr(NO_UUIDS) != \
        NO_UUIDS
    uuids = lesson.nvml_uuid_note(simulated_snapshot(1))
    assert uuids.text().startswith("nvidia-smi 列出的 UUID（模拟 GPU）：GPU 0: GPU-")
    assert lesson.StepResult(1, result.step, (), (uuids, lesson.note(lesson.STOPPED))).note \
        == uuids.text() + i18n.tr(lesson.STOPPED)  # no space after '。'


def test_a_step_alone_sees_what_the_earlier_steps_left(results: list[lesson.StepResult]) -> None:
    alone, _ = step_alone("results-stay")
    in_order = results[NUMBER["results-stay"] - 1]
    assert [(o.code, o.ok, o.preview) for o in alone.outcomes] == \
        [(o.code, o.ok, o.preview) for o in in_order.outcomes]


def test_running_a_step_twice_starts_again() -> None:
    runner = lesson.LessonRunner(Engine())
    first = runner.run_step(NUMBER["tensor-on-cpu"])
    again = runner.run_step(NUMBER["tensor-on-cpu"])
    assert [o.preview for o in first.outcomes] == [o.preview for o in again.outcomes]
    assert again.outcomes[0].ok


@pytest.mark.parametrize("number", [0, len(lesson.LESSON) + 1, -1])
def test_bad_step_numbers(number: int) -> None:
    with pytest.raises(IndexError, match=f"1 to {len(lesson.LESSON)}"):
        lesson.LessonRunner(Engine()).run_step(number)


# --- a machine without CUDA: torch's real error once, then what a GPU shows, and meta ---------

CUDA_STEPS = [s.id for s in lesson.LESSON if s.needs_cuda]


@cpu_only_build
@pytest.mark.parametrize("step_id", CUDA_STEPS)
def test_the_first_cuda_step_run_shows_torchs_own_error(step_id: str) -> None:
    result, engine = step_alone(step_id, meta=False)
    failed = [o for o in result.outcomes if not o.ok]
    if not failed:  # runs on the CPU too (z = y + x.cpu() with y on the CPU): said so
        assert result.note == lesson.NO_CUDA_RAN and result.shows_gpu
        return
    error = failed[0].error
    assert error is not None and error.by_torch
    assert (error.type_name, error.message) == direct(engine, failed[0].code)
    assert error.explanation != FALLBACK
    assert result.note.startswith(lesson.NO_CUDA_ERROR) and result.shows_gpu  # both: error, GPU
    if len(result.outcomes) < len(result.step.actions):
        assert lesson.STOPPED in result.note


@cpu_only_build
def test_the_error_is_shown_once_then_what_a_gpu_shows(
        results: list[lesson.StepResult]) -> None:
    cuda_results = [r for r in results if r.step.needs_cuda]
    first, later = cuda_results[0], cuda_results[1:]
    assert first.step.id == "to-gpu" and first.errors and first.shows_gpu
    assert later and all(r.outcomes == () and r.shows_gpu for r in later)
    for r in later:
        assert r.note.startswith(lesson.GPU_NOT_RUN.format(first=first.number))
        assert len(r.step.on_gpu) == len(r.step.actions)
    messages = [o.error.message for r in results for o in r.outcomes if o.error is not None]
    assert sum("not compiled" in m for m in messages) == 2  # cuda-queries: two, not eight


@cpu_only_build
def test_the_not_compiled_error_is_shown(results: list[lesson.StepResult]) -> None:
    expected = torch_error(lambda: torch.cuda.current_device())
    assert expected is not None and "Torch not compiled with CUDA enabled" in expected[1]
    shown = [(o.error.type_name, o.error.message) for r in results for o in r.outcomes
             if o.error is not None]
    assert expected in shown


@cpu_only_build
def test_running_the_error_step_again_shows_the_error_again() -> None:
    runner = lesson.LessonRunner(Engine())
    first = runner.run_step(NUMBER["to-gpu"])
    again = runner.run_step(NUMBER["to-gpu"])
    assert first.errors and again.errors and again.shows_gpu
    later = runner.run_step(NUMBER["model-device"])
    assert later.outcomes == () and later.shows_gpu


@cpu_only_build
@pytest.mark.parametrize("step_id", ["mixed-devices", "model-on-gpu"])
def test_meta_variants_raise_the_same_device_error(step_id: str) -> None:
    result, engine = step_alone(step_id)
    assert lesson.META_RAN in result.note
    assert len(result.meta_outcomes) == len(result.step.meta_variant)
    failed = [o for o in result.meta_outcomes if not o.ok]
    assert len(failed) == 1 and failed[0].error is not None and failed[0].error.by_torch
    assert "is not on the expected device" in failed[0].error.message
    assert (failed[0].error.type_name, failed[0].error.message) == \
        direct(engine, failed[0].code)
    assert result.meta_outcomes[-1].ok  # the fix (.to the tensor's device) works on meta too


@cpu_only_build
def test_meta_numpy_needs_a_copy_and_cpu_cannot_copy_out() -> None:
    result, engine = step_alone("copy-to-host")
    by_code = {o.code: o for o in result.meta_outcomes}
    numpy, cpu = by_code["hm.numpy()"], by_code["hm.cpu()"]
    assert numpy.error is not None and cpu.error is not None
    for out in (numpy, cpu):
        assert out.error is not None
        assert (out.error.type_name, out.error.message) == direct(engine, out.code)
    assert "Cannot copy out of meta tensor" in cpu.error.message
    assert "Cannot copy out of meta tensor" in numpy.error.explanation  # .cpu() fails too


@cpu_only_build
def test_results_stay_on_meta() -> None:
    result, _ = step_alone("results-stay")
    assert [o.device for o in result.meta_outcomes] == ["meta", "meta"]


def test_no_meta_variant_without_asking() -> None:
    result, _ = step_alone("mixed-devices", meta=False)
    assert result.meta_outcomes == () and lesson.META_RAN not in result.note


# --- the runner's choices on other machines (a stub engine says what torch sees) --------------

class CountingEngine(Engine):
    """An Engine that reports ``gpus`` CUDA devices and records what it is asked to run."""

    def __init__(self, gpus: int) -> None:
        super().__init__()
        self.gpus = gpus
        self.ran: list[act.Action] = []

    def devices(self) -> list[DeviceOption]:
        return [DeviceOption("cpu", "cpu"),
                *(DeviceOption(f"cuda:{i}", f"cuda:{i}") for i in range(self.gpus))]

    def run(self, action: act.Action) -> Outcome:
        self.ran.append(action)
        return super().run(action)


def test_one_gpu_runs_the_two_gpu_step_for_torchs_own_error() -> None:
    engine = CountingEngine(1)
    runner = lesson.LessonRunner(engine)
    runner.run_step(NUMBER["copy-between-gpus"] - 1)
    engine.ran.clear()
    result = runner.run_step(NUMBER["copy-between-gpus"])
    step = result.step
    assert result.ran and engine.ran and engine.ran[0] == step.actions[0]
    assert lesson.SECOND_GPU_ERROR in result.note and "one" in result.note
    assert "so it ran anyway" not in result.note  # it runs to show torch's error, and says so
    # what two GPUs print is shown, headed as such, never as what "a CUDA GPU" shows
    assert result.cuda_devices == 1 and result.shows_gpu
    assert result.gpu_heading() == "On a machine with 2 GPUs, expect:"


def test_with_cuda_no_meta_variant_and_no_gpu_transcript() -> None:
    engine = CountingEngine(2)
    runner = lesson.LessonRunner(engine)
    result = runner.run_step(NUMBER["choose-device"])
    assert result.note == "" and result.meta_outcomes == () and not result.shows_gpu
    mixed = runner.run_step(NUMBER["mixed-devices"])
    assert mixed.meta_outcomes == () and not mixed.shows_gpu
    assert not any(a in engine.ran for a in mixed.step.meta_variant)


# --- the actions the lesson added to the engine ------------------------------------------------

def d2l() -> dict[str, object]:
    namespace: dict[str, object] = {"torch": torch}
    exec(act.TRY_GPU_SOURCE, namespace)
    return namespace


@pytest.mark.parametrize("index", [0, 1, 10])
def test_try_gpu_is_the_d2l_function(engine: Engine, index: int) -> None:
    expected = d2l()["try_gpu"](index)  # type: ignore[operator]
    out = engine.run(act.TryGpu(index))
    assert out.ok and out.preview == repr(expected) and out.device == str(expected)


def test_try_all_gpus_is_the_d2l_function(engine: Engine) -> None:
    out = engine.run(act.TryAllGpus())
    assert out.ok and out.preview == repr(d2l()["try_all_gpus"]())  # type: ignore[operator]


def test_try_gpu_refuses_a_non_number(engine: Engine) -> None:
    out = engine.run(act.TryGpu("1"))  # type: ignore[arg-type]
    assert out.error is not None and not out.error.by_torch


def test_numpy_of_a_cpu_tensor_shares_memory(engine: Engine) -> None:
    engine.run(act.CreateTensor("x", "[1, 2, 3]"))
    out = engine.run(act.ToNumpy("x"))
    assert out.ok and out.preview == "array([1, 2, 3])" and out.copied is False
    assert engine.names() == ["x"]  # the array is shown, not kept
    moved = engine.run(act.ToNumpy(act.Ref("x", "to", device="cpu")))
    assert moved.ok and moved.copied is False  # .to('cpu') of a cpu tensor is the tensor


def test_numpy_of_a_meta_tensor_raises_like_torch(engine: Engine) -> None:
    engine.run(act.CreateFilled("m", "ones", (3,), device="meta"))
    out = engine.run(act.ToNumpy("m"))
    m = torch.ones(3, device="meta")
    assert out.error is not None
    assert (out.error.type_name, out.error.message) == torch_error(lambda: m.numpy())


def test_numpy_of_a_model_is_refused(engine: Engine) -> None:
    engine.run(act.CreateModel("net", 3, 1))
    out = engine.run(act.ToNumpy("net"))
    assert out.error is not None and not out.error.by_torch


def test_lesson_and_cli_import_neither_torch_nor_qt() -> None:
    code = ("import sys, gpumon.playground.lesson.results, gpumon.playground.kernel.lesson_runner, "
            "gpumon.cli.main; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('torch', 'PySide6', 'pyqtgraph')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_a_shared_runner_resets_only_the_lesson_s_names() -> None:
    from gpumon.playground.data import actions as act
    from gpumon.playground.kernel.engine import Engine
    from gpumon.playground.kernel.lesson_runner import LessonRunner
    from gpumon.playground.lesson.steps import LESSON

    engine = Engine()
    engine.run(act.CreateTensor("mine", "[1]"))
    runner = LessonRunner(engine, steps=LESSON, shared=True)
    last = len(LESSON)
    runner.run_step(last)  # replays every step before it
    made = set(engine.names()) - {"mine"}
    assert made  # the lesson's values are in the one workspace
    runner.run_step(2)  # not the next step: a reset
    assert "mine" in engine.names()
    assert LessonRunner(engine, steps=LESSON).reset() is None and engine.names() == []


def test_step_two_lists_nvidia_smi_s_uuids_beside_torch_s() -> None:
    snapshot = simulated_snapshot(2)
    result = lesson.LessonRunner(Engine(), lambda: snapshot).run_step(NUMBER["cuda-queries"])
    for gpu in snapshot.gpus:
        assert f"GPU {gpu.index}: {gpu.uuid}" in result.note
    assert "(simulated GPUs)" in result.note
    uuids = result.outcomes[-1]
    assert uuids.code.startswith("['GPU-' + str(torch.cuda.get_device_properties(i).uuid)")
    assert uuids.ok and uuids.preview == repr(
        ['GPU-' + str(torch.cuda.get_device_properties(i).uuid)
         for i in range(torch.cuda.device_count())])
    alone = lesson.LessonRunner(Engine()).run_step(NUMBER["cuda-queries"])
    assert "nvidia-smi lists no GPU here" in alone.note


def test_the_lesson_keeps_the_playgrounds_values_and_says_so() -> None:
    """The lesson overwrote the Playground's x and net without a word (issue 54, item 13):
    in the one workspace, a value of the user's that a step overwrites is kept under another
    name, and that step's note says which."""
    import torch

    from gpumon.playground.data import actions as act
    from gpumon.playground.kernel.engine import Engine
    from gpumon.playground.kernel.lesson_runner import LessonRunner
    from gpumon.playground.lesson.steps import LESSON

    engine = Engine()
    engine.run(act.CreateTensor("x", "[7, 8]"))
    engine.run(act.CreateTensor("x_mine", "[0]"))  # the first kept name is taken
    engine.run(act.CreateModel("net", 5, 2))
    engine.run(act.CreateTensor("other", "[1]"))
    mine_x, mine_net, other = engine.get("x"), engine.get("net"), engine.get("other")
    runner = LessonRunner(engine, steps=LESSON, shared=True)
    result = runner.run_step(NUMBER["tensor-on-cpu"])  # x = torch.tensor([1, 2, 3])
    assert engine.get("x_mine2") is mine_x and torch.equal(engine.get("x"),  # type: ignore[arg-type]
                                                           torch.tensor([1, 2, 3]))
    assert "The lesson uses the name x: your Playground's x is kept as x_mine2." in result.note
    later = runner.run_step(NUMBER["model-device"])  # makes net, after replaying to it
    assert engine.get("net_mine") is mine_net and engine.get("net") is not mine_net
    assert "your Playground's net is kept as net_mine." in later.note
    assert "x_mine" not in later.note  # said once, on the step that took the name
    assert engine.get("other") is other  # a name the lesson does not use is left alone
    runner.reset()  # forgets the lesson's names, never the kept ones
    assert {"x_mine", "x_mine2", "net_mine", "other"} <= set(engine.names())
    assert "x" not in engine.names() and "net" not in engine.names()
    alone = Engine()  # the lesson on its own workspace (gpumon lesson): nothing to keep
    alone.run(act.CreateTensor("x", "[7, 8]"))
    assert "kept as" not in LessonRunner(alone, steps=LESSON).run_step(
        NUMBER["tensor-on-cpu"]).note
