"""``gpumon lesson``'s text: each step's title, narration, code and what torch answered.

Our words are in the language in use; code, torch's values and torch's messages are printed
exactly as they are. Transcripts show what a Python prompt prints (lesson/transcript.py);
gpumon's own words about a value are comments (``# device: cpu``). Lines are wrapped by
terminal columns (a Chinese character takes two) and Chinese text, which has no spaces, is
broken between characters, never before a closing mark such as '，' or '。'. No Qt and no
torch here.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Sequence
from typing import TYPE_CHECKING

from gpumon.i18n import tr
from gpumon.playground.data.memory_change import device_change
from gpumon.playground.lesson import glossary
from gpumon.playground.lesson.results import MORE_LABEL, source_label
from gpumon.playground.lesson.smi_columns import column_lines
from gpumon.playground.lesson.smi_columns import heading as columns_heading
from gpumon.playground.lesson.step_code import localize
from gpumon.playground.lesson.transcript import comment, prompt_lines
from gpumon.text.smi_text import cells

if TYPE_CHECKING:
    from gpumon.playground.data.actions import Action
    from gpumon.playground.data.outcome import Outcome
    from gpumon.playground.lesson.results import StepResult
    from gpumon.playground.lesson.steps import LessonStep

#: A tensor with more elements is printed as its shape: the numbers are not the point.
BRIEF_NUMEL = 100
WIDTH = 88
#: Marks a line must not start with (they close what comes before them) ...
CLOSING = set("，。、；：！？）》」』”’…")
#: ... and marks a line must not end with. (A Western mark is part of its word already;
#: one that starts a piece of code, as in '.item()', must not glue the code to a word.)
OPENING = set("（《「『“‘")


def _wide(c: str) -> bool:
    return unicodedata.east_asian_width(c) in "WF"


def _tokens(text: str) -> list[tuple[str, bool]]:
    """``text`` as unbreakable pieces, each with whether a space came before it: a run of
    narrow characters (a word, a piece of code), or one wide character; closing marks are
    glued to what precedes them, opening marks to what follows."""
    raw: list[tuple[str, bool]] = []
    word, word_space, space = "", False, False
    for c in text + " ":
        if c == " " or _wide(c):
            if word:
                raw.append((word, word_space))
                word = ""
            if c != " ":
                raw.append((c, space))
            space = c == " "
        else:
            if not word:
                word_space, space = space, False
            word += c
    glued: list[tuple[str, bool]] = []
    for piece, before in raw:
        if glued and (piece[0] in CLOSING or glued[-1][0][-1] in OPENING):
            glued[-1] = (glued[-1][0] + " " * before + piece, glued[-1][1])
        else:
            glued.append((piece, before))
    return glued


def wrap(text: str, width: int = WIDTH, indent: str = "  ", hang: str | None = None) -> list[str]:
    """``text`` in lines of at most ``width`` columns, the first after ``indent``, the others
    after ``hang`` (``indent`` when None). A piece too long for a line is cut."""
    hang = indent if hang is None else hang
    lines: list[str] = []
    line, used, prefix = "", 0, indent
    for piece, before in _tokens(text):
        room = width - cells(prefix)
        gap = 1 if before and line else 0
        if line and used + gap + cells(piece) > room:
            lines.append(prefix + line)
            line, used, prefix, gap = "", 0, hang, 0
            room = width - cells(prefix)
        while cells(piece) > room and not line:  # longer than a whole line: cut it
            cut = 0
            while cells(piece[:cut + 1]) <= room:
                cut += 1
            lines.append(prefix + piece[:cut])
            piece, prefix = piece[cut:], hang
            room = width - cells(prefix)
        line += " " * gap + piece
        used += gap + cells(piece)
    if line:
        lines.append(prefix + line)
    return lines


def _pad(text: str, width: int) -> str:
    return text + " " * max(0, width - cells(text))


def _indent(text: str, prefix: str = "    ") -> list[str]:
    return [(prefix + line).rstrip() for line in text.splitlines()]


def _outcome_lines(out: Outcome, step: LessonStep, code: str) -> list[str]:
    """The code of one action at a prompt, then its value as Python's prompt shows it (or
    torch's error), then gpumon's facts about it as comments."""
    if out.error is not None:
        e = out.error
        who = "" if e.by_torch else " " + tr("(gpumon refused it before torch ran)")
        lines = ["  " + line for line in prompt_lines(code, None)]
        lines += _indent(f"{e.type_name}: {e.message}{who}")
        why = comment(tr("why: {explanation}", explanation=e.explanation))
        hang = "    # " + " " * cells(tr("why: {explanation}", explanation=""))
        return lines + wrap(why, indent="    ", hang=hang)
    if out.shape is not None and (step.show_time or math.prod(out.shape) > BRIEF_NUMEL):
        value: str | None = None
        brief = comment(tr("tensor of shape {shape}, {dtype}", shape=out.shape,
                           dtype=out.dtype))
    else:
        value, brief = out.preview or None, ""
    shown = prompt_lines(code, value)
    lines = ["  " + shown[0], *(("  " if line.startswith((">>> ", "... ")) else "    ") + line
                                for line in shown[1:])]
    lines = [line.rstrip() for line in lines]
    if brief:
        lines.append("    " + brief)
    facts = [tr("device: {device}", device=out.device)] \
        if out.device and out.kind != "value" else []
    if out.grad_fn:
        facts.append(f"grad_fn: {out.grad_fn}")
    if out.copied is not None:
        facts.append(tr("copied: yes") if out.copied
                     else tr("copied: no (the result is the source)"))
    if step.show_time:
        facts.append(tr("took {ms} ms", ms=f"{out.duration_s * 1e3:.3f}"))
    # TRANSLATORS: the separator between the facts printed under a value.
    lines += ["    " + comment(tr("; ").join(facts))] if facts else []
    if step.show_memory:
        from gpumon.units import format_bytes

        for r in out.memory_after:
            if r.process_bytes is not None:  # the three numbers, largest first
                lines.append("    " + comment(tr(
                    "{device}: this process {process} (NVML, as nvidia-smi lists it), "
                    "reserved {reserved}, allocated {allocated}", device=r.device,
                    process=format_bytes(r.process_bytes),
                    reserved=format_bytes(r.reserved_bytes or 0),
                    allocated=format_bytes(r.allocated_bytes or 0))))
            elif r.allocated_bytes is not None:
                lines.append("    " + comment(tr(
                    "{device}: allocated {allocated}, reserved {reserved}", device=r.device,
                    allocated=format_bytes(r.allocated_bytes),
                    reserved=format_bytes(r.reserved_bytes or 0))))
            elif r.rss_bytes is not None:
                lines.append("    " + comment(tr(
                    "{device}: this process's resident memory {rss}", device=r.device,
                    rss=format_bytes(r.rss_bytes))))
            change = device_change(out, r.device)  # what this line cost: change and peak
            if change:
                lines.append("    " + comment(change))
    return lines


def _run_lines(actions: Sequence[Action], outcomes: Sequence[Outcome],
               step: LessonStep) -> list[str]:
    lines: list[str] = []
    for i, action in enumerate(actions):
        code = localize(action.code())
        if i < len(outcomes):
            lines += _outcome_lines(outcomes[i], step, code)
        else:
            lines += ["  " + line for line in prompt_lines(code, None)]
            lines.append("    " + comment(tr("not run")))
    return lines


def glossary_lines(width: int = WIDTH) -> list[str]:
    """The glossary as a table: term and meaning; in another language than English also
    the English word, between them."""
    rows = glossary.rows()
    term_head, word_head, meaning_head = glossary.headings()
    english = glossary.shows_english()
    term_w = max(cells(t) for t, _, _ in [*rows, (term_head, "", "")]) + 2
    word_w = max(cells(w) for _, w, _ in [*rows, ("", word_head, "")]) + 2 if english else 0

    def row(term: str, word: str, meaning: str) -> list[str]:
        lead = "  " + _pad(term, term_w) + (_pad(word, word_w) if english else "")
        return wrap(meaning, width, indent=lead, hang=" " * cells(lead))

    lines = row(term_head, word_head, meaning_head)
    for term, word, meaning in rows:
        lines += row(term, word, meaning)
    return lines


def format_step(result: StepResult, total: int) -> str:
    """One step as the terminal lesson prints it: title, narration, code and outcomes."""
    step = result.step
    lines = [tr("Step {number} of {total}: {title}  [{source}]", number=result.number,
                total=total, title=tr(step.title), source=source_label(step)), ""]
    lines += wrap(tr(step.narration))
    lines.append("")
    if step.kind == "smi":
        if result.smi_real:
            lines.append("  $ nvidia-smi")
        elif result.note:  # what the box is, said above it: gpumon's view, not nvidia-smi's
            lines += wrap(tr("Note: {note}", note=result.note)) + [""]
        if result.smi_text:
            lines += _indent(result.smi_text.rstrip("\n"))
        lines += ["", "  " + columns_heading()]
        lines += [line for text in column_lines()
                  for line in wrap(text, indent="    ", hang="      ")]
    elif step.kind == "glossary":
        lines += glossary_lines()
    else:
        if step.preamble:
            lines += _indent(localize(step.preamble), "  ") + [""]
        if result.outcomes or not result.shows_gpu:  # else the GPU transcript has the code
            lines += _run_lines(result.actions, result.outcomes, step)
    if result.note and (step.kind != "smi" or result.smi_real):
        lines += [""] * (lines[-1] != "") + wrap(tr("Note: {note}", note=result.note))
    if result.shows_gpu:  # the code only once where it ran here: then the outputs
        lines += ["", "  " + result.gpu_heading()] + _indent(result.gpu_text())
    if result.measured_text():
        lines += [""] + wrap(result.measured_text())
    if result.meta_outcomes:
        lines += ["", "  " + tr("The same rule on the meta device:")]
        lines += _run_lines(step.meta_variant, result.meta_outcomes, step)
    if step.more_text():  # what a class can skip: after all the step shows
        lines += [""] + wrap(tr(MORE_LABEL, more=step.more_text()))
    return "\n".join(lines) + "\n"


__all__ = ["BRIEF_NUMEL", "cells", "format_step", "glossary_lines", "wrap"]
