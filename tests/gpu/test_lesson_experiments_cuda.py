"""The lesson's experiments on a real GPU, with the lesson's claims checked against the numbers
they print: step 15's products return long before their work is done, and its
.item()-every-step loop is the slower once both are warmed up; step 16's big product is faster
on cuda:0 than on the CPU timed on all of torch's threads, and TF32 and bf16 beat float32 on a
GPU with tensor cores for them; exercise 4's two products on two GPUs at once take less time
than one after the other, and on one GPU, both on cuda:0, about the same. Skipped elsewhere,
with the reason."""

from __future__ import annotations

import ast

import pytest
import torch

from gpumon.playground.data.actions import RunCode
from gpumon.playground.kernel.engine import Engine
from gpumon.playground.kernel.lesson_runner import LessonRunner
from gpumon.playground.lesson.step_code import (
    ASYNC_N,
    ASYNC_TIMING,
    BENCHMARK,
    LOG_EVERY_STEP,
    ONE_GPU,
    PRECISION,
    TWO_GPUS,
)
from gpumon.playground.lesson.steps import LESSON

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU and CUDA torch"),
]
NUMBER = {s.id: i for i, s in enumerate(LESSON, start=1)}


def _on_cuda0(code: str) -> object:
    """``code`` run by the playground's engine with ``device`` = cuda:0; its value."""
    engine = Engine()
    assert engine.run(RunCode("device = torch.device('cuda:0')")).ok
    out = engine.run(RunCode(code))
    assert out.ok, out.error
    return ast.literal_eval(out.preview)


def test_step_15_the_products_return_long_before_their_work_is_done() -> None:
    values = _on_cuda0(f"{ASYNC_N}\na = torch.rand(n, n, device=device)\nb = a @ a\n"
                       f"{ASYNC_TIMING}")
    assert isinstance(values, tuple)
    returned, finished, share = values
    print(f"returned after {returned} ms, done at {finished} ms: {share}")
    assert returned < finished / 2  # measured on an H200: 0.5 of 54 ms


def test_step_15_item_every_step_is_the_slower_on_a_gpu() -> None:
    values = _on_cuda0(LOG_EVERY_STEP)
    assert isinstance(values, tuple)
    every_step, at_the_end, slower = values
    print(f".item() every step: {every_step} ms; one copy at the end: {at_the_end} ms; {slower}")
    assert every_step > at_the_end


def test_step_16_the_big_product_is_faster_on_the_gpu_than_on_all_cpu_threads() -> None:
    times = _on_cuda0(BENCHMARK)
    assert isinstance(times, dict)
    print(times, f"torch CPU threads: {torch.get_num_threads()}")
    assert times[(1000, "cuda:0")] < times[(1000, "cpu")]


@pytest.mark.skipif(torch.cuda.get_device_capability()[0] < 8 if torch.cuda.is_available()
                    else True, reason="TF32 and fast bf16 need tensor cores (compute 8.0+)")
def test_step_16_tf32_and_bf16_beat_float32_on_tensor_cores() -> None:
    speeds = _on_cuda0(PRECISION)
    assert isinstance(speeds, dict)
    print(speeds, torch.cuda.get_device_name(0))
    assert speeds["float32"] < min(speeds["tf32"], speeds["bfloat16"])
    assert torch.get_float32_matmul_precision() == "highest"  # this process untouched


@pytest.mark.skipif(torch.cuda.device_count() >= 2,
                    reason="with two GPUs, exercise 4 runs as written: the next test")
def test_exercise_4_on_one_gpu_runs_both_loops_on_cuda0_and_at_once_brings_nothing() -> None:
    result = LessonRunner(Engine()).run_step(NUMBER["two-gpus-at-once"])
    assert result.ran and result.actions == result.step.one_gpu_variant
    one_after_the_other, both_at_once, share = ast.literal_eval(result.outcomes[0].preview)
    print(f"on cuda:0 alone: {one_after_the_other} ms, then {both_at_once} ms ({share})")
    assert both_at_once >= 0.8 * one_after_the_other
    assert ONE_GPU == result.actions[0].code()


@pytest.mark.skipif(torch.cuda.device_count() < 2,
                    reason=f"exercise 4 needs two CUDA GPUs; torch sees "
                           f"{torch.cuda.device_count()}")
def test_exercise_4_two_gpus_at_once_beat_one_after_the_other() -> None:
    engine = Engine()
    out = engine.run(RunCode(TWO_GPUS))
    assert out.ok, out.error
    one_after_the_other, both_at_once, _share = ast.literal_eval(out.preview)
    print(f"one GPU after the other: {one_after_the_other} ms; both at once: {both_at_once} ms")
    assert both_at_once < 0.8 * one_after_the_other
    result = LessonRunner(Engine()).run_step(NUMBER["two-gpus-at-once"])
    assert result.ran and result.outcomes and result.outcomes[0].ok
