"""The lesson's steps as plain data: narration, the code that runs, what a GPU shows.

Steps follow *Dive into Deep Learning* section 4.6 ("book") and the English edition's
"GPUs" section with its exercises; "gpumon" marks what neither edition has. Most steps use
``device``, chosen once in step 4 (d2l's ``try_gpu``), so they run on any machine. Titles,
narration and the descriptions in ``on_gpu`` are catalogue messages (``N_``), translated
where they are shown; code and torch's own text are never translated.
``on_gpu`` is what each action shows on a CUDA GPU (torch 2.13): a CPU-only machine prints
it, labelled, instead of running the CUDA code again; an entry in parentheses describes a
value that varies (random numbers), the others are torch's exact text. No torch import.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from gpumon.i18n import N_, tr
from gpumon.playground.data import actions as act
from gpumon.playground.data.actions import RunCode

StepKind = Literal["torch", "smi", "glossary"]
#: How each ``source`` is shown beside a step's title (translated there).
SOURCE_LABELS = {"book": N_("book"), "English edition": N_("English edition"),
                 "gpumon": N_("gpumon")}


@dataclass(frozen=True)
class LessonStep:
    """One step: what the student reads, the code that runs, and what the step needs.

    ``kind="smi"`` is step 1, ``nvidia-smi``: no torch action; the runner renders a telemetry
    Snapshot as nvidia-smi-like text. ``kind="glossary"`` is step 2: no code; it shows
    :mod:`~gpumon.playground.lesson.glossary`. ``preamble`` is code run (and shown) before the
    actions. ``needs_cuda``: the step's point needs a GPU (on a CPU-only machine the runner
    shows torch's error once, then ``on_gpu`` and the meta variant). ``replay`` False: later
    steps do not need what this one leaves, so jumping past it does not run it again.
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

    def code(self) -> str:
        """The Python (or shell command) the step equals: preamble, then each action's code."""
        if self.kind == "smi":
            return "nvidia-smi"
        if self.kind == "glossary":
            return ""
        lines = [self.preamble, ""] if self.preamble else []
        return "\n".join([*lines, *(a.code() for a in self.actions)])

    def meta_code(self) -> str:
        """The code of the meta variant ('' when there is none)."""
        return "\n".join(a.code() for a in self.meta_variant)

    def gpu_text(self) -> str:
        """``on_gpu`` as a REPL transcript: each action's code, then what a GPU shows (a
        description in parentheses in the language in use; torch's text as torch wrote it)."""
        lines: list[str] = []
        for action, shown in zip(self.actions, self.on_gpu, strict=False):
            code = action.code().splitlines()
            told = tr(shown) if shown.startswith("(") else shown
            lines += [f">>> {code[0]}", *(f"... {c}" for c in code[1:]), told]
        return "\n".join(lines)


def _code(source: str) -> RunCode:
    return RunCode(source)


TWO_BY_THREE_ONES = "tensor([[1., 1., 1.],\n        [1., 1., 1.]], device='{}')"

ASYNC_TIMING = """import time
start = time.perf_counter()
b = a @ a
returned = time.perf_counter() - start
if device.type == 'cuda':
    torch.cuda.synchronize()
finished = time.perf_counter() - start
f'a @ a returned after {returned * 1e3:.3f} ms; the work was done after {finished * 1e3:.3f} ms'"""

LOG_EVERY_STEP = """import time
model = nn.Linear(100, 1).to(device)
sgd = torch.optim.SGD(model.parameters(), lr=0.01)
data = torch.rand(256, 100, device=device)
def train_step():
    loss = model(data).square().mean()
    sgd.zero_grad()
    loss.backward()
    sgd.step()
    return loss
start = time.perf_counter()
log = [train_step().item() for _ in range(300)]
every_step = time.perf_counter() - start
start = time.perf_counter()
log = torch.stack([train_step().detach() for _ in range(300)]).tolist()
at_the_end = time.perf_counter() - start
f'.item() every step: {every_step * 1e3:.1f} ms; one copy at the end: {at_the_end * 1e3:.1f} ms'"""

BENCHMARK = """from torch.utils import benchmark
times = {}
for dev in dict.fromkeys([torch.device('cpu'), device]):
    for n in (10, 1000):
        a = torch.rand(n, n, device=dev)
        m = benchmark.Timer('a @ a', globals={'a': a}).blocked_autorange(min_run_time=1)
        times[f'{n} x {n} on {dev}'] = f'median {m.median * 1e6:.1f} µs'
times"""

SAVE_PREAMBLE = """import os
from gpumon.playground.lesson.checkpoint_path import SAVED_ON_CUDA, lesson_folder
path = os.path.join(lesson_folder(), 'net.pt')  # a private folder made for this run"""

LESSON: tuple[LessonStep, ...] = (
    LessonStep(
        "nvidia-smi", N_("See the GPUs with nvidia-smi"),
        N_("nvidia-smi is the NVIDIA driver's own report. Its 'CUDA Version' is the newest CUDA "
           "this driver supports, not the CUDA toolkit installed nor the one PyTorch was built "
           "with (torch.version.cuda, asked for after the glossary). Then each GPU: name, bus id, "
           "temperature, power, memory used out of total, and utilization, the share of the last "
           "sample period in which at least one kernel was running (not the share of the GPU's "
           "cores in use). The table at the bottom lists the processes holding GPU memory; a "
           "PyTorch program appears there once it has touched a GPU."),
        kind="smi"),
    LessonStep(
        "glossary", N_("Glossary: the words this lesson uses"),
        N_("Before the code starts, here are the words the lesson uses, each with what it means "
           "here. PyTorch's messages and documentation use the same words, so they are the ones "
           "to search for when something goes wrong."),
        kind="glossary", source="gpumon", replay=False),
    LessonStep(
        "cuda-queries", N_("Ask PyTorch which GPUs it can use"),
        N_("torch.__version__ and torch.version.cuda say which PyTorch this is and which CUDA it "
           "was built with; None means a CPU-only build, which never sees a GPU. With a CUDA "
           "build, is_available() is still False when the NVIDIA driver is missing or too old, or "
           "when no GPU is visible to this process. CUDA_VISIBLE_DEVICES hides GPUs and numbers "
           "the rest from 0, and CUDA puts the fastest GPU first unless "
           "CUDA_DEVICE_ORDER=PCI_BUS_ID, so cuda:0 need not be nvidia-smi's GPU 0. Match them by "
           "UUID: the last line lists torch's, the note lists nvidia-smi's."),
        (act.Versions(), act.IsAvailable(), act.DeviceCount(),
         _code("import os\n{name: os.environ.get(name) for name in "
               "('CUDA_VISIBLE_DEVICES', 'CUDA_DEVICE_ORDER')}"),
         act.CurrentDevice(), act.DeviceName(0),
         _code("[str(torch.cuda.get_device_properties(i).uuid) "
               "for i in range(torch.cuda.device_count())]")),
        stop_at_error=False, show_uuids=True),
    LessonStep(
        "choose-device", N_("Choose the device once: try_gpu"),
        N_("Choose the device once, right after asking what there is, and use it in everything "
           "after. d2l's try_gpu(i) returns cuda:i when torch sees at least i + 1 GPUs and the "
           "CPU otherwise, and try_all_gpus() lists every GPU, or just the CPU. The later steps "
           "create tensors and models with device=device or move them with .to(device), so the "
           "same code runs with or without a GPU."),
        (act.TryGpu(0), act.TryGpu(10), act.TryAllGpus(), _code("device = try_gpu()")),
        preamble=act.TRY_GPU_SOURCE, source="English edition"),
    LessonStep(
        "tensor-on-cpu", N_("A tensor starts on the CPU"),
        N_("A new tensor lives in main memory unless you say otherwise. Every tensor knows its "
           "device: x.device says cpu."),
        (act.CreateTensor("x", "[1, 2, 3]"), act.TensorDevice("x"))),
    LessonStep(
        "to-gpu", N_("Copy a tensor to the GPU"),
        N_("x.cuda(0) copies x to the first GPU and returns the copy; x itself stays where it "
           "was, so the copy must be assigned: x = x.cuda(0). x.cuda() means the current GPU, "
           "usually cuda:0, and x.to(device) does the same with the device try_gpu chose. The "
           "copy crosses the PCIe bus, which is much slower than memory inside the GPU."),
        (_code("x.cuda(0)"), act.TensorDevice("x"), act.Move("x", "cuda", index=0),
         act.TensorDevice("x")),
        needs_cuda=True,
        on_gpu=("tensor([1, 2, 3], device='cuda:0')", "device(type='cpu')",
                "tensor([1, 2, 3], device='cuda:0')", "device(type='cuda', index=0)"),
        meta_variant=(_code("x.to('meta')"), act.TensorDevice("x"))),
    LessonStep(
        "create-on-device", N_("Create a tensor on the device"),
        N_("Factories such as torch.zeros, ones, rand and arange allocate a tensor directly on "
           "the device you pass, with no copy. torch.tensor(data, device=device) is different: it "
           "first builds the tensor in main memory from the Python list, then copies it to the "
           "device, which is fine for a few numbers but not for big data."),
        (_code("x = torch.tensor([1, 2, 3], device=device)"),
         _code("w = torch.ones(2, 3, device=device)")),
        on_gpu=("tensor([1, 2, 3], device='cuda:0')", TWO_BY_THREE_ONES.format("cuda:0"))),
    LessonStep(
        "results-stay", N_("Results stay where their inputs are"),
        N_("An operation runs on the device of its operands and leaves its result there: with x "
           "on the GPU, the GPU computes x ** 2 and y lives in GPU memory. Nothing comes back to "
           "main memory unless you ask for it."),
        (act.Compute("y", "pow", "x"),),
        on_gpu=("tensor([1, 4, 9], device='cuda:0')",),
        meta_variant=(act.CreateTensor("xm", "[1, 2, 3]", device="meta"),
                      act.Compute("ym", "pow", "xm"))),
    LessonStep(
        "mixed-devices", N_("Operands on different devices are an error"),
        N_("y is on the GPU and x.cpu() is a copy in main memory: for most operations PyTorch "
           "refuses to combine tensors on different devices rather than copy one behind your "
           "back, and the error names both devices. There are exceptions: a 0-dim CPU tensor such "
           "as torch.tensor(10) is accepted like a plain number, and a CPU tensor may index a GPU "
           "tensor. The usual fix is to move the odd one to where the work is, c.to(y.device), as "
           "you move an input to the model's device."),
        (act.Compute("z", "add", "y", act.Ref("x", "cpu")), _code("y + torch.tensor(10)"),
         _code("y[torch.tensor([0, 2])]"), _code("c = torch.tensor([1, 2, 3])"),
         _code("z = y + c.to(y.device)")),
        needs_cuda=True, stop_at_error=False,
        on_gpu=("RuntimeError: Expected all tensors to be on the same device, but found at "
                "least two devices, cuda:0 and cpu!",
                "tensor([11, 14, 19], device='cuda:0')", "tensor([1, 9], device='cuda:0')",
                "tensor([1, 2, 3])", "tensor([ 2,  6, 12], device='cuda:0')"),
        meta_variant=(act.CreateTensor("xm", "[1, 2, 3]", device="meta"),
                      act.Compute("ym", "pow", "xm"),
                      act.Compute("zm", "add", "ym", act.Ref("x", "cpu")),
                      _code("ym + torch.tensor(10)"),
                      _code("zm = ym + torch.tensor([1, 2, 3]).to(ym.device)"))),
    LessonStep(
        "model-device", N_("Move a model in place, then build its optimizer"),
        N_("nn.Linear(3, 1) creates its weight and bias on the CPU. Unlike x.cuda(), net.cuda() "
           "(and net.to(device)) moves the model's parameters in place and returns the same "
           "model, so nothing needs assigning. Build the optimizer after the move, as the "
           "torch.optim documentation asks: it holds the parameters, and any state it has made "
           "(momentum, Adam's averages) stays on the device where it was made."),
        (act.CreateModel("net", 3, 1), act.ModelParameters("net"), _code("net.cuda()"),
         act.ModelParameters("net"), _code("opt = torch.optim.SGD(net.parameters(), lr=0.1)"),
         _code("opt.param_groups[0]['params'][0].device")),
        needs_cuda=True,
        on_gpu=("Linear(in_features=3, out_features=1, bias=True)",
                "[device(type='cpu'), device(type='cpu')]",
                "Linear(in_features=3, out_features=1, bias=True)",
                "[device(type='cuda', index=0), device(type='cuda', index=0)]",
                N_("(an SGD optimizer over net's two parameters)"), "device(type='cuda', index=0)"),
        meta_variant=(act.CreateModel("net_m", 3, 1), _code("net_m.to('meta')"),
                      act.ModelParameters("net_m"))),
    LessonStep(
        "model-on-gpu", N_("Run the model on the GPU"),
        N_("With the model and its input on the same GPU, net(x) runs there: the result has shape "
           "(2, 1), lives on cuda:0 and has a grad_fn for backpropagation. An input left on the "
           "CPU raises the same-device error, naming the argument that is elsewhere (mat1). The "
           "usual fix is to move the input to the model's device, as the last line does, not the "
           "model to the CPU."),
        (_code("x = torch.rand(2, 3, device=device)"), act.CallModel("out", "net", "x"),
         _code("net(torch.rand(2, 3))"), _code("net(torch.rand(2, 3).to(device))")),
        needs_cuda=True, stop_at_error=False,
        on_gpu=(N_("(a random (2, 3) tensor on cuda:0)"),
                N_("(a (2, 1) tensor on cuda:0 with grad_fn=<AddmmBackward0>)"),
                "RuntimeError: Expected all tensors to be on the same device, but got mat1 is "
                "on cpu, different from other tensors on cuda:0 (when checking argument in "
                "method wrapper_CUDA_addmm)",
                N_("(a (2, 1) tensor on cuda:0 with grad_fn=<AddmmBackward0>)")),
        meta_variant=(act.CreateModel("net_m2", 3, 1, device="meta"),
                      _code("net_m2(torch.rand(2, 3))"),
                      _code("net_m2(torch.rand(2, 3).to('meta'))"))),
    LessonStep(
        "copy-between-gpus", N_("Copy between GPUs"),
        N_("To combine tensors on two GPUs, copy one to the other: Z = X.cuda(1) copies X from "
           "cuda:0 to cuda:1, and then Y + Z works because both are on cuda:1. Asking for a "
           "tensor where it already is copies nothing: Z.cuda(1) is Z. With one GPU there is no "
           "cuda:1, and torch says so: CUDA error: invalid device ordinal."),
        (_code("X = torch.ones(2, 3, device='cuda:0')"),
         _code("Y = torch.rand(2, 3, device='cuda:1')"), _code("Z = X.cuda(1)"),
         _code("Y + Z"), _code("Z.cuda(1) is Z")),
        needs_cuda=True, needs_two_gpus=True, source="English edition",
        on_gpu=(TWO_BY_THREE_ONES.format("cuda:0"), N_("(a random (2, 3) tensor on cuda:1)"),
                TWO_BY_THREE_ONES.format("cuda:1"), N_("(Y + 1, on cuda:1)"), "True")),
    LessonStep(
        "copy-to-host", N_("Printing, .item() and .numpy(): copies to the host"),
        N_("Printing a GPU tensor, .item() and .tolist() copy its numbers to main memory without "
           "being asked, and each first waits for the GPU to finish the work queued before it. "
           "x.numpy() makes no copy: the array shares the CPU tensor's memory, which a GPU tensor "
           "cannot do, so torch refuses and asks for .cpu() first; numpy(force=True) makes that "
           "copy for you. What makes many small copies slow is mostly this waiting, the "
           "synchronisation, not the bytes moved."),
        (_code("h = torch.tensor([1.0, 2.0, 3.0], device=device)"), _code("h.sum().item()"),
         _code("h.tolist()"), act.ToNumpy(act.Ref("h", "cpu")), act.ToNumpy("h"),
         _code("h.numpy(force=True)")),
        source="English edition", stop_at_error=False,
        on_gpu=("tensor([1., 2., 3.], device='cuda:0')", "6.0", "[1.0, 2.0, 3.0]",
                "array([1., 2., 3.], dtype=float32)",
                "TypeError: can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() "
                "to copy the tensor to host memory first.",
                "array([1., 2., 3.], dtype=float32)"),
        meta_variant=(act.CreateFilled("hm", "ones", (3,), device="meta"), act.ToNumpy("hm"),
                      _code("hm.cpu()"), _code("hm.sum().item()"))),
    LessonStep(
        "memory", N_("Memory: the context, the cache, del and empty_cache()"),
        N_("The first CUDA operation in a process creates its CUDA context, a few hundred MiB "
           "that nvidia-smi counts and torch's counters do not, kept until the process exits. A "
           "64 MiB tensor raises memory_allocated by 64 MiB; after del, allocated drops but "
           "reserved does not, because PyTorch's caching allocator keeps the block for reuse, and "
           "nvidia-smi still counts it. torch.cuda.empty_cache() hands unused cached blocks back "
           "to the driver, and a model is memory too: nn.Linear(4096, 4096) holds 64 MiB of "
           "weights. In the window, each action is a marker on the graphs of the Monitor and "
           "Playground tabs, and their memory lines move with it."),
        (_code("big = torch.ones(4096, 4096, device=device)"),
         _code("torch.cuda.memory_allocated(), torch.cuda.memory_reserved()"),
         act.Delete("big"),
         _code("torch.cuda.memory_allocated(), torch.cuda.memory_reserved()"),
         act.EmptyCache(), _code("big_net = nn.Linear(4096, 4096).to(device)"),
         _code("torch.cuda.max_memory_allocated()")),
        source="gpumon", show_memory=True, replay=False,
        on_gpu=(N_("(a 64 MiB tensor of ones on cuda:0)"),
                N_("(allocated and reserved, in bytes: each 64 MiB more than before)"),
                N_("(del: allocated drops by 64 MiB)"),
                N_("(allocated 64 MiB less; reserved unchanged)"),
                N_("(reserved drops: the cached block goes back to the driver)"),
                "Linear(in_features=4096, out_features=4096, bias=True)",
                N_("(the peak: at least 67108864)"))),
    LessonStep(
        "asynchronous", N_("GPU work is asynchronous"),
        N_("A CUDA operation only queues its work and returns at once; the GPU computes in the "
           "background. So a clock stopped right after a @ a measures the queueing, and only "
           "after torch.cuda.synchronize() has waited for the GPU is the time real; on the CPU "
           "both times are the same, since CPU work is done before the call returns. Anything "
           "that needs a value on the host waits too, so logging the loss with .item() at every "
           "step stalls the GPU each time, while keeping the losses on the GPU and copying once "
           "at the end does not (the book's exercise). gpumon itself synchronises after every "
           "action, so the time on each card includes the GPU's work."),
        (_code("a = torch.rand(2000, 2000, device=device)"),
         _code("b = a @ a  # warm-up: the first product on a GPU also loads cuBLAS"),
         _code(ASYNC_TIMING), _code(LOG_EVERY_STEP)),
        source="English edition", replay=False,
        on_gpu=(N_("(a random (2000, 2000) tensor on cuda:0)"), N_("(b on cuda:0)"),
                N_("(returned after microseconds; the work was done only later)"),
                N_("(loss.item() every step is the slower of the two)"))),
    LessonStep(
        "timing", N_("Time the products properly, on every device"),
        N_("Timing GPU code needs a warm-up (the first call loads libraries), a synchronisation "
           "before the clock is read, and many runs; torch.utils.benchmark.Timer does all three, "
           "on the CPU and on the GPU alike. It times a 10 x 10 and a 1000 x 1000 product here "
           "for at least a second each, long enough to see the utilization graph rise on a GPU. A "
           "big product is much faster on a GPU; a small one is not, because launching work on a "
           "GPU has a fixed cost."),
        (_code(BENCHMARK),),
        source="English edition", replay=False,
        on_gpu=(N_("(four medians: 10 x 10 and 1000 x 1000 on cpu and on cuda:0)"),)),
    LessonStep(
        "save-load", N_("Save on one device, load on another"),
        N_("torch.save records each tensor's device with its data, and torch.load puts it back on "
           "that device unless map_location says otherwise. So a checkpoint saved from a GPU "
           "fails to load on a machine without CUDA, with the classic 'Attempting to deserialize "
           "object on a CUDA device' error, and map_location='cpu' (or device) loads it anywhere. "
           "SAVED_ON_CUDA is a small nn.Linear(3, 1) state_dict that comes with gpumon, its "
           "storages tagged cuda:0 as a save from a GPU tags them; it was written with that tag "
           "on a machine without a GPU."),
        (_code("net = nn.Linear(3, 1).to(device)"), _code("torch.save(net.state_dict(), path)"),
         _code("torch.load(path, map_location=device)"), _code("torch.load(SAVED_ON_CUDA)"),
         _code("torch.load(SAVED_ON_CUDA, map_location='cpu')")),
        preamble=SAVE_PREAMBLE, source="English edition", stop_at_error=False, needed=(0, 1),
        on_gpu=("Linear(in_features=3, out_features=1, bias=True)", "None",
                N_("(net's weight and bias, on cuda:0)"),
                N_("(the saved weight and bias, on cuda:0)"),
                N_("(the saved weight and bias, on the CPU)"))),
)

__all__ = ["LESSON", "LessonStep", "StepKind"]
