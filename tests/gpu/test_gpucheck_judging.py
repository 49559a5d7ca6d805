"""How the GPU check judges what it saw, without a GPU: the kernel's memory lines and NVML
presence, the lesson's text, pytest's results, and the summary's exit status."""

from __future__ import annotations

from pathlib import Path

from gpumon.playground.data.actions import RunCode
from gpumon.playground.data.errors import ErrorInfo
from gpumon.playground.data.outcome import Outcome
from tests.gpu.gpucheck import kernel_walk as kw
from tests.gpu.gpucheck import runs
from tests.gpu.gpucheck.results import FAIL, PASS, SKIP, Result, exit_status, summary_text

MIB = 2**20


def _outcome(ok: bool = True, error: ErrorInfo | None = None) -> Outcome:
    return Outcome(RunCode("x"), "x", ok, 0.0, 0.0, error=error)


def _row(step: str, alloc: int | None, reserved: int | None, mine: int | None, used: int | None,
         on: str, expect: str = "ok", out: Outcome | None = None) -> dict[str, object]:
    return {"step": step, "code": "", "ok": True, "error": "", "torch_allocated_bytes": alloc,
            "torch_reserved_bytes": reserved, "nvml_kernel_used_bytes": mine,
            "nvml_device_used_bytes": used, "kernel_on_nvml_gpus": on,
            "_outcome": out or _outcome(), "_expect": expect}


GOOD = [
    _row("create", None, None, None, 1 * MIB, ""),
    _row("move", 4 * MIB, 20 * MIB, 520 * MIB, 600 * MIB, "1"),
    _row("forward", 8 * MIB, 22 * MIB, 522 * MIB, 602 * MIB, "1"),
    _row("del", 0, 22 * MIB, 522 * MIB, 602 * MIB, "1"),
    _row("empty_cache", 0, 2 * MIB, 502 * MIB, 582 * MIB, "1"),
]


def test_the_walk_steps_name_the_device_and_the_oom_size() -> None:
    steps = {s.name: s for s in kw.steps_for("cuda:1", 10)}
    assert steps["model"].code == "net = nn.Linear(3, 1).cuda(1)"
    assert steps["oom"].expect == "oom" and "torch.empty(10," in steps["oom"].code
    assert kw.steps_for("cuda:0", 1)[3].code == "net = nn.Linear(3, 1).cuda()"
    assert "oom" not in {s.name for s in kw.steps_for("cpu", None)}


def test_a_good_walk_has_no_problems() -> None:
    assert kw.order_problems(GOOD) == []
    assert kw.presence_problems(GOOD, 1) == []
    assert kw.cache_problems(GOOD) == []
    assert kw.outcome_problems(GOOD) == []


def test_reserved_above_what_nvml_gives_the_kernel_is_a_problem() -> None:
    rows = [*GOOD[:2], _row("forward", 8 * MIB, 900 * MIB, 522 * MIB, 602 * MIB, "1")]
    assert kw.order_problems(rows) == [
        f"forward: torch_reserved_bytes {900 * MIB} > nvml_kernel_used_bytes {522 * MIB}"]
    missing = [_row("move", 1, 2, None, 3, "1")]
    assert kw.order_problems(missing) == ["move: no nvml_kernel_used_bytes"]
    # CUDA started (devices listed) but nothing allocated: NVML need not list the kernel yet
    assert kw.order_problems([_row("create", 0, 0, None, 1, "")]) == []


def test_a_context_on_another_gpu_or_too_early_is_a_problem() -> None:
    rows = [_row("create", None, None, None, 1, "1"), _row("move", 1, 2, 3, 4, "0 1")]
    assert kw.presence_problems(rows, 1) == [
        "create: the kernel is on NVML GPUs [1], expected []",
        "move: the kernel is on NVML GPUs [0, 1], expected [1]"]


def test_empty_cache_that_frees_nothing_is_a_problem() -> None:
    rows = [*GOOD[:4], _row("empty_cache", 0, 22 * MIB, 522 * MIB, 602 * MIB, "1")]
    assert kw.cache_problems(rows) == [f"empty_cache left reserved at {22 * MIB} "
                                       f"(was {22 * MIB})"]


def test_the_oom_step_needs_torch_s_own_out_of_memory_error() -> None:
    torch_oom = ErrorInfo("OutOfMemoryError", "CUDA out of memory. Tried to allocate 280 GiB",
                          "why")
    refusal = ErrorInfo("Refusal", "Not allocated: 280 GiB would not fit", "why",
                        by_torch=False)
    good = [_row("oom", 0, 0, 0, 0, "", "oom", _outcome(False, torch_oom))]
    assert kw.outcome_problems(good) == []
    refused = [_row("oom", 0, 0, 0, 0, "", "oom", _outcome(False, refusal))]
    assert "gpumon (before torch ran)" in kw.outcome_problems(refused)[0]
    ran = [_row("oom", 0, 0, 0, 0, "", "oom", _outcome(True))]
    assert "no error" in kw.outcome_problems(ran)[0]


def _lesson(*blocks: str) -> str:
    total = len(blocks)
    return "\n".join(f"Step {i} of {total}: t  [book]\n{b}\n" for i, b in enumerate(blocks, 1))


def test_lesson_problems_on_a_gpu_machine() -> None:
    good = _lesson("  $ nvidia-smi", "  >>> x = x.cuda()\n    device: cuda:0")
    assert runs.lesson_problems(good, cuda_count=1) == []
    assert runs.lesson_problems(good.replace("Step 2 of 2", "Step 3 of 2"), 1) == [
        "step 2 is missing"]
    refused = _lesson(f"    Refusal: no{runs.REFUSED}", "    device: cuda:0")
    assert runs.lesson_problems(refused, 1) == ["step 1: gpumon refused a line before torch ran"]
    no_cuda = _lesson("  Note: This step needs a CUDA GPU; PyTorch here\n  has none, so",
                      "    # not run")
    assert runs.lesson_problems(no_cuda, 1) == [
        "step 1: the lesson saw no CUDA GPU", "step 2: some lines did not run",
        "no result of the lesson is on cuda:0"]
    two = _lesson("    # not run\n  Note: This step needs two GPUs; PyTorch here has one",
                  "    # device: cuda:0")
    assert runs.lesson_problems(two, 1) == []
    assert runs.lesson_problems(two, 2) == ["step 1: some lines did not run"]
    exercise = _lesson("  Note: This step needs 2 GPUs and PyTorch here sees 1, so it was not\n"
                       "  run", "    # device: cuda:0")
    assert runs.lesson_problems(exercise, 1) == []
    assert runs.lesson_problems(exercise, 2) == ["step 1: it was not run"]
    assert runs.lesson_problems(no_cuda, 0) == []  # a dry run: torch's errors are the lesson


JUNIT = """<?xml version="1.0"?><testsuites><testsuite>
<testcase classname="tests.gpu.test_kernel_cuda" name="test_oom"/>
<testcase classname="tests.gpu.test_playground_cuda" name="test_move">
  <skipped message="needs a CUDA GPU and CUDA torch"/></testcase>
<testcase classname="" name="tests.gpu.test_ui_cuda"><skipped message="collection skipped"/>
</testcase>
<testcase classname="tests.telemetry.test_x" name="test_y"><failure message="boom"/></testcase>
</testsuite></testsuites>"""


def test_pytest_results_on_a_gpu_machine_may_not_skip_gpu_tests() -> None:
    cases = runs.junit_cases(JUNIT)
    assert [c.outcome for c in cases] == ["passed", "skipped", "skipped", "failed"]
    problems = runs.pytest_problems(cases, gpu_expected=True, qt=False)
    assert problems == [
        "tests.telemetry.test_x::test_y failed: boom",
        "tests.gpu.test_playground_cuda::test_move skipped on a GPU machine: needs a CUDA GPU "
        "and CUDA torch"]
    with_qt = runs.pytest_problems(cases, gpu_expected=True, qt=True)
    assert any("test_ui_cuda" in p for p in with_qt)  # with Qt the window's test must run
    assert runs.pytest_problems(cases, gpu_expected=False, qt=False) == [problems[0]]


def test_the_summary_says_dry_run_and_any_fail_exits_non_zero(tmp_path: Path) -> None:
    results = [Result("a", PASS, "fine"), Result("b", SKIP, "one GPU only")]
    text = summary_text({"driver": "550"}, results, dry_run=True)
    assert "DRY RUN, no GPU" in text and "| b | SKIP | one GPU only |" in text
    assert "**1 PASS, 0 FAIL, 1 SKIP**" in text
    assert exit_status(results) == 0
    assert exit_status([*results, Result("c", FAIL, "differs")]) == 1
    assert "DRY RUN" not in summary_text({}, results, dry_run=False)
