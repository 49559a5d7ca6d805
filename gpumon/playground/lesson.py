"""The GPU-computing lesson's runner: plays the steps of :mod:`lesson_steps` on an Engine.

:class:`LessonRunner` decides per machine what to run. On a machine without CUDA, the first
CUDA step the student runs executes for real, so torch's own error is seen once; later CUDA
steps show what they print on a GPU (labelled, not run) beside their ``meta_variant``, which
shows the same rule on the ``meta`` device. On a one-GPU machine the two-GPU step runs, for
torch's real "invalid device ordinal". Each outcome of a step can be handed to ``on_outcome``
as it happens: the kernel sends it to the window, which marks it on the graphs exactly as a
Playground action. No torch import here: torch is loaded by the Engine on the first action.

The runner's notes are kept as catalogue messages with their fields (:class:`Note`) and put
into words when they are shown (``StepResult.note``): the runner may run in the kernel
process, whose language is not necessarily the window's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpumon.i18n import N_, tr
from gpumon.playground import actions as act
from gpumon.playground.codeline import RunCode
from gpumon.playground.lesson_steps import LESSON, SOURCE_LABELS, LessonStep, StepKind
from gpumon.playground.outcome import Outcome

if TYPE_CHECKING:
    from gpumon.playground.engine import Engine
    from gpumon.telemetry.types import Snapshot

OnOutcome = Callable[[Outcome], None]


@dataclass(frozen=True)
class Note:
    """One sentence of a step's note: a catalogue message and its fields, in words by
    :meth:`text` in the language in use when it is shown."""

    message: str
    fields: tuple[tuple[str, str], ...] = ()

    def text(self) -> str:
        return tr(self.message, **dict(self.fields))


def _join(sentences: Sequence[str]) -> str:
    """Sentences one after another: a space after a Western full stop, none after '。'."""
    out = ""
    for sentence in filter(None, sentences):
        out += sentence if not out or out.endswith(("。", "）", "：")) else " " + sentence
    return out


@dataclass(frozen=True)
class StepResult:
    """What running one step gave: outcomes in action order, a plain-words note, and more.

    ``outcomes`` may be shorter than ``step.actions`` when the step stopped at an error, and
    empty when it was not run (``ran`` False: two GPUs needed, one present). ``smi_text`` is
    step 1's nvidia-smi-like text. ``meta_outcomes`` are the meta variant's, when it ran.
    """

    number: int  # 1-based, as the lesson numbers its steps
    step: LessonStep
    outcomes: tuple[Outcome, ...]
    notes: tuple[Note, ...] = ()
    ran: bool = True
    meta_outcomes: tuple[Outcome, ...] = ()
    smi_text: str | None = None
    cuda_devices: int = 0  # CUDA devices torch saw on this machine
    shows_gpu: bool = False  # step.on_gpu is shown: what a GPU prints, not run here

    @property
    def note(self) -> str:
        """The notes in plain words, in the language in use now ('' when there are none)."""
        return _join([n.text() for n in self.notes])

    @property
    def errors(self) -> tuple[Outcome, ...]:
        """The outcomes that failed (torch's errors and the engine's refusals)."""
        return tuple(o for o in self.outcomes if not o.ok)


NO_CUDA_ERROR = N_("This step needs a CUDA GPU; PyTorch here has none, so you see the error it "
                   "really raises. The later CUDA steps show what they print on a GPU instead.")
NO_CUDA_RAN = N_("This step is meant for a CUDA GPU; PyTorch here has none, so it ran on the CPU "
                 "and shows the CPU-only answer.")
ON_CPU = N_("PyTorch here sees no CUDA GPU, so device is the CPU and this step ran there; "
            "what it shows on a GPU is printed below, not run here.")
GPU_NOT_RUN = N_("PyTorch here sees no CUDA GPU (the error was shown once, at step {first}), so "
                 "this step's GPU code is not run again: below is what it prints on a GPU with "
                 "torch 2.13, not run here.")
SECOND_GPU_ERROR = N_("This step needs two GPUs and this machine has one, so it ran anyway: "
                      "torch's own error for cuda:1 is what you see.")
STOPPED = N_("Python stops at the first error, so the lines after it did not run.")
META_RAN = N_("Below, the same rule on the meta device (shapes only, no data), which works "
              "without a GPU; its messages are worded differently from CUDA's (for example "
              "'Tensor on device cpu is not on the expected device meta!' where CUDA says "
              "'Expected all tensors to be on the same device, ...').")
#: The heading of what a step prints on a GPU, where it was not run.
GPU_LABEL = N_("On a CUDA GPU (torch 2.13), this step shows (not run here):")
NO_TELEMETRY = N_("No GPU telemetry is available here, so there is nothing to show.")
PREAMBLE_FAILED = N_("The code before the step failed ({error}), so the step may fail too.")


NO_UUIDS = N_("nvidia-smi lists no GPU here, so there is no UUID to match.")
UUIDS = N_("nvidia-smi's UUIDs: {listed}.")
SIMULATED_UUIDS = N_("nvidia-smi's UUIDs (simulated GPUs): {listed}.")
SMI_FAILED = N_("Reading the GPUs failed ({error}).")
SIMULATED = N_("These GPUs are simulated: the numbers are not read from hardware.")
UNREADABLE = N_("No GPU could be read here; the text says why.")


def note(message: str, **fields: object) -> Note:
    """A note sentence (a message marked with ``N_``) and its fields, put into words later."""
    return Note(message, tuple((k, str(v)) for k, v in fields.items()))


def nvml_uuid_note(snapshot: Snapshot | None) -> Note:
    """nvidia-smi's (NVML's) GPU UUIDs, to compare with torch's."""
    if snapshot is None or not snapshot.gpus:
        return note(NO_UUIDS)
    listed = "; ".join(f"GPU {g.index}: {g.uuid}" for g in snapshot.gpus)
    return note(SIMULATED_UUIDS if snapshot.simulated else UUIDS, listed=listed)


def source_label(step: LessonStep) -> str:
    """Where ``step`` comes from, in the language in use (the book, its English edition, …)."""
    label = SOURCE_LABELS.get(step.source, step.source)
    return tr(label)


class LessonRunner:
    """Plays lesson steps on an Engine, deciding per machine what to run; Qt-free.

    The runner owns its engine's workspace: running a step other than the next one clears it
    and replays the earlier steps quietly, so step k always sees what steps 1..k-1 left.
    ``snapshot`` returns the current telemetry Snapshot (or None) for nvidia-smi and the UUIDs;
    ``on_outcome`` receives each outcome of a played step (not of a quiet replay) at once.
    """

    def __init__(self, engine: Engine, snapshot: Callable[[], Snapshot | None] = lambda: None,
                 steps: Sequence[LessonStep] = LESSON, shared: bool = False,
                 on_outcome: OnOutcome | None = None) -> None:
        self._engine = engine
        self._snapshot = snapshot
        self._steps = tuple(steps)
        # shared: the engine is the playground's too; a reset forgets only the lesson's names
        self._shared = shared
        self.on_outcome = on_outcome
        self._made: set[str] = set()
        self._next = 1  # the step whose predecessors have run, in order
        self._cuda: int | None = None
        self._error_step: int | None = None  # no CUDA: the step that showed torch's error

    @property
    def steps(self) -> tuple[LessonStep, ...]:
        return self._steps

    def cuda_device_count(self) -> int:
        """CUDA devices torch sees (imports torch on first call); 0 when torch cannot load."""
        if self._cuda is None:
            self._cuda = sum(1 for d in self._engine.devices() if d.name.startswith("cuda:"))
        return self._cuda

    def reset(self) -> None:
        """Forget the workspace (a shared one: the lesson's names only); the next step runs
        from a clean slate."""
        if self._shared:
            self._engine.forget(self._made)
        else:
            self._engine.clear()
        self._made.clear()
        self._next = 1

    def run_step(self, number: int, meta: bool = True) -> StepResult:
        """Run step ``number`` (1-based); ``meta`` runs its meta variant where it applies."""
        if not 1 <= number <= len(self._steps):
            raise IndexError(f"The lesson has steps 1 to {len(self._steps)}, not {number}.")
        if number != self._next:
            self.reset()
            for earlier in range(1, number):
                self._replay(self._steps[earlier - 1])
        result = self._play(number, meta)
        self._next = number + 1
        return result

    def run_all(self, meta: bool = True) -> Iterator[StepResult]:
        """Every step in order, from a clean workspace."""
        self.reset()
        for number in range(1, len(self._steps) + 1):
            yield self.run_step(number, meta)

    def _replay(self, step: LessonStep) -> None:
        """An earlier step, quietly, for what later steps need (without CUDA, a CUDA step
        still leaves what ran before its error, as it would in Python)."""
        if step.kind != "torch" or not step.replay:
            return
        if step.preamble:
            self._run(RunCode(step.preamble), quiet=True)
        self._run_actions(step.actions, step.stop_at_error, quiet=True)

    def _play(self, number: int, meta: bool) -> StepResult:
        step = self._steps[number - 1]
        if step.kind == "smi":
            return self._smi(number, step)
        if step.kind == "glossary":  # words to read: no code, no torch
            return StepResult(number, step, ())
        cuda = self.cuda_device_count()
        notes: list[Note] = []
        if step.preamble:
            pre = self._run(RunCode(step.preamble), quiet=True)
            if pre.error is not None:
                notes.append(note(PREAMBLE_FAILED, error=pre.error.headline()))
        shows_gpu = cuda == 0 and bool(step.on_gpu)
        if step.needs_cuda and cuda == 0 and self._error_step not in (None, number):
            outcomes: tuple[Outcome, ...] = ()
            notes.append(note(GPU_NOT_RUN, first=self._error_step))
        else:
            outcomes = self._run_actions(step.actions, step.stop_at_error)
            failed = any(not o.ok for o in outcomes)
            if step.needs_cuda and cuda == 0:
                notes.append(note(NO_CUDA_ERROR if failed else NO_CUDA_RAN))
                if failed:
                    self._error_step = number
                    shows_gpu = False
            elif step.needs_two_gpus and cuda == 1:
                notes.append(note(SECOND_GPU_ERROR))
            elif shows_gpu:
                notes.append(note(ON_CPU))
            if len(outcomes) < len(step.actions):
                notes.append(note(STOPPED))
        if step.show_uuids:
            notes.append(nvml_uuid_note(self._safe_snapshot()))
        meta_outcomes: tuple[Outcome, ...] = ()
        if meta and step.meta_variant and cuda == 0:
            meta_outcomes = self._run_actions(step.meta_variant, step.stop_at_error)
            notes.append(note(META_RAN))
        return StepResult(number, step, outcomes, tuple(notes), True, meta_outcomes,
                          cuda_devices=cuda, shows_gpu=shows_gpu)

    def _run(self, action: act.Action, quiet: bool = False) -> Outcome:
        """One action on the engine; the names it made are the lesson's (forgotten on reset)."""
        before = set(self._engine.names())
        outcome = self._engine.run(action)
        self._made.update(set(self._engine.names()) - before)
        if not quiet and self.on_outcome is not None:
            self.on_outcome(outcome)
        return outcome

    def _run_actions(self, actions: Sequence[act.Action], stop_at_error: bool,
                     quiet: bool = False) -> tuple[Outcome, ...]:
        outcomes = []
        for action in actions:
            outcome = self._run(action, quiet)
            outcomes.append(outcome)
            if stop_at_error and not outcome.ok:
                break
        return tuple(outcomes)

    def _safe_snapshot(self) -> Snapshot | None:
        try:
            return self._snapshot()
        except Exception:  # noqa: BLE001 - step 1 reports a telemetry failure; here: no UUIDs
            return None

    def _smi(self, number: int, step: LessonStep) -> StepResult:
        """Step 1: the nvidia-smi-like text of the current snapshot; never raises."""
        from gpumon.telemetry.smi_text import render

        try:
            snapshot = self._snapshot()
            text = None if snapshot is None else render(snapshot)
        except Exception as exc:  # noqa: BLE001 - a telemetry bug must not stop the lesson
            failed = note(SMI_FAILED, error=f"{type(exc).__name__}: {exc}")
            return StepResult(number, step, (), (failed,), smi_text=None)
        if snapshot is None or text is None:
            return StepResult(number, step, (), (note(NO_TELEMETRY),), smi_text=None)
        notes: tuple[Note, ...] = ()
        if snapshot.simulated or snapshot.machine.simulated:
            notes = (note(SIMULATED),)
        elif not snapshot.status.usable:
            notes = (note(UNREADABLE),)
        return StepResult(number, step, (), notes, smi_text=text)


__all__ = ["GPU_LABEL", "LESSON", "LessonRunner", "LessonStep", "Note", "OnOutcome",
           "StepKind", "StepResult", "note", "nvml_uuid_note", "source_label"]
