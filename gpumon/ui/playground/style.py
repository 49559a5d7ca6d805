"""Colours and text for the playground: one colour per device, an Outcome as rich text.

Pure functions of immutable values (Outcome, WorkspaceEntry), no widgets, so the log, the
workspace table and the graph markers agree on colours and wording, and tests can read them.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Any

from gpumon.device_ids import cuda_index
from gpumon.i18n import N_, ntr, tr
from gpumon.playground.data.errors import REFUSED
from gpumon.playground.data.memory_change import device_change, memory_change
from gpumon.playground.data.outcome import Outcome
from gpumon.units import format_clock

CPU_COLOR = "#546e7a"
META_COLOR = "#8e24aa"
ERROR_COLOR = "#c62828"
OTHER_COLOR = "#6d4c41"
#: cuda:0, cuda:1, ... (cycled): distinct from the cpu, meta and error colours.
CUDA_COLORS = ("#2e7d32", "#1565c0", "#ef6c00", "#00838f", "#ad1457", "#827717", "#4527a0",
               "#37474f")
MONO = "font-family: 'DejaVu Sans Mono', 'Menlo', 'Consolas', monospace;"
#: The same hues, lighter, for text and lines on a dark background (Material 300 shades).
DARK_VARIANTS = {
    CPU_COLOR: "#b0bec5", META_COLOR: "#ce93d8", ERROR_COLOR: "#ff6b6b", OTHER_COLOR: "#bcaaa4",
    "#2e7d32": "#81c784", "#1565c0": "#64b5f6", "#ef6c00": "#ffb74d", "#00838f": "#4dd0e1",
    "#ad1457": "#f48fb1", "#827717": "#dce775", "#4527a0": "#b39ddb", "#37474f": "#90a4ae",
}
#: Error messages longer than this show their first lines; "Copy error" gives all of them.
MAX_MESSAGE_LINES = 6
#: Lines of printed output a card shows; Copy entry copies them all.
MAX_OUTPUT_LINES = 12
#: Lines of code a marker's tooltip shows before "…".
TIP_LINES = 4


@dataclass(frozen=True)
class Tones:
    """Text and background colours of the log and table for a light or a dark palette."""

    dark: bool
    text: str  # previews, code
    soft: str  # facts, explanation
    muted: str  # labels such as "operands:"
    faint: str  # the foot line, hints
    error: str  # an error's text
    entry_bg: str
    error_bg: str
    border: str


LIGHT_TONES = Tones(False, text="#222222", soft="#333333", muted="#555555", faint="#777777",
                    error=ERROR_COLOR, entry_bg="#ffffff", error_bg="#fdecea", border="#d6d6d6")
DARK_TONES = Tones(True, text="#e4e6ea", soft="#d0d3d8", muted="#b8bcc4", faint="#969ba3",
                   error=DARK_VARIANTS[ERROR_COLOR], entry_bg="#1b1d21", error_bg="#3a2326",
                   border="#3a3d43")


def tones(dark: bool) -> Tones:
    return DARK_TONES if dark else LIGHT_TONES


def on_background(color: str, dark: bool) -> str:
    """``color`` as text or a line on the page: its lighter variant on a dark background."""
    return DARK_VARIANTS.get(color, color) if dark else color


def device_color(device: str | None) -> str:
    """The colour of a device name: cpu, meta, each cuda:i; brown for anything else."""
    if device == "cpu":
        return CPU_COLOR
    if device == "meta":
        return META_COLOR
    index = cuda_index(device)
    if index is not None:
        return CUDA_COLORS[index % len(CUDA_COLORS)]
    return OTHER_COLOR


def outcome_device(outcome: Outcome) -> str | None:
    """The device an outcome is "about": its result's, else the first cuda, else the first."""
    if outcome.device and outcome.device != "mixed":
        return outcome.device
    cudas = [d for d in outcome.devices if d.startswith("cuda")]
    if cudas:
        return cudas[0]
    return outcome.devices[0] if outcome.devices else None


def outcome_color(outcome: Outcome) -> str:
    """Red for an error; otherwise the colour of the device the result lives on."""
    return ERROR_COLOR if not outcome.ok else device_color(outcome_device(outcome))


def outcome_tag(outcome: Outcome) -> str:
    """The chip text: ``error``, ``refused``, ``kernel`` (it died or restarted), ``bug``,
    ``stopped``, ``cuda:0``, ``cpu``, ``meta``, or ``ok`` for a bare answer."""
    if not outcome.ok:
        name = outcome.error.type_name if outcome.error is not None else ""
        tag = {REFUSED: N_("refused"), "KernelDied": N_("kernel"),
               "KernelRestarted": N_("kernel"), "InternalError": N_("bug"),
               "KeyboardInterrupt": N_("stopped")}.get(name, N_("error"))
        return tr(tag)
    return outcome_device(outcome) or tr("ok")


#: A marker's prefix (in English) when its action created the CUDA context on that GPU.
CONTEXT_LABEL = "context created"


def marker_tip(outcome: Outcome, device: str) -> str:
    """A marker's tooltip: the code (its first lines), then what it cost in memory on
    ``device``, the marker's graph (data/memory_change.py)."""
    lines = outcome.code.splitlines()
    code = "\n".join(lines[:TIP_LINES] + (["…"] if len(lines) > TIP_LINES else []))
    change = device_change(outcome, device)
    return f"{code}\n{change}" if change else code


def show_tip(line: Any, tip: str) -> None:
    """Give a marker line and its label the tooltip ``tip`` (a hover over either shows it)."""
    line.setToolTip(tip)
    label = getattr(line, "label", None)
    if label is not None:
        label.setToolTip(tip)


def marker_text(outcome: Outcome, device: str) -> str:
    """A marker's label: the code's first line, after "context created:" where the action made
    the CUDA context on ``device`` (NVML's memory jumps there, torch's counters do not)."""
    text = short_code(outcome.code)
    if device in outcome.contexts_created:
        return tr("context created: {code}", code=text)
    return text


def short_code(code: str, limit: int = 28) -> str:
    """A marker label: the code's first line, cut to ``limit`` characters."""
    first = code.splitlines()[0] if code else ""
    return first if len(first) <= limit else first[: limit - 1] + "…"


def shape_text(shape: tuple[int, ...]) -> str:
    """``(3,)``, ``(2, 3)``, ``()`` as Python prints a tuple."""
    return "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"


def format_duration(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e6:.0f} µs"
    if seconds < 1.0:
        return f"{seconds * 1e3:.1f} ms"
    return f"{seconds:.2f} s"


#: Cards about the kernel rather than an operation (Stop, a death, a restart, our bug): how
#: long the code ran is not known there, so they give no duration.
UNTIMED = ("KeyboardInterrupt", "KernelDied", "KernelRestarted", "InternalError")


def took_text(outcome: Outcome) -> str:
    """``took 1.2 ms``; ``stopped before torch ran it`` for an error raised while checking;
    "" for a card about the kernel (UNTIMED), which used to say "stopped before" too."""
    err = outcome.error
    if err is not None and not err.by_torch and err.type_name in UNTIMED:
        return ""
    if outcome.duration_s == 0.0 and not outcome.memory_before and not outcome.ok:
        return tr("stopped before the operation ran")
    return tr("took {duration}", duration=format_duration(outcome.duration_s))


def memory_text(outcome: Outcome) -> str:
    """What the action cost in memory on each device it touched (data/memory_change.py):
    ``cuda:0: allocated +64.00 MiB, reserved +64.00 MiB, peak 64.00 MiB · cpu: RSS …``;
    "" when unread."""
    return memory_change(outcome)


def facts_text(outcome: Outcome) -> str:
    """One line of facts about a result: shape, dtype, device, grad_fn, copied or not."""
    facts: list[str] = []
    if outcome.result_name:
        facts.append(f"→ {outcome.result_name}")
    if outcome.shape is not None:
        facts.append(tr("shape {shape}", shape=shape_text(outcome.shape)))
    if outcome.dtype:
        facts.append(outcome.dtype)
    if outcome.device:
        facts.append(tr("on {device}", device=outcome.device))
    if outcome.grad_fn:
        facts.append(f"grad_fn={outcome.grad_fn}")
    if outcome.copied is True:
        facts.append(tr("copied: new memory on the target device"))
    elif outcome.copied is False:
        facts.append(tr("no copy: the result IS the source (already there)"))
    return " · ".join(facts)


def operands_text(outcome: Outcome) -> str:
    """``x on cuda:0 (3,) int64; x.cpu() on cpu (3,) int64``."""
    parts = []
    for op in outcome.operands:
        shape = "" if op.shape is None else " " + shape_text(op.shape)
        dtype = " " + op.dtype if op.dtype else ""
        parts.append(tr("{code} on {device}", code=op.code, device=op.device) + shape + dtype)
    return "; ".join(parts)


def outcome_plain(outcome: Outcome) -> str:
    """The whole entry as plain text, for "Copy entry" and for tests."""
    lines = [f">>> {outcome.code}"]
    if outcome.output:
        lines.append(outcome.output.rstrip("\n"))
    if outcome.ok:
        if outcome.preview:
            lines.append(outcome.preview)
        facts = facts_text(outcome)
        if facts:
            lines.append(facts)
        lines += [tr("{key}: {value}", key=k, value=v) for k, v in outcome.details]
    elif outcome.error is not None:
        lines.append(f"{outcome.error.type_name}: {outcome.error.message}")
        if outcome.operands:
            lines.append(tr("operands: {operands}", operands=operands_text(outcome)))
        lines.append(outcome.error.explanation)
    took = took_text(outcome)
    if took:
        lines.append(took)
    memory = memory_text(outcome)
    if memory:
        lines.append(tr("memory: {memory}", memory=memory))
    return "\n".join(lines)


def _pre(text: str, color: str) -> str:
    body = html.escape(text).replace("\n", "<br>").replace("  ", "&nbsp;&nbsp;")
    return f'<span style="{MONO} color:{color}">{body}</span>'


def message_shown(message: str) -> str:
    """An error message as the log shows it: at most MAX_MESSAGE_LINES lines, then a count."""
    lines = message.splitlines()
    if len(lines) <= MAX_MESSAGE_LINES:
        return message
    rest = len(lines) - MAX_MESSAGE_LINES
    return "\n".join(lines[:MAX_MESSAGE_LINES]) + "\n" + ntr(
        "… {n} more line (right-click ▸ Copy error copies all of them)",
        "… {n} more lines (right-click ▸ Copy error copies all of them)", rest)


def output_shown(output: str) -> str:
    """Printed output as a card shows it: at most MAX_OUTPUT_LINES lines, then a count."""
    lines = output.rstrip("\n").splitlines()
    if len(lines) <= MAX_OUTPUT_LINES:
        return "\n".join(lines)
    rest = len(lines) - MAX_OUTPUT_LINES
    return "\n".join(lines[:MAX_OUTPUT_LINES]) + "\n" + ntr(
        "… {n} more line (right-click ▸ Copy entry copies all of them)",
        "… {n} more lines (right-click ▸ Copy entry copies all of them)", rest)


def outcome_html(outcome: Outcome, t: Tones = LIGHT_TONES) -> str:
    """The body of a log entry (below its code line) as Qt rich text, in ``t``'s colours."""
    rows: list[str] = []
    if outcome.output:  # what the code printed, before its value or error, as in a notebook
        printed = html.escape(tr("printed:"))
        rows.append(f'<span style="color:{t.muted}">{printed}</span><br>'
                    + _pre(output_shown(outcome.output), t.text))
    if outcome.ok:
        if outcome.preview:
            rows.append(_pre(outcome.preview, t.text))
        facts = facts_text(outcome)
        if facts:
            rows.append(f'<span style="color:{t.soft}">{html.escape(facts)}</span>')
        for key, value in outcome.details:
            key_text = html.escape(tr("{key}:", key=key))  # "所在位置：" in Chinese
            rows.append(f'<span style="color:{t.muted}">{key_text}</span> '
                        f'<span style="color:{t.text}">{html.escape(value)}</span>')
    elif outcome.error is not None:
        err = outcome.error
        rows.append(f'<b style="{MONO} color:{t.error}">{html.escape(err.type_name)}:</b> '
                    + _pre(message_shown(err.message), t.error))
        if outcome.operands:
            operands = html.escape(tr("operands:"))
            rows.append(f'<span style="color:{t.muted}">{operands}</span> '
                        f'<span style="color:{t.text}">{html.escape(operands_text(outcome))}'
                        "</span>")
        said = err.explanation
        if err.type_name == REFUSED:
            said = tr("gpumon refused before torch ran it: {explanation}",
                      explanation=err.explanation)
        rows.append(f'<i style="color:{t.soft}">{html.escape(said)}</i>')
    stamp = format_clock(outcome.started_at)
    took = took_text(outcome)
    foot = f"{stamp} · {took}" if took else stamp
    memory = memory_text(outcome)
    if memory:
        foot += f" · {memory}"
    rows.append(f'<span style="color:{t.faint}; font-size:small">{html.escape(foot)}</span>')
    return "<br>".join(rows)
