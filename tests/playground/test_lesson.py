"""The lesson: its steps, the runner's per-machine choices, and torch's real answers.

Errors are compared with what torch raises when the step's own code is executed directly
(with the engine's workspace as its variables), never with hand-copied text.
"""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
import torch
from testkit import cpu_only_build, torch_error

from gpumon.playground import actions as act
from gpumon.playground import lesson
from gpumon.playground.devices import DeviceOption
from gpumon.playground.engine import Engine
from gpumon.playground.errors import FALLBACK
from gpumon.playground.outcome import Outcome
from gpumon.telemetry.sampler import Sampler
from gpumon.telemetry.simulated import SimulatedSource
from gpumon.telemetry.smi_text import render
from gpumon.telemetry.types import Snapshot

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
    assert len(lesson.LESSON) == 16 and len(NUMBER) == 16  # ids are unique
    assert [s.source for s in lesson.LESSON] == ["book"] * 10 + ["English edition"] * 6
    assert lesson.LESSON[0].kind == "smi" and lesson.LESSON[0].code() == "nvidia-smi"
    assert all(s.kind == "torch" and s.actions for s in lesson.LESSON[1:])
    assert all(s.needs_cuda for s in lesson.LESSON if s.needs_two_gpus)
    assert [s.id for s in lesson.LESSON if s.needs_two_gpus] == ["copy-between-gpus"]


@pytest.mark.parametrize("step", lesson.LESSON, ids=lambda s: s.id)
def test_narration_is_two_to_four_sentences(step: lesson.LessonStep) -> None:
    sentences = re.findall(r"[.!?](?=\s|$)", step.narration)
    assert 2 <= len(sentences) <= 4, step.narration
    assert step.title and step.narration.endswith(".")


def test_book_steps_show_the_book_code() -> None:
    codes = {s.id: s.code() for s in lesson.LESSON}
    assert "torch.cuda.device_count()" in codes["cuda-queries"]
    assert codes["to-gpu"] == "x = x.cuda(0)"
    assert codes["results-stay"] == "y = x ** 2"
    assert codes["mixed-devices"] == "z = y + x.cpu()"
    assert "Z = X.cuda(1)" in codes["copy-between-gpus"]
    assert "Z2 = Z.cuda(1)" in codes["copy-between-gpus"]


def test_step_code_is_preamble_then_actions() -> None:
    step = lesson.LESSON[NUMBER["try-gpu"] - 1]
    assert step.code() == "\n".join([act.TRY_GPU_SOURCE, "", "try_gpu(0)", "try_gpu(10)",
                                     "try_all_gpus()"])
    compile(step.code(), "<lesson>", "exec")  # the shown code is real Python
    meta = lesson.LESSON[NUMBER["mixed-devices"] - 1].meta_code()
    assert meta.splitlines()[-1] == "zm = ym + x.cpu()"


# --- running every step ---------------------------------------------------------------------

def test_every_step_runs_and_yields_outcomes(results: list[lesson.StepResult]) -> None:
    assert [r.number for r in results] == list(range(1, 17))
    for r in results:
        assert r.step is lesson.LESSON[r.number - 1] and r.ran
        if r.step.kind == "smi":
            continue
        assert 1 <= len(r.outcomes) <= len(r.step.actions)
        assert [o.code for o in r.outcomes] == [a.code() for a in r.step.actions][
            :len(r.outcomes)]
        for o in r.outcomes:
            assert o.ok == (o.error is None)
            assert o.ok or (o.error is not None and o.error.message)


def test_steps_without_needs_run_cleanly(results: list[lesson.StepResult]) -> None:
    for r in results:
        if not r.step.needs_cuda and r.step.kind == "torch":
            assert all(o.ok for o in r.outcomes) and len(r.outcomes) == len(r.step.actions)
            assert r.note == ""


def test_step_one_renders_the_snapshot() -> None:
    snapshot = simulated_snapshot(3)
    result = lesson.LessonRunner(Engine(), lambda: snapshot).run_step(1)
    assert result.smi_text == render(snapshot) and result.outcomes == ()
    assert "simulated" in result.note


@pytest.mark.parametrize(("provider", "needle"), [
    (lambda: None, lesson.NO_TELEMETRY),
    (lambda: 1 / 0, "ZeroDivisionError"),
])
def test_step_one_without_telemetry(provider: object, needle: str) -> None:
    engine = Engine()
    result = lesson.LessonRunner(engine, provider).run_step(1)  # type: ignore[arg-type]
    assert result.smi_text is None and needle in result.note
    assert not engine.is_loaded  # nvidia-smi is no torch step: torch is not even imported


def test_a_step_alone_sees_what_the_earlier_steps_left(results: list[lesson.StepResult]) -> None:
    alone, _ = step_alone("mixed-devices")
    in_order = results[NUMBER["mixed-devices"] - 1]
    assert [(o.code, o.ok, o.preview) for o in alone.outcomes] == \
        [(o.code, o.ok, o.preview) for o in in_order.outcomes]


def test_running_a_step_twice_starts_again() -> None:
    runner = lesson.LessonRunner(Engine())
    first = runner.run_step(NUMBER["tensor-on-cpu"])
    again = runner.run_step(NUMBER["tensor-on-cpu"])
    assert [o.preview for o in first.outcomes] == [o.preview for o in again.outcomes]
    assert again.outcomes[0].ok


@pytest.mark.parametrize("number", [0, 17, -1])
def test_bad_step_numbers(number: int) -> None:
    with pytest.raises(IndexError, match="1 to 16"):
        lesson.LessonRunner(Engine()).run_step(number)


# --- a machine without CUDA: torch's real errors, then the meta variant -------------------------

CUDA_STEPS = [s.id for s in lesson.LESSON if s.needs_cuda]


@cpu_only_build
@pytest.mark.parametrize("step_id", CUDA_STEPS)
def test_cuda_steps_show_torchs_own_error(step_id: str) -> None:
    result, engine = step_alone(step_id, meta=False)
    failed = [o for o in result.outcomes if not o.ok]
    if not failed:  # runs on the CPU too (x.device, y = x ** 2): said so, not hidden
        assert result.note == lesson.NO_CUDA_RAN
        return
    error = failed[0].error
    assert error is not None and error.by_torch
    assert (error.type_name, error.message) == direct(engine, failed[0].code)
    assert error.explanation != FALLBACK
    assert result.note.startswith(lesson.NO_TWO_GPUS if result.step.needs_two_gpus
                                  else lesson.NO_CUDA_ERROR)
    if len(result.outcomes) < len(result.step.actions):
        assert lesson.STOPPED in result.note


@cpu_only_build
def test_the_not_compiled_error_is_shown(results: list[lesson.StepResult]) -> None:
    expected = torch_error(lambda: torch.cuda.current_device())
    assert expected is not None and "Torch not compiled with CUDA enabled" in expected[1]
    shown = [(o.error.type_name, o.error.message) for r in results for o in r.outcomes
             if o.error is not None]
    assert expected in shown


@cpu_only_build
@pytest.mark.parametrize("step_id", ["mixed-devices", "model-on-gpu"])
def test_meta_variants_raise_the_same_device_error(step_id: str) -> None:
    result, engine = step_alone(step_id)
    assert lesson.META_RAN in result.note
    assert len(result.meta_outcomes) == len(result.step.meta_variant)
    last = result.meta_outcomes[-1]
    assert last.error is not None and last.error.by_torch
    assert "is not on the expected device" in last.error.message
    assert (last.error.type_name, last.error.message) == direct(engine, last.code)
    assert all(o.ok for o in result.meta_outcomes[:-1])


@cpu_only_build
def test_meta_numpy_needs_a_copy_to_the_host() -> None:
    result, engine = step_alone("copy-to-host")
    last = result.meta_outcomes[-1]
    assert last.error is not None and last.code == "hm.numpy()"
    assert (last.error.type_name, last.error.message) == direct(engine, last.code)
    assert ".cpu()" in last.error.explanation


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


def test_one_gpu_says_so_and_does_not_run_the_two_gpu_step() -> None:
    engine = CountingEngine(1)
    runner = lesson.LessonRunner(engine)
    runner.run_step(NUMBER["copy-between-gpus"] - 1)
    engine.ran.clear()
    result = runner.run_step(NUMBER["copy-between-gpus"])
    assert not result.ran and result.outcomes == () and engine.ran == []
    assert result.note == lesson.NO_SECOND_GPU and "two GPUs" in result.note
    assert result.cuda_devices == 1


def test_with_cuda_no_meta_variant_and_no_note() -> None:
    engine = CountingEngine(2)
    result = lesson.LessonRunner(engine).run_step(NUMBER["try-gpu"])
    assert result.note == "" and result.meta_outcomes == ()
    assert not any(a in engine.ran for a in lesson.LESSON[NUMBER["mixed-devices"] - 1].meta_variant)


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
    code = ("import sys, gpumon.playground.lesson, gpumon.cli; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('torch', 'PySide6', 'pyqtgraph')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_a_shared_runner_resets_only_the_lesson_s_names() -> None:
    from gpumon.playground import actions as act
    from gpumon.playground.engine import Engine
    from gpumon.playground.lesson import LESSON, LessonRunner

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
