"""The lesson's new steps run for real on CPU torch and on the meta device: the device chosen
once, asynchronous execution and logging, the benchmark timings, memory, saving and loading.

Values are compared with what torch itself gives for the same code, never with copied text.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
import torch
from testkit import cpu_only_build, torch_error

from gpumon.playground.kernel.engine import Engine
from gpumon.playground.kernel.lesson_runner import LessonRunner
from gpumon.playground.lesson.checkpoint_path import SAVED_ON_CUDA
from gpumon.playground.lesson.results import StepResult
from gpumon.playground.lesson.steps import LESSON

# The timing step in this process: a short budget (tests/conftest.py says why).

NUMBER = {step.id: i for i, step in enumerate(LESSON, start=1)}


def run(step_id: str, meta: bool = True) -> tuple[StepResult, Engine]:
    engine = Engine()
    return LessonRunner(engine).run_step(NUMBER[step_id], meta), engine


def by_code(result: StepResult) -> dict[str, object]:
    return {o.code: o for o in (*result.outcomes, *result.meta_outcomes)}


def test_device_is_chosen_once_and_later_steps_use_it() -> None:
    result, engine = run("create-on-device")
    expected = torch.device("cuda:0") if torch.cuda.device_count() else torch.device("cpu")
    assert engine.get("device") == expected  # type: ignore[comparison-overlap]
    assert [o.device for o in result.outcomes] == [str(expected)] * 2
    assert all(o.ok for o in result.outcomes)


@cpu_only_build
def test_x_cuda_returns_a_copy_shown_on_meta() -> None:
    result, engine = run("to-gpu")
    first, device = result.meta_outcomes
    assert first.ok and first.device == "meta"
    assert device.preview == "device(type='cpu')"  # x itself did not move
    assert engine.get("x").device.type == "cpu"  # type: ignore[union-attr]


@cpu_only_build
def test_a_model_moves_in_place_shown_on_meta() -> None:
    runner = LessonRunner(Engine())
    result = runner.run_step(NUMBER["model-device"])
    moved = by_code(result)["net_m.to('meta')"]
    params = by_code(result)["[p.device for p in net_m.parameters()]"]
    assert moved.ok and moved.device == "meta"  # type: ignore[attr-defined]
    assert params.preview == "[device(type='meta'), device(type='meta')]"  # type: ignore[attr-defined]


@cpu_only_build
def test_copies_to_the_host_on_cpu_and_meta() -> None:
    result, engine = run("copy-to-host")
    failed = [o.code for o in result.outcomes if not o.ok]
    assert failed == ["w.numpy()"], failed  # a tensor that requires grad, on every device
    shown = by_code(result)
    assert shown["h.sum().item()"].preview == "6.0"  # type: ignore[attr-defined]
    assert shown["h.tolist()"].preview == "[1.0, 2.0, 3.0]"  # type: ignore[attr-defined]
    assert shown["h.numpy()"].copied is False  # type: ignore[attr-defined]  # shares memory
    h = engine.get("h")
    meta = torch.ones(3, device="meta")
    for code, fn in (("hm.numpy()", meta.numpy), ("hm.cpu()", meta.cpu),
                     ("hm.sum().item()", lambda: meta.sum().item())):
        out = shown[code]
        assert out.error is not None  # type: ignore[attr-defined]
        assert (out.error.type_name, out.error.message) == torch_error(fn)  # type: ignore[attr-defined]
    assert h is not None and h.device.type == "cpu"


def test_asynchronous_step_times_with_and_without_synchronize() -> None:
    result, _ = run("asynchronous")
    assert all(o.ok for o in result.outcomes), [o.error for o in result.outcomes]
    size, timing = result.outcomes[0].preview, result.outcomes[3].preview
    # .item() at every step, its own step (the English edition's exercise) right after
    result, engine = run("item-every-step")
    assert all(o.ok for o in result.outcomes), [o.error for o in result.outcomes]
    logging = result.outcomes[0].preview
    assert size == ("4096" if torch.cuda.device_count() else "256")  # the CPU's: quick
    number = r"[0-9]+\.[0-9]+"  # numbers, not English sentences: they read in every language
    match = re.fullmatch(rf"\(({number}), ({number}), '(\d+)%'\)", timing)
    assert match, timing
    returned, done, share = float(match[1]), float(match[2]), int(match[3])
    assert done >= returned and share == round(100 * returned / done)  # the share it prints
    match = re.fullmatch(rf"\(({number}), ({number}), '([+-]\d+)%'\)", logging)
    assert match, logging
    every, end, slower = float(match[1]), float(match[2]), int(match[3])
    assert abs(slower - 100 * (every / end - 1)) <= 1  # printed rounded, from its two times
    # the loop's model is small on the CPU and the H200's measured size on a GPU
    model = engine.get("model")
    assert isinstance(model, torch.nn.Linear)
    assert model.in_features == (2048 if torch.cuda.device_count() else 64)


def test_timing_step_gives_a_median_for_every_size_on_every_device() -> None:
    result, engine = run("timing")
    assert result.outcomes[0].ok, result.outcomes[0].error
    times = engine.get("times")
    devices = ["cpu"] + (["cuda:0"] if torch.cuda.device_count() else [])
    assert isinstance(times, dict)
    assert sorted(times) == sorted((n, d) for d in devices for n in (10, 1000))
    assert all(isinstance(v, float) and v > 0 for v in times.values())
    threads = result.outcomes[0]
    assert threads.code == "torch.get_num_threads()" and threads.preview == \
        str(torch.get_num_threads())  # the engine's own, what Timer is given


def test_timing_step_measures_tflops_per_precision_and_restores_the_default() -> None:
    assert torch.get_float32_matmul_precision() == "highest"
    result, engine = run("timing")
    precision = result.outcomes[2]
    assert precision.ok, precision.error
    speeds = engine.get("speeds")
    assert isinstance(speeds, dict) and list(speeds) == ["float32", "tf32", "bfloat16"]
    assert all(isinstance(v, float) and v > 0 for v in speeds.values())
    assert engine.get("n") == (8192 if torch.cuda.device_count() else 512)
    # TF32 was allowed for one measurement only: later code gets float32 products again
    assert torch.get_float32_matmul_precision() == "highest"


# The memory step in a fresh interpreter, as the lesson runs it in its kernel: a test worker's
# C heap holds free blocks whose pages are resident after the tests before (a 64 MiB tensor
# was served from one, and RSS did not move: a CI run failed on that).
MEMORY_STEP = """
import json
from gpumon.playground.kernel.engine import Engine
from gpumon.playground.kernel.lesson_runner import LessonRunner
from gpumon.playground.lesson.steps import LESSON
number = next(i for i, s in enumerate(LESSON, start=1) if s.id == "memory")
result = LessonRunner(Engine()).run_step(number, True)
made, _, deleted = result.outcomes[:3]
rss = [made.reading("cpu", after=False), made.reading("cpu"), deleted.reading("cpu")]
print(json.dumps({"ok": [o.ok for o in result.outcomes], "code": made.code,
                  "rss": [r and r.rss_bytes for r in rss]}))
"""


@cpu_only_build
def test_memory_step_moves_this_process_s_memory_on_the_cpu() -> None:
    done = subprocess.run([sys.executable, "-c", MEMORY_STEP], capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    got = json.loads(done.stdout.splitlines()[-1])
    assert all(got["ok"]), got
    before, after, gone = got["rss"]
    assert None not in (before, after, gone), got
    assert after - before >= 60 * 2**20, got  # 64 MiB of ones, touched
    assert after - gone >= 60 * 2**20, got  # del gives it back (a big block)


def test_save_and_load_across_devices() -> None:
    result, engine = run("save-load")
    shown = by_code(result)
    net = engine.get("net")
    assert isinstance(net, torch.nn.Module)
    loaded = shown["torch.load(path, map_location=device)"]
    assert loaded.ok and loaded.preview == repr(net.state_dict())  # type: ignore[attr-defined]
    raw = shown["torch.load(SAVED_ON_CUDA)"]
    if torch.cuda.is_available():
        assert raw.ok  # type: ignore[attr-defined]
    else:  # the classic error, as torch raises it here for that file
        assert raw.error is not None  # type: ignore[attr-defined]
        assert (raw.error.type_name, raw.error.message) == \
            torch_error(lambda: torch.load(SAVED_ON_CUDA))  # type: ignore[attr-defined]
        assert "map_location='cpu'" in raw.error.explanation  # type: ignore[attr-defined]
    mapped = shown["torch.load(SAVED_ON_CUDA, map_location='cpu')"]
    assert mapped.preview == repr(torch.load(SAVED_ON_CUDA, map_location="cpu"))  # type: ignore[attr-defined]


@cpu_only_build
def test_meta_variants_of_the_cuda_steps_all_run() -> None:
    runner = LessonRunner(Engine())
    results = list(runner.run_all())
    ran = [r for r in results if r.step.meta_variant]
    assert ran and all(len(r.meta_outcomes) == len(r.step.meta_variant) for r in ran)


@pytest.mark.parametrize("step_id", ["asynchronous", "timing", "memory"])
def test_slow_steps_are_not_replayed_when_jumping_past_them(step_id: str) -> None:
    engine = Engine()
    runner = LessonRunner(engine)
    runner.run_step(NUMBER[step_id] + 1)
    made = {"asynchronous": "b", "timing": "times", "memory": "big_net"}[step_id]
    assert made not in engine.names()
