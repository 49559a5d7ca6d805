"""One lesson step as plain data (:class:`LessonStep`): what the student reads, the code that
runs, and what it shows on a GPU. The steps themselves are in lesson/steps.py. No torch import.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Literal

from gpumon.i18n import N_, tr
from gpumon.playground.data import actions as act
from gpumon.playground.lesson.measured import H200
from gpumon.playground.lesson.step_code import localize
from gpumon.playground.lesson.transcript import prompt_lines

StepKind = Literal["torch", "smi", "glossary"]
#: How each ``source`` is shown beside a step's title (translated there).
SOURCE_LABELS = {"book": N_("book"), "English edition": N_("English edition"),
                 "gpumon": N_("gpumon")}


@dataclass(frozen=True)
class LessonStep:
    """One step: what the student reads, the code that runs, and what the step needs.

    ``kind="smi"`` is step 1, ``nvidia-smi``: no torch action; the runner runs the real
    nvidia-smi, or renders a telemetry Snapshot as gpumon's own NVML view where there is
    none. ``kind="glossary"`` is step 2: no code; it shows
    :mod:`~gpumon.playground.lesson.glossary`. ``preamble`` is code run (and shown) before the
    actions. ``needs_cuda``: the step's point needs a GPU (on a CPU-only machine the runner
    shows torch's error once, then ``on_gpu`` and the meta variant). ``replay`` False: later
    steps do not need what this one leaves, so jumping past it does not run it again.
    ``min_gpus``: with fewer CUDA GPUs the step is not run at all (its note says why), except
    on one GPU where ``one_gpu_variant`` is given: that runs instead. ``gpu_only``: indices of
    actions that run only where PyTorch sees a CUDA GPU (elsewhere their ``on_gpu`` shows what
    they print). ``uses_device`` False: the step runs before ``device`` is chosen.
    ``window_note`` is said only in the window (it speaks of the window's graphs).
    ``measured``: figures a real GPU gave (lesson/measured.py), printed after the results under
    ``measured_on``, the machine they were measured on. ``more``: what a class can skip (edge
    cases, details, more figures), in the window's "More" fold and in a note after the step in
    the terminal; ``narration`` and ``measured`` are what a class reads (lesson/reading.py
    counts their words). ``measured_more``: more figures a GPU gave, each naming its machine.
    """

    id: str
    title: str
    narration: str
    actions: tuple[act.Action, ...] = ()
    kind: StepKind = "torch"
    needs_cuda: bool = False
    needs_two_gpus: bool = False
    meta_variant: tuple[act.Action, ...] = ()
    preamble: str = ""
    source: str = "book"  # "book" (section 4.6), "English edition", or "gpumon"
    stop_at_error: bool = True
    show_time: bool = False  # the durations are the point
    show_memory: bool = False  # the memory readings are the point
    on_gpu: tuple[str, ...] = ()  # per action: what it shows on a CUDA GPU
    show_uuids: bool = False  # the note lists NVML's GPU UUIDs beside torch's
    replay: bool = True
    # Actions (by index) whose failure stops the step even when stop_at_error is False:
    # what comes after them needs them (the load needs the save).
    needed: tuple[int, ...] = ()
    min_gpus: int = 0
    uses_device: bool = True
    window_note: str = ""
    gpu_only: tuple[int, ...] = ()
    one_gpu_variant: tuple[act.Action, ...] = ()
    measured: str = ""
    measured_on: str = H200
    more: str = ""
    measured_more: str = ""  # more of what a real GPU measured, said in ``more``'s place

    def more_text(self) -> str:
        """``more`` and ``measured_more`` in the language in use ('' when there is none)."""
        parts = [tr(t) for t in (self.more, self.measured_more) if t]
        return "".join(p if p.endswith("。") else p + " " for p in parts).rstrip()

    @property
    def two_gpus(self) -> bool:
        """Whether the step's point needs two GPUs (marked as such; the window skips it in
        one key)."""
        return self.needs_two_gpus or self.min_gpus > 1

    def actions_for(self, cuda_devices: int) -> tuple[act.Action, ...]:
        """The actions run on a machine where PyTorch sees ``cuda_devices`` CUDA GPUs: without
        one, all but ``gpu_only``; with one and a ``one_gpu_variant``, that variant."""
        if cuda_devices == 1 and self.one_gpu_variant and self.min_gpus > 1:
            return self.one_gpu_variant
        if cuda_devices == 0 and self.gpu_only:
            return tuple(a for i, a in enumerate(self.actions) if i not in self.gpu_only)
        return self.actions

    def code(self) -> str:
        """The Python (or shell command) the step equals: preamble, then each action's code."""
        if self.kind == "smi":
            return "nvidia-smi"
        if self.kind == "glossary":
            return ""
        lines = [self.preamble, ""] if self.preamble else []
        return localize("\n".join([*lines, *(a.code() for a in self.actions)]))

    def meta_code(self) -> str:
        """The code of the meta variant ('' when there is none)."""
        return localize("\n".join(a.code() for a in self.meta_variant))

    def gpu_text(self, brief: Collection[int] = ()) -> str:
        """``on_gpu`` as a REPL transcript: each action's code, then what a Python prompt
        prints on a GPU (torch's text as torch wrote it), or a comment in the language in use
        that describes a value that varies. ``brief``: indices of actions whose code was shown
        above (they ran on this machine): each shows only its first line, ``...`` standing
        for the rest, before its output."""
        lines: list[str] = []
        for i, (action, shown) in enumerate(zip(self.actions, self.on_gpu, strict=False)):
            code = localize(action.code())
            shown_lines = prompt_lines(code, None) if is_comment(shown) \
                else prompt_lines(code, shown)
            if i in brief and "\n" in code:  # the first line, "..." for the others, the output
                rest = code.count("\n")
                shown_lines = [shown_lines[0], "..."] + shown_lines[1 + rest:]
            lines += [*shown_lines, tr(shown)] if is_comment(shown) else shown_lines
        return "\n".join(lines)


def is_comment(shown: str) -> bool:
    """Whether an ``on_gpu`` entry describes a value (a comment) rather than being torch's text."""
    return shown.startswith("# ")


__all__ = ["SOURCE_LABELS", "LessonStep", "StepKind", "is_comment"]
