"""The lesson's steps as plain data: narration, the code that runs, what a GPU shows.

Steps follow *Dive into Deep Learning* section 4.6 ("book") and the English edition's
"GPUs" section with its exercises; "gpumon" marks what neither edition has. Most steps use
``device``, chosen once in step 4 (d2l's ``try_gpu``), so they run on any machine. Titles,
narration and the descriptions in ``on_gpu`` are catalogue messages (``N_``), translated
where they are shown; code and torch's own text are never translated.
``on_gpu`` is what each action shows on a CUDA GPU (torch 2.13): a CPU-only machine prints
it, labelled, instead of running the CUDA code again; an entry that starts with ``# `` is a
comment describing a value that varies (random numbers), the others are torch's exact text.
Transcripts show only what a Python prompt prints (lesson/transcript.py). No torch import.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from gpumon.i18n import N_, tr
from gpumon.playground.data import actions as act
from gpumon.playground.data.actions import RunCode
from gpumon.playground.lesson.step_code import (
    ASYNC_TIMING,
    BENCHMARK,
    LOG_EVERY_STEP,
    MINIBATCHES,
    PRIVATE_FOLDER,
    TWO_GPUS,
    WARM_UP_CUBLAS,
    localize,
)
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
    ``min_gpus``: with fewer CUDA GPUs the step is not run at all (its note says why).
    ``uses_device`` False: the step runs before ``device`` is chosen. ``window_note`` is said
    only in the window (it speaks of the window's graphs).
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

    def gpu_text(self) -> str:
        """``on_gpu`` as a REPL transcript: each action's code, then what a Python prompt
        prints on a GPU (torch's text as torch wrote it), or a comment in the language in use
        that describes a value that varies."""
        lines: list[str] = []
        for action, shown in zip(self.actions, self.on_gpu, strict=False):
            code = localize(action.code())
            if is_comment(shown):
                lines += [*prompt_lines(code, None), tr(shown)]
            else:
                lines += prompt_lines(code, shown)
        return "\n".join(lines)


def is_comment(shown: str) -> bool:
    """Whether an ``on_gpu`` entry describes a value (a comment) rather than being torch's text."""
    return shown.startswith("# ")


def _code(source: str) -> RunCode:
    return RunCode(source)


TWO_BY_THREE_ONES = "tensor([[1., 1., 1.],\n        [1., 1., 1.]], device='{}')"

SAVE_PREAMBLE = f"""import os
from gpumon.playground.lesson.checkpoint_path import SAVED_ON_CUDA, lesson_folder
path = os.path.join(lesson_folder(), 'net.pt')  # {PRIVATE_FOLDER}"""

LESSON: tuple[LessonStep, ...] = (
    LessonStep(
        "nvidia-smi", N_("See the GPUs with nvidia-smi"),
        N_("nvidia-smi is the NVIDIA driver's own report. Its 'CUDA Version' is the newest CUDA "
           "this driver supports, not the CUDA toolkit installed nor the one PyTorch was built "
           "with (torch.version.cuda, asked for after the glossary). Then each GPU: name, bus id, "
           "temperature, power, memory used out of total, and utilization, the share of the last "
           "sample period in which at least one kernel was running (not the share of the GPU's "
           "cores in use). The table at the bottom lists the processes holding GPU memory; a "
           "PyTorch program appears there once it has touched a GPU. gpumon runs the real "
           "nvidia-smi where the machine has it; elsewhere it shows its own view of the same "
           "NVML readings, laid out like nvidia-smi and labelled so."),
        kind="smi"),
    LessonStep(
        "glossary", N_("Glossary: the words this lesson uses"),
        N_("Before the code starts, here are the words the lesson uses, each with what it means "
           "here. PyTorch's messages and documentation use the same words, so they are the ones "
           "to search for when something goes wrong."),
        kind="glossary", source="gpumon", replay=False),
    LessonStep(
        "cuda-queries", N_("Ask PyTorch which GPUs it can use"),
        N_("torch.version.cuda is the CUDA this PyTorch was built with. It is None on a "
           "CPU-only build, which has no GPU support, and on a ROCm build, which drives AMD GPUs "
           "through the same torch.cuda functions (torch.version.hip is set there); on a Mac "
           "with Apple silicon the GPU is mps, not cuda, so try_gpu returns the CPU there. A "
           "CUDA build still says is_available() False when the driver is missing or too old, "
           "or when no GPU is visible to this process. CUDA_VISIBLE_DEVICES lists the GPUs a "
           "process may use, numbered from 0 in the order given (=2,0 makes GPU 2 cuda:0), "
           "takes GPU-<uuid> too, and is read only when CUDA initializes: set after the first "
           "CUDA call in a notebook, it does nothing. CUDA also puts the fastest GPU first "
           "unless CUDA_DEVICE_ORDER=PCI_BUS_ID, so match cuda:i with nvidia-smi's GPUs by "
           "UUID, which torch prints without the GPU- prefix (the last line adds it)."),
        (act.Versions(), act.IsAvailable(), act.DeviceCount(),
         _code("import os\n{name: os.environ.get(name) for name in "
               "('CUDA_VISIBLE_DEVICES', 'CUDA_DEVICE_ORDER')}"),
         act.CurrentDevice(), act.DeviceName(0),
         _code("['GPU-' + str(torch.cuda.get_device_properties(i).uuid) "
               "for i in range(torch.cuda.device_count())]")),
        stop_at_error=False, show_uuids=True, uses_device=False,
        on_gpu=(N_("# the version and its CUDA, such as ('2.13.0+cu128', '12.8')"), "True",
                N_("# the number of GPUs torch sees: 1 in the book"),
                N_("# None for each where neither is set"), "0",
                N_("# the GPU's name, such as 'NVIDIA GeForce GTX 1050'"),
                N_("# one 'GPU-…' UUID per GPU, as nvidia-smi -L prints them"))),
    LessonStep(
        "choose-device", N_("Choose the device once: try_gpu"),
        N_("Choose the device once, right after asking what there is, and use it in everything "
           "after. d2l's try_gpu(i) returns cuda:i when torch sees at least i + 1 GPUs and the "
           "CPU otherwise, and try_all_gpus() lists every GPU, or just the CPU. The later steps "
           "create tensors and models with device=device or move them with .to(device), so the "
           "same code runs with or without a GPU. The book's Chinese edition writes the same "
           "choice in one line, torch.device('cuda' if torch.cuda.is_available() else 'cpu'), "
           "which also gives the first GPU or the CPU. As d2l says, cpu means all the CPU's "
           "cores and the main memory together, while cuda:i is one card and its own memory."),
        (act.TryGpu(0), act.TryGpu(10), act.TryAllGpus(),
         _code("torch.device('cuda' if torch.cuda.is_available() else 'cpu')"),
         _code("device = try_gpu()")),
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
           "on the GPU, the GPU computes x ** 2 and y lives in GPU memory. It stays there until "
           "Python needs one of its numbers; step 13 lists when that happens."),
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
                N_("# an SGD optimizer over net's two parameters"), "device(type='cuda', index=0)"),
        meta_variant=(act.CreateModel("net_m", 3, 1), _code("net_m.to('meta')"),
                      act.ModelParameters("net_m"))),
    LessonStep(
        "model-on-gpu", N_("Run the model on the GPU"),
        N_("With the model and its input on the same GPU, net(x) runs there: the result has shape "
           "(2, 1), lives on cuda:0 and has a grad_fn for backpropagation. An input left on the "
           "CPU raises the same-device error, naming the argument that is elsewhere (mat1). The "
           "usual fix is to move the input to the model's device, as the fourth line does, not "
           "the model to the CPU. In training this is the first device bug most people meet: a "
           "DataLoader hands out each minibatch, X and y, on the CPU, so both must be moved "
           "inside the loop, at every iteration, as the last line does."),
        (_code("x = torch.rand(2, 3, device=device)"), act.CallModel("out", "net", "x"),
         _code("net(torch.rand(2, 3))"), _code("net(torch.rand(2, 3).to(device))"),
         _code(MINIBATCHES)),
        needs_cuda=True, stop_at_error=False,
        on_gpu=(N_("# a random (2, 3) tensor on cuda:0"),
                N_("# a (2, 1) tensor on cuda:0 with grad_fn=<AddmmBackward0>"),
                "RuntimeError: Expected all tensors to be on the same device, but got mat1 is "
                "on cpu, different from other tensors on cuda:0 (when checking argument in "
                "method wrapper_CUDA_addmm)",
                N_("# a (2, 1) tensor on cuda:0 with grad_fn=<AddmmBackward0>"),
                "device(type='cuda', index=0)"),
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
        on_gpu=(TWO_BY_THREE_ONES.format("cuda:0"), N_("# a random (2, 3) tensor on cuda:1"),
                TWO_BY_THREE_ONES.format("cuda:1"), N_("# Y + 1, on cuda:1"), "True")),
    LessonStep(
        "copy-to-host", N_("Printing, .item() and .numpy(): copies to the host"),
        N_("One rule says when numbers come back from the GPU: whenever Python needs a number, "
           "that is, for printing a tensor, .item(), .tolist(), .numpy(), a tensor used as a "
           "condition (if t:), and operations whose result's shape depends on the data, such as "
           "nonzero() or indexing with a mask (h[h > 1]). Each of these first waits for the GPU "
           "to finish the work queued before it. x.numpy() makes no copy: the array shares the "
           "CPU tensor's memory, which a GPU tensor cannot do, so torch refuses and asks for "
           ".cpu() first; numpy(force=True) makes that copy for you. .numpy() also refuses a "
           "tensor that requires grad: .detach() it first. What makes many small copies slow "
           "is mostly this waiting, the synchronization, not the bytes moved."),
        (_code("h = torch.tensor([1.0, 2.0, 3.0], device=device)"), _code("h.sum().item()"),
         _code("h.tolist()"), _code("h[h > 1]"), act.ToNumpy(act.Ref("h", "cpu")),
         act.ToNumpy("h"), _code("h.numpy(force=True)"),
         _code("w = torch.ones(3, requires_grad=True)"), _code("w.numpy()"),
         _code("w.detach().numpy()")),
        source="English edition", stop_at_error=False,
        on_gpu=("tensor([1., 2., 3.], device='cuda:0')", "6.0", "[1.0, 2.0, 3.0]",
                "tensor([2., 3.], device='cuda:0')", "array([1., 2., 3.], dtype=float32)",
                "TypeError: can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() "
                "to copy the tensor to host memory first.",
                "array([1., 2., 3.], dtype=float32)", "tensor([1., 1., 1.], requires_grad=True)",
                "RuntimeError: Can't call numpy() on Tensor that requires grad. Use "
                "tensor.detach().numpy() instead.", "array([1., 1., 1.], dtype=float32)"),
        meta_variant=(act.CreateFilled("hm", "ones", (3,), device="meta"), act.ToNumpy("hm"),
                      _code("hm.cpu()"), _code("hm.sum().item()"))),
    LessonStep(
        "memory", N_("Memory: the context, the cache, del and empty_cache()"),
        N_("The first CUDA operation in a process creates its CUDA context, a few hundred MiB "
           "that nvidia-smi counts and torch's counters do not, kept until the process exits. "
           "After del of a 64 MiB tensor, memory_allocated drops but memory_reserved does not: "
           "PyTorch's caching allocator keeps the block for reuse, and nvidia-smi still counts "
           "it. del removes a name, and the tensor goes with its last reference (in Jupyter, "
           "Out[n] and _ keep a displayed one alive). empty_cache() returns unused cached "
           "blocks to the driver for other processes, and nvidia-smi, to see; it gives PyTorch "
           "itself no more memory, since the allocator empties its cache and retries before "
           "any out-of-memory error. A model is memory too: nn.Linear(4096, 4096) holds 64 MiB."),
        (_code("big = torch.ones(4096, 4096, device=device)"),
         _code("torch.cuda.memory_allocated(), torch.cuda.memory_reserved()"),
         act.Delete("big"),
         _code("torch.cuda.memory_allocated(), torch.cuda.memory_reserved()"),
         act.EmptyCache(), _code("big_net = nn.Linear(4096, 4096).to(device)"),
         _code("torch.cuda.max_memory_allocated()")),
        source="gpumon", show_memory=True, replay=False,
        window_note=N_("Each action is a marker on the graphs of the Monitor and Playground "
                       "tabs, and their memory lines move with it."),
        on_gpu=(N_("# a 64 MiB tensor of ones on cuda:0"),
                N_("# allocated and reserved, in bytes: each 64 MiB more than before"),
                N_("# del: allocated drops by 64 MiB"),
                N_("# allocated 64 MiB less; reserved unchanged"),
                N_("# reserved drops: the cached block goes back to the driver"),
                "Linear(in_features=4096, out_features=4096, bias=True)",
                N_("# the peak: at least 67108864"))),
    LessonStep(
        "asynchronous", N_("GPU work is asynchronous"),
        N_("A CUDA operation only queues its work and returns at once, while the GPU computes "
           "in the background, so a clock stopped right after a @ a measures the queueing, and "
           "only after torch.cuda.synchronize() has waited for the GPU is the time real; on the "
           "CPU both times are the same, since CPU work is done before the call returns. "
           "Anything that needs a value on the host waits too, so logging the loss with .item() "
           "at every step stalls the GPU each time, while keeping the losses on the GPU and "
           "copying once at the end does not (the book's exercise). Both loops run once before "
           "any clock starts, since first calls pay one-time costs, and then in turn, three "
           "times each; the fastest of each counts. On a GPU, .item() at every step is the "
           "slower; on the CPU, where .item() has nothing to wait for, the two take about the "
           "same time and their difference is noise. gpumon itself synchronizes after every "
           "action, so the times it shows include the GPU's work."),
        (_code("a = torch.rand(2000, 2000, device=device)"),
         _code(f"b = a @ a  # {WARM_UP_CUBLAS}"),
         _code(ASYNC_TIMING), _code(LOG_EVERY_STEP)),
        source="English edition", replay=False,
        on_gpu=(N_("# a random (2000, 2000) tensor on cuda:0"), N_("# b on cuda:0"),
                N_("# two times in ms: the first is microseconds, the second much later"),
                N_("# two times in ms: .item() every step is the larger"))),
    LessonStep(
        "timing", N_("Time the products properly, on every device"),
        N_("Timing GPU code needs a warm-up (the first call loads libraries), a synchronization "
           "before the clock is read, and many runs; torch.utils.benchmark.Timer does all three, "
           "on the CPU and on the GPU alike. It times a 10 x 10 and a 1000 x 1000 product here "
           "for at least a second each, long enough to see a GPU's utilization rise. "
           "Timer runs the statement on one CPU thread unless told otherwise (num_threads=1), "
           "which makes the CPU look slower by about its number of cores; the code gives it "
           "torch.get_num_threads(), the threads torch itself uses. A big product is much "
           "faster on a GPU; a small one is not, because launching work on a GPU has a fixed "
           "cost."),
        (_code(BENCHMARK),),
        source="English edition", replay=False,
        on_gpu=(N_("# four medians in µs, keyed (10, 'cpu'), (1000, 'cpu'), (10, 'cuda:0'), "
                   "(1000, 'cuda:0'): the big product far faster on cuda:0"),)),
    LessonStep(
        "save-load", N_("Save on one device, load on another"),
        N_("torch.save records each tensor's device with its data, and torch.load puts it back "
           "there unless map_location says otherwise. So a checkpoint saved from a GPU fails to "
           "load without CUDA ('Attempting to deserialize object on a CUDA device'), and also "
           "on a machine with fewer GPUs than the saver's (a tensor from cuda:1 has nowhere to "
           "go on one GPU); map_location=device loads it anywhere, the habit to teach. Since "
           "torch 2.6, torch.load defaults to weights_only=True: tensors and plain containers "
           "such as a state_dict load, other pickled objects are refused. SAVED_ON_CUDA, which "
           "comes with gpumon, is an nn.Linear(3, 1) state_dict with its storages tagged "
           "cuda:0, written with that tag on a machine without a GPU."),
        (_code("net = nn.Linear(3, 1).to(device)"), _code("torch.save(net.state_dict(), path)"),
         _code("torch.load(path, map_location=device)"), _code("torch.load(SAVED_ON_CUDA)"),
         _code("torch.load(SAVED_ON_CUDA, map_location='cpu')")),
        preamble=SAVE_PREAMBLE, source="English edition", stop_at_error=False, needed=(0, 1),
        on_gpu=("Linear(in_features=3, out_features=1, bias=True)", "None",
                N_("# net's weight and bias, on cuda:0"),
                N_("# the saved weight and bias, on cuda:0"),
                N_("# the saved weight and bias, on the CPU"))),
    LessonStep(
        "two-gpus-at-once", N_("Exercise: two GPUs at once"),
        N_("The English edition's last exercise: a big matrix product on each of two GPUs, "
           "first one GPU after the other, then both at once. CUDA work is asynchronous, so "
           "Python queues the product on cuda:1 while cuda:0 is still computing, and both GPUs "
           "work together: the second time is about half the first. This needs two GPUs; with "
           "one there is nothing to run at the same time."),
        (_code(TWO_GPUS),),
        source="English edition", replay=False, min_gpus=2,
        on_gpu=(N_("# two times in ms: both at once takes about half as long"),)),
)

__all__ = ["LESSON", "LessonStep", "StepKind"]
