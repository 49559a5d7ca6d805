"""The GPU-computing lesson: ordered steps with narration, and a runner that plays them.

Steps 1-10 follow *Dive into Deep Learning* section 4.6 (the book's table in LESSON.md);
steps 11-16 are the English edition's additions. A step is plain data (engine actions plus
prose); :class:`LessonRunner` decides per machine what to run: a CUDA step on a machine
without CUDA still runs, so the student sees the error torch really raises, and then its
``meta_variant`` shows the same rule on the ``meta`` device. No torch import here: torch is
loaded by the Engine when the first action runs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from gpumon.playground import actions as act
from gpumon.playground.outcome import Outcome

if TYPE_CHECKING:
    from gpumon.playground.engine import Engine
    from gpumon.telemetry.types import Snapshot

StepKind = Literal["torch", "smi"]


@dataclass(frozen=True)
class LessonStep:
    """One step: what the student reads, the code that runs, and what the step needs.

    ``kind="smi"`` is step 1, ``nvidia-smi``: no torch action; the runner renders a telemetry
    Snapshot as nvidia-smi-like text. ``preamble`` is code defined before the actions (d2l's
    ``try_gpu``). With ``stop_at_error`` the step stops at its first error, as Python would.
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
    source: str = "book"  # "book" (section 4.6) or "English edition"
    stop_at_error: bool = True
    show_time: bool = False  # the durations are the point (timing steps)
    show_memory: bool = False  # the memory readings are the point

    def code(self) -> str:
        """The Python (or shell command) the step equals: preamble, then each action's code."""
        if self.kind == "smi":
            return "nvidia-smi"
        lines = [self.preamble, ""] if self.preamble else []
        return "\n".join([*lines, *(a.code() for a in self.actions)])

    def meta_code(self) -> str:
        """The code of the meta variant ('' when there is none)."""
        return "\n".join(a.code() for a in self.meta_variant)


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
    note: str
    ran: bool = True
    meta_outcomes: tuple[Outcome, ...] = ()
    smi_text: str | None = None
    cuda_devices: int = 0  # CUDA devices torch saw on this machine

    @property
    def errors(self) -> tuple[Outcome, ...]:
        """The outcomes that failed (torch's errors and the engine's refusals)."""
        return tuple(o for o in self.outcomes if not o.ok)


_CUDA, _LOCAL = "cuda", "cuda:0"
_BIG, _SMALL = (1000, 1000), (10, 10)

LESSON: tuple[LessonStep, ...] = (
    LessonStep(
        "nvidia-smi", "See the GPUs with nvidia-smi",
        "nvidia-smi is the NVIDIA driver's own report. Look at the driver and CUDA versions at "
        "the top, then each GPU: its name, bus id, temperature, power, memory used out of total "
        "and utilization. The table at the bottom lists the processes holding GPU memory; a "
        "PyTorch program appears there once it has touched a GPU.",
        kind="smi"),
    LessonStep(
        "cuda-queries", "Ask PyTorch which GPUs it can use",
        "PyTorch has its own view of the GPUs. is_available() says whether this PyTorch can use "
        "CUDA at all, device_count() how many GPUs it sees, current_device() which one 'cuda' "
        "means, and get_device_name(0) the first GPU's name. Compare the count with nvidia-smi: "
        "a CPU-only build of PyTorch sees no GPU even on a machine that has one.",
        (act.IsAvailable(), act.DeviceCount(), act.CurrentDevice(), act.DeviceName(0)),
        needs_cuda=True, stop_at_error=False),
    LessonStep(
        "tensor-on-cpu", "A tensor starts on the CPU",
        "A new tensor lives in main memory unless you say otherwise. Look at the device: cpu.",
        (act.CreateTensor("x", "[1, 2, 3]"), act.TensorDevice("x"))),
    LessonStep(
        "to-gpu", "Copy a tensor to the GPU",
        "x.cuda(0) copies x to the first GPU and returns the copy; x.cuda() means the current "
        "GPU, usually the same one. The printed tensor now ends with device='cuda:0'. The copy "
        "goes over the PCIe bus, which is much slower than memory inside the GPU.",
        (act.Move("x", "cuda", index=0),), needs_cuda=True),
    LessonStep(
        "device-attr", "Ask a tensor where it lives",
        "Every tensor knows its device. After the previous step, x.device should say "
        "device(type='cuda', index=0); if that step failed, x is still on the CPU.",
        (act.TensorDevice("x"),), needs_cuda=True),
    LessonStep(
        "create-on-gpu", "Create a tensor directly on the GPU",
        "Creating a tensor where it will be used avoids a copy: pass device= to the factory, or "
        "move an existing tensor with .to(device). Portable code writes device = "
        "torch.device('cuda' if torch.cuda.is_available() else 'cpu'); here 'cuda' is asked "
        "for directly, so you see what happens when there is none.",
        (act.CreateTensor("x", "[1, 2, 3]", device=_CUDA), act.Move("x", "to", device=_CUDA)),
        needs_cuda=True),
    LessonStep(
        "results-stay", "Results stay where their inputs are",
        "An operation runs on the device of its operands and leaves its result there: the GPU "
        "computes x ** 2 and the result y lives in GPU memory. Nothing comes back to the CPU "
        "unless you ask for it.",
        (act.Compute("y", "pow", "x"),), needs_cuda=True,
        meta_variant=(act.CreateTensor("xm", "[1, 2, 3]", device="meta"),
                      act.Compute("ym", "pow", "xm"))),
    LessonStep(
        "mixed-devices", "Operands on different devices are an error",
        "y is on the GPU and x.cpu() is a copy in main memory. PyTorch refuses to combine them "
        "instead of copying one silently, because a hidden copy would be slow: read the error, "
        "it names both devices. Move one operand yourself with .to(), .cuda() or .cpu().",
        (act.Compute("z", "add", "y", act.Ref("x", "cpu")),), needs_cuda=True,
        meta_variant=(act.CreateTensor("xm", "[1, 2, 3]", device="meta"),
                      act.Compute("ym", "pow", "xm"),
                      act.Compute("zm", "add", "ym", act.Ref("x", "cpu")))),
    LessonStep(
        "model-device", "A model's parameters have a device too",
        "nn.Linear(3, 1) creates its weight and bias on the CPU. net.cuda() moves every "
        "parameter to the GPU, in place. Look at the parameters' devices before and after.",
        (act.CreateModel("net", 3, 1), act.ModelParameters("net"), act.Move("net", "cuda"),
         act.ModelParameters("net")), needs_cuda=True),
    LessonStep(
        "model-on-gpu", "Run the model on the GPU",
        "With the model and its input on the same GPU, net(x) runs there: the result has shape "
        "(2, 1), lives on cuda:0 and has a grad_fn for backpropagation. Feeding it an input "
        "left on the CPU raises the same-device error, naming the argument that is elsewhere.",
        (act.CreateFilled("x", "rand", (2, 3)), act.Move("x", "cuda"),
         act.CallModel("out", "net", "x"), act.CallModel("out", "net", act.Ref("x", "cpu"))),
        needs_cuda=True,
        meta_variant=(act.CreateModel("net_m", 3, 1, device="meta"),
                      act.CallModel("out_m", "net_m", act.Ref("x", "cpu")))),
    LessonStep(
        "try-gpu", "try_gpu and try_all_gpus: fall back to the CPU",
        "These two helpers let the same code run with or without GPUs: try_gpu(i) returns "
        "cuda:i when torch sees at least i + 1 GPUs and the CPU otherwise, and try_all_gpus() "
        "lists every GPU, or just the CPU. try_gpu(10) shows the fallback on almost any machine.",
        (act.TryGpu(0), act.TryGpu(10), act.TryAllGpus()), preamble=act.TRY_GPU_SOURCE,
        source="English edition"),
    LessonStep(
        "copy-between-gpus", "Copy between GPUs",
        "To combine tensors on two GPUs, copy one to the other: Z = X.cuda(1) copies X from "
        "cuda:0 to cuda:1, and then Y + Z works because both are on cuda:1. Asking for a tensor "
        "where it already is copies nothing: Z.cuda(1) returns Z itself (Z.cuda(1) is Z), so "
        "look for 'copied: no' on the last line.",
        (act.CreateFilled("X", "ones", (2, 3), device="cuda:0"),
         act.CreateFilled("Y", "rand", (2, 3), device="cuda:1"),
         act.Move("X", "cuda", index=1, dest="Z"), act.Compute("S", "add", "Y", "Z"),
         act.Move("Z", "cuda", index=1, dest="Z2")),
        needs_cuda=True, needs_two_gpus=True, source="English edition"),
    LessonStep(
        "copy-to-host", "Printing and .numpy() copy to the host",
        "Printing a GPU tensor copies its numbers to main memory first, and a numpy array can "
        "only live there. So h.cpu().numpy() makes a host copy, while h.numpy() on a GPU tensor "
        "is refused: torch asks you to write the copy yourself. Many small copies like these "
        "can slow a training loop a lot.",
        (act.CreateTensor("h", "[1.0, 2.0, 3.0]", device=_CUDA), act.ToNumpy(act.Ref("h", "cpu")),
         act.ToNumpy("h")), needs_cuda=True, source="English edition",
        meta_variant=(act.CreateTensor("hm", "[1.0, 2.0, 3.0]", device="meta"), act.ToNumpy("hm"))),
    LessonStep(
        "memory-free", "Memory after del and empty_cache()",
        "A 64 MiB tensor raises torch.cuda.memory_allocated by 64 MiB. After del, allocated "
        "drops but reserved does not: PyTorch keeps the block cached for reuse, and nvidia-smi "
        "still counts it. torch.cuda.empty_cache() hands unused cached blocks back to the "
        "driver; the CUDA context itself stays until the process exits.",
        (act.CreateFilled("big", "zeros", (4096, 4096), device=_LOCAL), act.Delete("big"),
         act.EmptyCache()), needs_cuda=True, show_memory=True, source="English edition"),
    LessonStep(
        "timing-cpu", "Time a big and a small matrix product on the CPU",
        "A 1000 x 1000 product does a million times more multiplications than a 10 x 10 one. "
        "Compare the two times: the small one is mostly fixed overhead, the big one is real "
        "work that the CPU's cores share.",
        (act.CreateFilled("big", "rand", _BIG), act.Compute("big_product", "matmul", "big", "big"),
         act.CreateFilled("small", "rand", _SMALL),
         act.Compute("small_product", "matmul", "small", "small")),
        show_time=True, source="English edition"),
    LessonStep(
        "timing-gpu", "Time the same products on the GPU",
        "The first product on a GPU also pays for start-up (loading cuBLAS), so it runs twice: "
        "compare the second time with the CPU's. A big product is much faster on the GPU; a "
        "small one is not, because launching work on the GPU has a fixed cost.",
        (act.CreateFilled("big_gpu", "rand", _BIG, device=_CUDA),
         act.Compute("big_gpu_product", "matmul", "big_gpu", "big_gpu"),
         act.Compute("big_gpu_product", "matmul", "big_gpu", "big_gpu"),
         act.CreateFilled("small_gpu", "rand", _SMALL, device=_CUDA),
         act.Compute("small_gpu_product", "matmul", "small_gpu", "small_gpu")),
        needs_cuda=True, show_time=True, source="English edition"),
)

NO_CUDA_ERROR = ("This step needs a CUDA GPU; PyTorch here has none, so you see the error it "
                 "really raises.")
NO_CUDA_RAN = ("This step is meant for a CUDA GPU; PyTorch here has none, so it ran on the CPU "
               "and shows the CPU-only answer.")
NO_SECOND_GPU = "This step needs two GPUs; this machine has one, so it is not run."
NO_TWO_GPUS = ("This step needs two GPUs; PyTorch here has none, so you see the error it "
               "really raises.")
STOPPED = "Python stops at the first error, so the lines after it did not run."
META_RAN = ("Below it, the same rule on the meta device (shapes only, no data), which works "
            "without a GPU.")
NO_TELEMETRY = "No GPU telemetry is available here, so there is nothing to show."


class LessonRunner:
    """Plays lesson steps on an Engine, deciding per machine what to run; Qt-free.

    The runner owns its engine's workspace: running a step other than the next one clears it
    and replays the earlier steps quietly, so step k always sees what steps 1..k-1 left.
    ``snapshot`` returns the current telemetry Snapshot (or None) for step 1.
    """

    def __init__(self, engine: Engine, snapshot: Callable[[], Snapshot | None] = lambda: None,
                 steps: Sequence[LessonStep] = LESSON, shared: bool = False) -> None:
        self._engine = engine
        self._snapshot = snapshot
        self._steps = tuple(steps)
        # shared: the engine is the playground's too; a reset forgets only the lesson's names
        self._shared = shared
        self._made: set[str] = set()
        self._next = 1  # the step whose predecessors have run, in order
        self._cuda: int | None = None

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
                if self._steps[earlier - 1].kind != "smi":  # nothing to replay there
                    self._play(earlier, meta=False)
        result = self._play(number, meta)
        self._next = number + 1
        return result

    def run_all(self, meta: bool = True) -> Iterator[StepResult]:
        """Every step in order, from a clean workspace."""
        self.reset()
        for number in range(1, len(self._steps) + 1):
            yield self.run_step(number, meta)

    def _play(self, number: int, meta: bool) -> StepResult:
        step = self._steps[number - 1]
        if step.kind == "smi":
            return self._smi(number, step)
        cuda = self.cuda_device_count()
        if step.needs_two_gpus and cuda == 1:
            return StepResult(number, step, (), NO_SECOND_GPU, ran=False, cuda_devices=cuda)
        outcomes = self._run_actions(step.actions, step.stop_at_error)
        notes = []
        if step.needs_cuda and cuda == 0:
            failed = any(not o.ok for o in outcomes)
            notes.append(NO_TWO_GPUS if step.needs_two_gpus else
                         NO_CUDA_ERROR if failed else NO_CUDA_RAN)
        if len(outcomes) < len(step.actions):
            notes.append(STOPPED)
        meta_outcomes: tuple[Outcome, ...] = ()
        if meta and step.meta_variant and step.needs_cuda and cuda == 0:
            meta_outcomes = self._run_actions(step.meta_variant, stop_at_error=True)
            notes.append(META_RAN)
        return StepResult(number, step, outcomes, " ".join(notes), True, meta_outcomes,
                          cuda_devices=cuda)

    def _run_actions(self, actions: Sequence[act.Action], stop_at_error: bool
                     ) -> tuple[Outcome, ...]:
        outcomes = []
        for action in actions:
            outcome = self._engine.run(action)
            if outcome.result_name is not None:
                self._made.add(outcome.result_name)
            outcomes.append(outcome)
            if stop_at_error and not outcome.ok:
                break
        return tuple(outcomes)

    def _smi(self, number: int, step: LessonStep) -> StepResult:
        """Step 1: the nvidia-smi-like text of the current snapshot; never raises."""
        from gpumon.telemetry.smi_text import render

        try:
            snapshot = self._snapshot()
            text = None if snapshot is None else render(snapshot)
        except Exception as exc:  # noqa: BLE001 - a telemetry bug must not stop the lesson
            return StepResult(number, step, (), f"Reading the GPUs failed ({type(exc).__name__}: "
                              f"{exc}).", smi_text=None)
        if snapshot is None or text is None:
            return StepResult(number, step, (), NO_TELEMETRY, smi_text=None)
        note = ""
        if snapshot.simulated or snapshot.machine.simulated:
            note = "These GPUs are simulated: the numbers are not read from hardware."
        elif not snapshot.status.usable:
            note = "No GPU could be read here; the text says why."
        return StepResult(number, step, (), note, smi_text=text)


__all__ = ["LESSON", "LessonRunner", "LessonStep", "StepResult", "StepKind"]
