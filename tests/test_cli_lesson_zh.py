"""`gpumon lesson` in Chinese: the system locale (in a program) or --lang chooses Chinese; our
narration, notes and glossary are Chinese, while code and torch's own values and messages
are printed exactly as torch wrote them. Wrapping by terminal columns is checked too."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from testkit import torch_error

from gpumon import i18n
from gpumon.cli.lesson import CLOSING, OPENING, WIDTH, wrap
from gpumon.cli.main import main
from gpumon.playground.lesson.glossary import GLOSSARY
from gpumon.playground.lesson.steps import LESSON
from gpumon.text.smi_text import cells

ROOT = Path(__file__).resolve().parent.parent
NUMBER = {step.id: i for i, step in enumerate(LESSON, start=1)}
STEP = {step.id: step for step in LESSON}
TOTAL = len(LESSON)


def lesson(*args: str, lang: str | None = None) -> str:
    """``gpumon [--lang] lesson ARGS`` in a fresh process, LANG=zh_CN.UTF-8 unless ``lang``."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG")}
    env.update(LANG="zh_CN.UTF-8" if lang is None else "C.UTF-8", PYTHONIOENCODING="utf-8",
               PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")])))
    argv = ["--lang", lang] if lang else []
    done = subprocess.run([sys.executable, "-m", "gpumon", *argv, "lesson", *args],
                          capture_output=True, text=True, encoding="utf-8", env=env,
                          timeout=120, check=False)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    return done.stdout


def lesson_here(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    """``gpumon --lang zh_CN lesson ARGS`` in this process (torch is imported here already)."""
    assert main(["--lang", "zh_CN", "lesson", *args]) == 0
    out, err = capsys.readouterr()
    assert err == "", err
    return out


def chinese(message: str, **fields: object) -> str:
    """``message`` in Chinese, as the catalogue has it."""
    i18n.set_language("zh_CN")
    try:
        return i18n.tr(message, **fields)
    finally:
        i18n.set_language("en")


def flat(text: str) -> str:
    """The text without any white space: a line may break at a space or, in Chinese,
    between two characters."""
    return re.sub(r"\s+", "", text)


@pytest.mark.slow
def test_the_system_locale_chooses_chinese_narration_with_torchs_own_error() -> None:
    step = STEP["mixed-devices"]
    out = lesson("--step", str(NUMBER["mixed-devices"]))
    assert out.startswith(chinese("Step {number} of {total}: {title}  [{source}]",
                                  number=NUMBER["mixed-devices"], total=TOTAL,
                                  title=chinese(step.title), source=chinese("book")))
    assert out.startswith(f"第 {NUMBER['mixed-devices']} 步（共 {TOTAL} 步）：操作数在不同设备上")
    assert "[中文版]" in out.splitlines()[0] and "原书" not in out  # 原书 reads as the original
    assert chinese(step.narration) != step.narration
    assert flat(chinese(step.narration)) in flat(out)
    assert flat(step.narration) not in flat(out)
    assert ">>> z = y + x.cpu()" in out  # code as it is
    x = torch.tensor([1, 2, 3])
    if torch.cuda.is_available():  # the real error, as torch writes it
        y = x.cuda() ** 2
        error = torch_error(lambda: y + x.cpu())
    else:  # torch's error on the meta device, and what a GPU prints, headed as such
        m = torch.tensor([1, 2, 3], device="meta")
        error = torch_error(lambda: m ** 2 + x.cpu())
        assert step.on_gpu[0] in out
        assert chinese("On a CUDA GPU, this step shows (not run here):") in out
        assert "在 CUDA GPU 上，这一步的输出如下（并未在这里运行）：" in out
    assert error is not None and f"{error[0]}: {error[1]}" in out
    assert "原因：" in out and "why: " not in out


def test_lang_option_and_an_error_torch_raises_here(capsys: pytest.CaptureFixture[str]) -> None:
    """`gpumon --lang zh_CN lesson`: the step that meets torch's error first on this machine."""
    out = lesson_here(capsys, "--step", str(NUMBER["to-gpu"]))
    assert out.startswith(f"第 {NUMBER['to-gpu']} 步（共 {TOTAL} 步）：把张量复制到 GPU")
    assert flat(chinese(STEP["to-gpu"].narration)) in flat(out)
    if torch.cuda.is_available():
        assert "设备：cuda:0" in out and "tensor([1, 2, 3], device='cuda:0')" in out
        return
    error = torch_error(lambda: torch.tensor([1, 2, 3]).cuda(0))
    assert error is not None and f"{error[0]}: {error[1]}" in out
    assert "说明：这一步需要CUDAGPU" in flat(out) and "# 未运行" in out


def test_glossary_pairs_each_chinese_term_with_the_english_word() -> None:
    out = lesson("--step", str(NUMBER["glossary"]))
    lines = out.splitlines()
    assert "术语表" in lines[0]
    for pair in (("张量", "tensor"), ("设备", "device"), ("显存", "GPU memory"),
                 ("内存", "host memory"), ("CUDA 上下文", "CUDA context"),
                 ("缓存分配器", "caching allocator"), ("同步", "synchronize"),
                 ("异步", "asynchronous"), ("流", "stream"),
                 ("主机到设备的复制", "host-to-device copy")):
        row = next((line for line in lines if line.lstrip().startswith(pair[0] + " ")), "")
        assert pair[1] in row, (pair, row)
    assert len([line for line in lines if line.startswith("  ") and not
                line.startswith("   ")]) >= len(GLOSSARY) + 1  # one row each, and the heading
    assert all(cells(line) <= WIDTH for line in lines), [x for x in lines if cells(x) > WIDTH]


def test_english_glossary_has_each_term_with_its_meaning() -> None:
    out = lesson("--step", str(NUMBER["glossary"]), lang="en")
    assert out.startswith(f"Step 2 of {TOTAL}: Glossary")
    for term in GLOSSARY:
        row = next(line for line in out.splitlines() if line.startswith(f"  {term.term}  "))
        assert term.meaning.split()[0] in row
    assert "English word" not in out  # no column that repeats the term


@pytest.mark.slow
def test_the_whole_chinese_lesson_keeps_within_the_terminal_width(
        capsys: pytest.CaptureFixture[str]) -> None:
    """Our wrapped text stays within 88 columns (code and torch's lines are printed whole)."""
    out = lesson_here(capsys, "--simulate", "1")
    for number in range(1, TOTAL + 1):
        assert f"第 {number} 步（共 {TOTAL} 步）" in out
    narration = [line for line in out.splitlines() if line.startswith("  ")
                 and re.search("[\u4e00-\u9fff]", line) and ">>>" not in line
                 and not line.startswith(("    ", "  ... "))]  # code keeps its lines whole
    assert narration and all(cells(line) <= WIDTH for line in narration), \
        [line for line in narration if cells(line) > WIDTH]
    assert not [line for line in out.splitlines() if line.strip()[:1] in CLOSING]


PIECES = st.sampled_from(["张", "量", "，", "。", "（", "）", "x.cuda(0)", "tensor",
                          "torch.version.cuda", "a", "“", "”", "：", "显存", ".item()"])


@given(st.lists(st.tuples(PIECES, st.booleans()), max_size=60), st.integers(12, 60))
def test_wrap_keeps_every_character_within_the_width(parts: list[tuple[str, bool]],
                                                    width: int) -> None:
    text = "".join((" " if space else "") + p for p, space in parts).strip()
    lines = wrap(text, width, indent="  ", hang="    ")
    assert all(cells(line) <= width for line in lines)
    assert "".join(line.lstrip() for line in lines).replace(" ", "") == text.replace(" ", "")
    for before, after in zip(lines, lines[1:], strict=False):
        # A line starts with a closing mark, or the one before ends with an opening mark,
        # only where a piece longer than a line had to be cut there.
        first = after.lstrip()[:1]
        if first in CLOSING or before[-1:] in OPENING:
            assert cells(before) + cells(first) > width, (before, after)


def test_wrap_of_english_is_textwraps() -> None:
    import textwrap

    text = " ".join(s.narration for s in LESSON)
    assert wrap(text) == textwrap.wrap(text, WIDTH, initial_indent="  ", subsequent_indent="  ",
                                       break_on_hyphens=False)


@pytest.mark.parametrize("text", ["", "   "])
def test_wrap_of_nothing(text: str) -> None:
    assert wrap(text) == []
