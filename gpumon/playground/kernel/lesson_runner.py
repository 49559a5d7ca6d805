"""The GPU-computing lesson's runner: plays the steps of lesson/steps.py on an Engine, in the
kernel process (or in-process for ``gpumon lesson``). See lesson/results.py for what it gives.
Step 1 runs the real ``nvidia-smi`` where it is installed (bounded in time and size), else
renders gpumon's own view of NVML, labelled as such.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from gpumon.device_ids import cuda_index
from gpumon.i18n import tr
from gpumon.playground.data import actions as act
from gpumon.playground.data.actions import RunCode
from gpumon.playground.data.outcome import Outcome
from gpumon.playground.kernel.memory import with_process_memory
from gpumon.playground.lesson.checkpoint_path import remove_lesson_folder
from gpumon.playground.lesson.results import (
    GPU_NOT_RUN,
    GPU_ONLY_NOT_RUN,
    KEPT_YOURS,
    META_AGAIN,
    META_RAN,
    NEEDED_FAILED,
    NO_CUDA_ERROR,
    NO_CUDA_RAN,
    NO_GPU_HERE,
    NO_PROCESS_FIGURE,
    NO_TELEMETRY,
    NVML_VIEW,
    ON_CPU,
    ON_CPU_GPU_ONLY,
    ONE_GPU_RAN,
    PREAMBLE_FAILED,
    REAL_SMI_FAILED,
    SECOND_GPU_ERROR,
    SIMULATED,
    SIMULATED_VIEW,
    SMI_FAILED,
    STOPPED,
    TOO_FEW_GPUS,
    UNREADABLE,
    Note,
    StepResult,
    note,
    nvml_uuid_note,
)
from gpumon.playground.lesson.steps import LESSON, LessonStep

if TYPE_CHECKING:
    from gpumon.playground.kernel.engine import Engine
    from gpumon.telemetry.model.types import Snapshot

OnOutcome = Callable[[Outcome], None]
#: The real nvidia-smi: at most this long, and this much of its output.
SMI_TIMEOUT_S = 15.0
SMI_MAX_CHARS = 64_000


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
        self._kept: list[Note] = []  # the Playground's values set aside since the last step
        self._next = 1  # the step whose predecessors have run, in order
        self._cuda: int | None = None
        self._error_step: int | None = None  # no CUDA: the step that showed torch's error
        self._meta_step: int | None = None  # the step whose note said what meta is

    @property
    def steps(self) -> tuple[LessonStep, ...]:
        return self._steps

    def cuda_device_count(self) -> int:
        """CUDA devices torch sees (imports torch on first call); 0 when torch cannot load."""
        if self._cuda is None:
            self._cuda = sum(1 for d in self._engine.devices()
                             if cuda_index(d.name) is not None)
        return self._cuda

    def reset(self) -> None:
        """Forget the workspace (a shared one: the lesson's names only); the next step runs
        from a clean slate."""
        if self._shared:
            self._engine.forget(self._made)
        else:
            self._engine.clear()
        remove_lesson_folder()  # the files the last run saved
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
        if self._kept:  # said on the step that needed the names (a replay's too)
            result = replace(result, notes=(*self._kept, *result.notes))
            self._kept = []
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
        self._run_actions(step.actions_for(self.cuda_device_count()), step.stop_at_error,
                          quiet=True, needed=step.needed)

    def _play(self, number: int, meta: bool) -> StepResult:
        step = self._steps[number - 1]
        if step.kind == "smi":
            return self._smi(number, step)
        if step.kind == "glossary":  # words to read: no code, no torch
            return StepResult(number, step, ())
        cuda = self.cuda_device_count()
        # What a GPU prints is shown where this machine could not run it: without CUDA, or
        # with fewer GPUs than a two-GPU step's (never "On a CUDA GPU" where there is one).
        two = step.two_gpus
        shows_gpu = bool(step.on_gpu) and (cuda == 0 or (two and cuda < 2))
        actions = step.actions_for(cuda)
        played = None if actions == step.actions else actions
        if cuda < step.min_gpus and actions is step.actions:  # nothing it compares can happen
            return StepResult(number, step, (), (note(TOO_FEW_GPUS, needed=step.min_gpus,
                                                      seen=cuda),),
                              ran=False, cuda_devices=cuda, shows_gpu=shows_gpu)
        notes: list[Note] = []
        if step.preamble:
            pre = self._run(RunCode(step.preamble), quiet=True)
            if pre.error is not None:
                notes.append(note(PREAMBLE_FAILED, error=pre.error.headline()))
        if step.needs_cuda and cuda == 0 and self._error_step not in (None, number):
            outcomes: tuple[Outcome, ...] = ()
            notes.append(note(GPU_NOT_RUN, first=self._error_step))
        else:
            outcomes = self._run_actions(actions, step.stop_at_error, needed=step.needed,
                                         memory=step.show_memory and cuda > 0)
            failed = any(not o.ok for o in outcomes)
            if step.needs_cuda and cuda == 0:
                notes.append(note(NO_CUDA_ERROR if failed else NO_CUDA_RAN))
                if failed:
                    self._error_step = number
            elif step.needs_two_gpus and cuda == 1:
                notes.append(note(SECOND_GPU_ERROR))
            elif step.one_gpu_variant and actions == step.one_gpu_variant:
                notes.append(note(ONE_GPU_RAN))
            elif shows_gpu:
                some = len(actions) < len(step.actions) and cuda == 0 and step.gpu_only
                notes.append(note(ON_CPU_GPU_ONLY if some and step.uses_device
                                  else ON_CPU if step.uses_device else NO_GPU_HERE))
            gpu_readings = [r for o in outcomes for r in o.memory_after if r.device != "cpu"]
            if step.show_memory and gpu_readings and \
                    all(r.process_bytes is None for r in gpu_readings):
                notes.append(note(NO_PROCESS_FIGURE))
            if len(actions) < len(step.actions) and cuda == 0 and step.gpu_only and \
                    not (shows_gpu and step.uses_device):  # else ON_CPU_GPU_ONLY said it
                notes.append(note(GPU_ONLY_NOT_RUN))
            if len(outcomes) < len(actions):
                notes.append(note(STOPPED) if step.stop_at_error
                             else note(NEEDED_FAILED, code=outcomes[-1].code))
        if step.show_uuids:
            notes.append(nvml_uuid_note(self._safe_snapshot()))
        meta_outcomes: tuple[Outcome, ...] = ()
        if meta and step.meta_variant and cuda == 0:
            meta_outcomes = self._run_actions(step.meta_variant, step.stop_at_error)
            # what the meta device is, said once; later steps only point to it
            if self._meta_step in (None, number):
                self._meta_step = number
                notes.append(note(META_RAN))
            else:
                notes.append(note(META_AGAIN))
        return StepResult(number, step, outcomes, tuple(notes), True, meta_outcomes,
                          cuda_devices=cuda, shows_gpu=shows_gpu, played=played)

    def _run(self, action: act.Action, quiet: bool = False, memory: bool = False) -> Outcome:
        """One action on the engine; the names it made are the lesson's (forgotten on reset).
        ``memory``: NVML's figure for this process is added to each GPU's memory reading."""
        before = set(self._engine.names())
        # A shared workspace: the Playground's own values (x, y, net) are the user's; one the
        # lesson overwrites or deletes is kept under another name, and the step says so.
        yours = {n: self._engine.value(n) for n in before - self._made} if self._shared else {}
        outcome = self._engine.run(action)
        self._made.update(set(self._engine.names()) - before)
        for name, value in yours.items():
            if self._engine.value(name) is not value:
                self._keep(name, value)
        if memory and any(r.process_bytes is None and cuda_index(r.device) is not None
                          for r in outcome.memory_after):  # the engine's NVML read none
            outcome = replace(outcome, memory_after=with_process_memory(outcome.memory_after))
        if not quiet and self.on_outcome is not None:
            self.on_outcome(outcome)
        return outcome

    def _keep(self, name: str, value: object) -> None:
        names = set(self._engine.names())
        kept = f"{name}_mine"
        n = 2
        while kept in names:
            kept, n = f"{name}_mine{n}", n + 1
        self._engine.put(kept, value)
        self._made.add(name)  # the name is the lesson's now; the kept one stays the user's
        self._kept.append(note(KEPT_YOURS, name=name, kept=kept))

    def _run_actions(self, actions: Sequence[act.Action], stop_at_error: bool,
                     quiet: bool = False, needed: tuple[int, ...] = (),
                     memory: bool = False) -> tuple[Outcome, ...]:
        """Run ``actions`` in order; stop at an error if ``stop_at_error``, or at the failure
        of an action whose index is in ``needed`` (the save that the load after it needs)."""
        outcomes = []
        for i, action in enumerate(actions):
            outcome = self._run(action, quiet, memory)
            outcomes.append(outcome)
            if not outcome.ok and (stop_at_error or i in needed):
                break
        return tuple(outcomes)

    def _safe_snapshot(self) -> Snapshot | None:
        try:
            return self._snapshot()
        except Exception:  # step 1 reports a telemetry failure; here: no UUIDs
            return None

    def _smi(self, number: int, step: LessonStep) -> StepResult:
        """Step 1: the real nvidia-smi's output where it is installed and answers, else
        gpumon's nvidia-smi-like text of the current snapshot, labelled; never raises.
        Simulated GPUs (``--simulate``) are asked for: their box is shown, said to be so."""
        from gpumon.text.smi_text import render

        try:
            snapshot = self._snapshot()
            text = None if snapshot is None else render(snapshot)
        except Exception as exc:  # a telemetry bug must not stop the lesson
            snapshot, text = None, None
            failed: Note | None = note(SMI_FAILED, error=f"{type(exc).__name__}: {exc}")
        else:
            failed = None
        simulated = snapshot is not None and (snapshot.simulated or snapshot.machine.simulated)
        if simulated:
            said = note(SIMULATED_VIEW)
        else:
            real, failure = run_nvidia_smi()
            if real is not None:
                return StepResult(number, step, (), smi_text=real, smi_real=True)
            said = note(NVML_VIEW) if failure is None else note(REAL_SMI_FAILED, error=failure)
        if failed is not None:
            return StepResult(number, step, (), (said, failed), smi_text=None)
        if snapshot is None or text is None:
            return StepResult(number, step, (), (said, note(NO_TELEMETRY)), smi_text=None)
        notes: tuple[Note, ...] = (said,)
        if simulated:
            notes += (note(SIMULATED),)
        elif not snapshot.status.usable:
            notes += (note(UNREADABLE),)
        return StepResult(number, step, (), notes, smi_text=text)


def run_nvidia_smi(program: str = "nvidia-smi") -> tuple[str | None, str | None]:
    """(the real nvidia-smi's output, None) where it is installed and answers; (None, None)
    where it is not installed; (None, why) where it failed, hung or printed nothing. Its
    output is kept as it printed it, up to :data:`SMI_MAX_CHARS` characters."""
    path = shutil.which(program)
    if path is None:
        return None, None
    try:
        done = subprocess.run([path], capture_output=True, timeout=SMI_TIMEOUT_S, check=False,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return None, tr("no answer within {seconds} s", seconds=f"{SMI_TIMEOUT_S:.0f}")
    except OSError as exc:
        return None, f"{type(exc).__name__}: {exc}"
    out = done.stdout.decode("utf-8", "replace")
    if done.returncode != 0 or not out.strip():
        said = (done.stderr.decode("utf-8", "replace") or out).strip().splitlines()
        status = tr("exit status {code}", code=done.returncode)
        return None, status + (f": {said[0][:200]}" if said else "")
    if len(out) > SMI_MAX_CHARS:
        out = out[:SMI_MAX_CHARS] + "\n…"
    return out, None

