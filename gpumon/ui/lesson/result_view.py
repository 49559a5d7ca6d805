"""What a lesson step gave, as the Lesson tab's output shows it (Qt rich text): each action's
code and its value as a Python prompt shows it, its device and what it cost in memory
(data/memory_change.py), or torch's error and why; the note, what a GPU prints, the measured
figures, the meta variant. The glossary as a list. No widget here; the colours follow the
application's palette.
"""

from __future__ import annotations

import html

from PySide6.QtGui import QGuiApplication, QPalette

from gpumon.i18n import tr
from gpumon.playground.data.memory_change import memory_change
from gpumon.playground.data.outcome import Outcome
from gpumon.playground.lesson import glossary
from gpumon.playground.lesson.results import StepResult
from gpumon.playground.lesson.smi_columns import column_lines
from gpumon.playground.lesson.smi_columns import heading as columns_heading
from gpumon.playground.lesson.step_code import localize
from gpumon.playground.lesson.transcript import echo, prompt_lines

ERROR_COLOUR = "#d32f2f"
OK_COLOUR = "#2e7d32"
META_COLOUR = "#6a1b9a"


def colours() -> tuple[str, str, str]:
    """(error, ok, meta) colours: lighter shades when the application palette is dark."""
    if QGuiApplication.palette().color(QPalette.ColorRole.Base).lightness() < 128:
        return "#ff6b6b", "#81c784", "#ce93d8"
    return ERROR_COLOUR, OK_COLOUR, META_COLOUR


def outcome_html(out: Outcome) -> str:
    """One action: its code, then its value as a Python prompt shows it (an assignment's
    after ``>>> name``, nothing for None) and its device, or torch's error and why."""
    lines = prompt_lines(localize(out.code), None)
    how, name = echo(out.code)
    if out.error is None and how == "name" and out.preview:
        lines.append(f">>> {name}")  # asked for, as at a prompt
    code = f"<pre style='margin:0'>{html.escape(chr(10).join(lines))}</pre>"
    error_colour, ok_colour, _ = colours()
    if out.error is not None:
        e = out.error
        refused = html.escape(tr("(gpumon refused it before torch ran)"))
        who = "" if e.by_torch else f" <i>{refused}</i>"
        why = html.escape(tr("why: {explanation}", explanation=e.explanation))
        return (f"{code}<p style='margin:2px 0 8px 16px'><b style='color:{error_colour}'>"
                f"{html.escape(e.headline())}</b>{who}<br><span>{why}</span></p>")
    facts = []
    if out.device and out.kind != "value":
        template = html.escape(tr("device {device}"))  # filled with HTML: escaped first
        facts.append(template.format(device=f"<b>{html.escape(out.device)}</b>"))
    if out.shape is not None:
        facts.append(html.escape(tr("shape {shape}, {dtype}", shape=tuple(out.shape),
                                    dtype=out.dtype or "")))
    if out.copied is not None:
        facts.append(html.escape(tr("copied") if out.copied
                                 else tr("not copied (the result is the source)")))
    facts.append(f"{out.duration_s * 1e3:.3f} ms")
    cost = memory_change(out)  # what the action changed on each device, and its peak
    if cost:
        facts.append(html.escape(cost))
    printed = out.preview and how != "nothing" and not (how == "value" and out.preview == "None")
    preview = (f"<pre style='margin:0 0 0 16px; color:{ok_colour}'>"
               f"{html.escape(out.preview)}</pre>") if printed else ""
    return f"{code}{preview}<p style='margin:2px 0 8px 16px'>{' · '.join(facts)}</p>"


def glossary_html() -> str:
    """The glossary as a list: each term in bold, in every language but English followed by
    the English word torch uses, and its meaning beneath (the whole width, at any zoom)."""
    english = glossary.shows_english()
    items = []
    for term, word, meaning in glossary.rows():
        head = f"<b>{html.escape(term)}</b>"
        if english:
            head += f"&nbsp;&nbsp;&nbsp;{html.escape(word)}"
        items.append(f"<dt>{head}</dt><dd style='margin-bottom:6px'>{html.escape(meaning)}</dd>")
    return f"<dl>{''.join(items)}</dl>"


def result_html(result: StepResult) -> str:
    """The whole StepResult: nvidia-smi text or each outcome, the note, the meta variant."""
    parts: list[str] = []
    if result.step.kind == "glossary":
        parts.append(glossary_html())
    if result.step.kind == "smi":
        if result.smi_real:
            parts.append("<pre style='margin:0'>$ nvidia-smi</pre>")
        elif result.note:  # what the box is, said above it: gpumon's view, not nvidia-smi's
            note = html.escape(tr("Note:"))
            parts.append(f"<p><b>{note}</b> {html.escape(result.note)}</p>")
        if result.smi_text:
            parts.append(f"<pre>{html.escape(result.smi_text)}</pre>")
        items = "".join(f"<li>{html.escape(line)}</li>" for line in column_lines())
        parts.append(f"<p><b>{html.escape(columns_heading())}</b></p><ul>{items}</ul>")
    for out in result.outcomes:
        parts.append(outcome_html(out))
    if not result.ran:
        not_run = html.escape(tr("This step was not run here."))
        parts.append(f"<p><i>{not_run}</i></p>")
    if result.note and (result.step.kind != "smi" or result.smi_real):
        note = html.escape(tr("Note:"))
        parts.append(f"<p style='margin-top:6px'><b>{note}</b> "
                     f"{html.escape(result.note)}</p>")
    if result.shows_gpu:
        gpu = html.escape(result.gpu_text())  # code that ran above: its first line
        parts.append(f"<p><b>{html.escape(result.gpu_heading())}</b></p>"
                     f"<pre style='margin:0 0 8px 16px'>{gpu}</pre>")
    if result.measured_text():
        parts.append(f"<p>{html.escape(result.measured_text())}</p>")
    if result.meta_outcomes:
        same = html.escape(tr("The same on the meta device:"))
        parts.append(f"<p style='color:{colours()[2]}'><b>{same}</b></p>")
        parts += [outcome_html(o) for o in result.meta_outcomes]
    if result.step.window_note:
        parts.append(f"<p><i>{html.escape(tr(result.step.window_note))}</i></p>")
    nothing = html.escape(tr("Nothing to show."))
    return "".join(parts) or f"<p><i>{nothing}</i></p>"


__all__ = ["colours", "glossary_html", "outcome_html", "result_html"]
