"""The checks that run a whole program and judge its output: ``gpumon lesson`` and pytest."""

from __future__ import annotations

import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass

from tests.gpu.gpucheck.context import Context
from tests.gpu.gpucheck.lesson_claims import claim_problems
from tests.gpu.gpucheck.results import FAIL, PASS, Result, verdict, write_table

_STEP = re.compile(r"^Step (\d+) of (\d+): ", re.MULTILINE)
REFUSED = "(gpumon refused it before torch ran)"
#: How the lesson marks a line it did not run (a comment, as a transcript shows gpumon's words).
NOT_RUN = "# not run"


def lesson_blocks(text: str) -> tuple[int, dict[int, str]]:
    """The lesson's step count and each step's text, from ``gpumon lesson``'s output."""
    marks = list(_STEP.finditer(text))
    total = int(marks[0].group(2)) if marks else 0
    blocks = {}
    for i, m in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(text)
        blocks[int(m.group(1))] = text[m.start():end]
    return total, blocks


def lesson_problems(text: str, cuda_count: int) -> list[str]:
    """What is wrong with a lesson run on a machine with ``cuda_count`` CUDA devices: a step
    missing, a refusal by gpumon, or (with CUDA) a step that ran without it or did not run."""
    total, blocks = lesson_blocks(text)
    if total == 0:
        return ["no 'Step 1 of N' heading in the output"]
    problems = [f"step {n} is missing" for n in range(1, total + 1) if n not in blocks]
    for n, block in sorted(blocks.items()):
        if REFUSED in block:
            problems.append(f"step {n}: gpumon refused a line before torch ran")
        if cuda_count == 0:
            continue
        flat = " ".join(block.split())
        if "PyTorch here has none" in flat:
            problems.append(f"step {n}: the lesson saw no CUDA GPU")
        two = "needs two GPUs" in flat or "needs 2 GPUs" in flat
        if NOT_RUN in block and not (two and cuda_count < 2):
            problems.append(f"step {n}: some lines did not run")
        if "so it was not run" in flat and not (two and cuda_count < 2):
            problems.append(f"step {n}: it was not run")
    if cuda_count and "device: cuda:0" not in text:
        problems.append("no result of the lesson is on cuda:0")
    return problems


def check_lesson(ctx: Context, cuda_count: int) -> Result:
    """``gpumon lesson`` end to end; its whole output saved. In English whatever the
    machine's locale: the judging reads the English headings and notes."""
    proc = ctx.run(ctx.gpumon("--lang", "en", "lesson"), timeout=120)
    files = [ctx.save("lesson.txt", proc.stdout), ctx.save("lesson-stderr.txt", proc.stderr)]
    problems = lesson_problems(proc.stdout, cuda_count)
    # what each step says, held against what it printed here (durations only on a GPU, where
    # their margins are wide: lesson_claims.py)
    problems += claim_problems(proc.stdout, cuda_count, timed=cuda_count > 0)
    if proc.returncode != 0:
        problems.insert(0, f"gpumon lesson exited {proc.returncode}")
    total, _ = lesson_blocks(proc.stdout)
    where = "on cuda:0" if cuda_count else "without CUDA (dry run: the CUDA steps show torch's " \
                                           "real error, the GPU criteria are not applied)"
    outcome, reason = verdict(problems, f"all {total} steps ran {where}")
    return Result("gpumon lesson", outcome, reason, files)


@dataclass(frozen=True)
class TestCase:
    file: str
    name: str
    outcome: str  # "passed", "failed", "error", "skipped"
    message: str


def junit_cases(xml_text: str) -> list[TestCase]:
    """Every test case of pytest's JUnit XML, with its outcome and message."""
    cases = []
    for case in ET.fromstring(xml_text).iter("testcase"):
        outcome, message = "passed", ""
        for child in case:
            if child.tag in ("failure", "error", "skipped"):
                outcome = {"failure": "failed"}.get(child.tag, child.tag)
                message = (child.get("message") or "").strip()
                break
        cases.append(TestCase(case.get("classname", ""), case.get("name", ""), outcome,
                              message))
    return cases


def pytest_problems(cases: Sequence[TestCase], gpu_expected: bool, qt: bool) -> list[str]:
    """Failures and errors; and on a GPU machine a skipped GPU test (only the window's may
    skip, and only without Qt): a GPU test that skips there proves nothing."""
    problems = [f"{c.file}::{c.name} {c.outcome}: {' '.join(c.message.split())[:160]}"
                for c in cases if c.outcome in ("failed", "error")]
    if gpu_expected:
        for c in cases:
            where = c.file or c.name  # a module skipped whole has no class name, only a name
            if c.outcome == "skipped" and where.startswith("tests.gpu.") and \
                    not (where.endswith("test_ui_cuda") and not qt):
                problems.append(f"{where}::{c.name} skipped on a GPU machine: {c.message}")
    return problems


def check_pytest(ctx: Context, dirs: Sequence[str], qt: bool, gpu_expected: bool) -> Result:
    """pytest on ``dirs`` (real driver, CUDA torch); without Qt, its plugins are left out."""
    xml_name = "pytest-junit.xml"
    # -p no:benchmark: pytest-benchmark (found on a GPU machine) has no tests here, and up
    # to 5.2 it warns at configure, which filterwarnings=error made an INTERNALERROR
    args = [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider",
            "-p", "no:benchmark", f"--junitxml={ctx.out / xml_name}",
            "--ignore=tests/gpu/test_check_dry_run.py",  # it runs this check: no recursion
            *dirs]
    if ctx.dry_run:  # the Qt blocker hides them; their entry points must not load
        args[4:4] = ["-p", "no:pytest-qt", "-p", "no:timeout"]
    limit = ctx.left() - 5
    try:
        proc = ctx.run(args, timeout=limit)
    except subprocess.TimeoutExpired as exc:
        partial = exc.stdout.decode() if isinstance(exc.stdout, bytes) else exc.stdout or ""
        return Result("pytest " + " ".join(dirs), FAIL,
                      f"pytest did not finish in the {limit:.0f} s left of the budget "
                      "(--budget); its output so far is saved",
                      [ctx.save("pytest-output.txt", partial)])
    files = [ctx.save("pytest-output.txt", proc.stdout + proc.stderr)]
    xml_path = ctx.out / xml_name
    if not xml_path.exists():
        tail = (proc.stdout + proc.stderr).strip().splitlines()[-3:]
        return Result("pytest " + " ".join(dirs), FAIL,
                      f"pytest exited {proc.returncode} without results: {' / '.join(tail)}",
                      files)
    cases = junit_cases(xml_path.read_text(encoding="utf-8"))
    files += [xml_name, *write_table(ctx.out, "pytest-cases", cases)]
    counts = {o: sum(c.outcome == o for c in cases)
              for o in ("passed", "failed", "error", "skipped")}
    summary = ", ".join(f"{n} {o}" for o, n in counts.items())
    problems = pytest_problems(cases, gpu_expected, qt)
    if proc.returncode not in (0, 1) or (proc.returncode == 1 and not problems):
        problems.insert(0, f"pytest exited {proc.returncode}")
    outcome, reason = verdict(problems, summary)
    if outcome == FAIL and "numpy" not in ctx.torch.get("packages", ["numpy"]) and \
            any("numpy" in c.message.lower() for c in cases if c.outcome != "passed"):
        reason += (" (numpy is not installed here: gpumon depends on it, and the tests that "
                   "name it need it)")
    return Result("pytest " + " ".join(dirs), outcome,
                  reason if outcome == PASS else f"{summary}: {reason}", files)
