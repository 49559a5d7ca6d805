"""What running a lesson step gave (:class:`StepResult`), and the notes the runner adds.

The runner (kernel/lesson_runner.py) decides per machine what to run. On a machine without
CUDA, the first CUDA step the student runs executes for real, so torch's own error is seen
once; later CUDA steps show what they print on a GPU (labelled, not run) beside their
``meta_variant``, which shows the same rule on the ``meta`` device. On a one-GPU machine the
two-GPU step runs, for torch's real "invalid device ordinal", then shows what two GPUs print;
the two-GPU exercise runs its one-GPU variant on cuda:0. A machine with a CUDA GPU never shows
"On a CUDA GPU ..." (it ran the step), only what a machine with more GPUs prints. Each
outcome of a step can be handed to ``on_outcome`` as it happens: the kernel sends it to the
window, which marks it on the graphs exactly as a Playground action. No torch import here:
torch is loaded by the Engine on the first action.

The runner's notes are kept as catalogue messages with their fields (:class:`Note`) and put
into words when they are shown (``StepResult.note``): the runner may run in the kernel process,
whose language is not necessarily the window's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpumon.i18n import N_, tr
from gpumon.playground.data.outcome import Outcome
from gpumon.playground.lesson.step import SOURCE_LABELS, LessonStep

if TYPE_CHECKING:
    from gpumon.playground.data.actions import Action
    from gpumon.telemetry.model.types import Snapshot


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
    empty when it was not run (``ran`` False: more GPUs needed than present). ``smi_text`` is
    step 1's text: the real nvidia-smi's output when ``smi_real``, else gpumon's own view of
    NVML. ``meta_outcomes`` are the meta variant's, when it ran.
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
    smi_real: bool = False  # smi_text is what the real nvidia-smi printed
    played: tuple[Action, ...] | None = None  # the actions run, when not step.actions

    @property
    def actions(self) -> tuple[Action, ...]:
        """The actions this machine ran (``outcomes`` follow them): ``step.actions``, less
        those that need a GPU where there is none, or the step's one-GPU variant."""
        return self.step.actions if self.played is None else self.played

    def gpu_text(self) -> str:
        """What the step prints on a GPU (``step.on_gpu``), its code shown once: the actions
        that ran here, whose code is above, give their first line and their output."""
        ran = self.actions[:len(self.outcomes)]
        return self.step.gpu_text([i for i, a in enumerate(self.step.actions) if a in ran])

    def gpu_heading(self) -> str:
        """The heading of ``step.on_gpu`` where it is shown, in the language in use: what a
        machine with 2 GPUs prints for a two-GPU step, else what a CUDA GPU prints."""
        step = self.step
        if step.two_gpus:
            return tr(MORE_GPUS_LABEL, count=max(2, step.min_gpus))
        return tr(GPU_LABEL)

    def measured_text(self) -> str:
        """What a real GPU measured for this step, after the machine it was measured on, in
        the language in use; '' when the step has no such figures."""
        if not self.step.measured:
            return ""
        return _join([tr(self.step.measured_on), tr(self.step.measured)])

    @property
    def note(self) -> str:
        """The notes in plain words, in the language in use now ('' when there are none)."""
        return _join([n.text() for n in self.notes])

    @property
    def errors(self) -> tuple[Outcome, ...]:
        """The outcomes that failed (torch's errors and the engine's refusals)."""
        return tuple(o for o in self.outcomes if not o.ok)


NO_CUDA_ERROR = N_("This step needs a CUDA GPU; PyTorch here has none, so you see the error it "
                   "really raises, then what the step prints on a GPU. The later CUDA steps "
                   "show only what they print on a GPU.")
NO_CUDA_RAN = N_("This step is meant for a CUDA GPU; PyTorch here has none, so it ran on the CPU "
                 "and shows the CPU-only answer.")
ON_CPU = N_("PyTorch here sees no CUDA GPU, so device is the CPU and this step ran there; "
            "what it shows on a GPU is printed below, not run here.")
NO_GPU_HERE = N_("PyTorch here sees no CUDA GPU, so this step ran without one; what it shows "
                 "on a machine with one GPU is printed below, not run here.")
GPU_NOT_RUN = N_("PyTorch here sees no CUDA GPU (the error was shown once, at step {first}), so "
                 "this step's GPU code is not run again: below is what it prints on a GPU, not "
                 "run here.")
SECOND_GPU_ERROR = N_("This step needs two GPUs and PyTorch here sees one, so it runs up to the "
                      "first line that asks for cuda:1, to show the error torch raises for a GPU "
                      "that is not there; below is what the step prints on two GPUs.")
ONE_GPU_RAN = N_("PyTorch here sees one GPU, so both products ran on cuda:0, which runs its "
                 "queued work in order: 'at once' brings nothing there. Below is what the step "
                 "prints on two GPUs.")
NO_PROCESS_FIGURE = N_("NVML does not list this process here (in a container, NVML may list the "
                       "host's process IDs), so only torch's two numbers are shown.")
GPU_ONLY_NOT_RUN = N_("The lines that need a CUDA GPU were not run here; what they print on one "
                      "is below.")
ON_CPU_GPU_ONLY = N_("PyTorch here sees no CUDA GPU, so device is the CPU and this step ran there, "
                     "less the lines that need a CUDA GPU; what it shows on a GPU is printed "
                     "below, not run here.")
#: The heading of a step's "More" (what a class can skip), in the terminal.
MORE_LABEL = N_("More: {more}")
TOO_FEW_GPUS = N_("This step needs {needed} GPUs and PyTorch here sees {seen}, so it was not run: "
                  "what it compares cannot happen with fewer. Below is what it prints on a "
                  "machine with {needed} GPUs.")
STOPPED = N_("Python stops at the first error, so the lines after it did not run.")
NEEDED_FAILED = N_("{code} failed, so the lines that need it did not run.")
META_RAN = N_("Below, the same rule on the meta device (shapes only, no data), which works "
              "without a GPU; its messages are worded differently from CUDA's (for example "
              "'Tensor on device cpu is not on the expected device meta!' where CUDA says "
              "'Expected all tensors to be on the same device, ...').")
META_AGAIN = N_("Below, the same rule on the meta device.")
#: The heading of what a step prints on a GPU, where it was not run: on a machine without one.
GPU_LABEL = N_("On a CUDA GPU, this step shows (not run here):")
#: The heading of what a two-GPU step prints on two GPUs, where there are fewer.
MORE_GPUS_LABEL = N_("On a machine with {count} GPUs, expect:")
NO_TELEMETRY = N_("No GPU telemetry is available here, so there is nothing to show.")
PREAMBLE_FAILED = N_("The code before the step failed ({error}), so the step may fail too.")


NO_UUIDS = N_("nvidia-smi lists no GPU here, so there is no UUID to match.")
UUIDS = N_("nvidia-smi's UUIDs: {listed}.")
SIMULATED_UUIDS = N_("nvidia-smi's UUIDs (simulated GPUs): {listed}.")
SMI_FAILED = N_("Reading the GPUs failed ({error}).")
#: Step 1 where nvidia-smi is not installed: what gpumon shows instead, and what it is.
NVML_VIEW = N_("nvidia-smi is not installed here. Below is gpumon's own view of NVML, the "
               "library nvidia-smi reads, laid out like nvidia-smi; its header, its User "
               "column and its wording are gpumon's.")
SIMULATED_VIEW = N_("Simulated GPUs were asked for, so below is gpumon's view of them, laid out "
                    "like nvidia-smi; it is not nvidia-smi's output.")
REAL_SMI_FAILED = N_("nvidia-smi did not answer ({error}); below is gpumon's own view of NVML, "
                     "laid out like nvidia-smi.")
SIMULATED = N_("These GPUs are simulated: the numbers are not read from hardware.")
UNREADABLE = N_("No GPU could be read here; the box below says why.")
KEPT_YOURS = N_("The lesson uses the name {name}: your Playground's {name} is kept as {kept}.")


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
