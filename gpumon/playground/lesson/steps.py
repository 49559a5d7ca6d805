"""The lesson's steps as plain data: narration, the code that runs, what a GPU shows.

Steps follow *Dive into Deep Learning* section 4.6 ("book") and the English edition's
"GPUs" section with its exercises; "gpumon" marks what neither edition has. Most steps use
``device``, chosen once in step 4 (d2l's ``try_gpu``), so they run on any machine. Titles,
narration and the descriptions in ``on_gpu`` are catalogue messages (``N_``), translated
where they are shown; code and torch's own text are never translated.
``on_gpu`` is what each action shows on a CUDA GPU (on two GPUs for a two-GPU step): a
machine without it prints it, labelled, instead of running the code again; an entry that
starts with ``# `` is a comment describing a value that varies (random numbers, timings), the
others are torch's exact text. Figures measured on a real GPU are in lesson/measured.py,
never in the narration, which must hold on every machine. Transcripts show only what a
Python prompt prints (lesson/transcript.py). No torch import.

Adding a step: a ``LessonStep`` in ``LESSON`` (its place is its number), its narration of one
to five sentences true on every machine (what a class reads: lesson/reading.py counts it; what
a class can skip goes in ``more``), ``on_gpu`` with one entry per action, figures a real
GPU measured in lesson/measured.py (``measured``), and its messages in the catalogue
(tools/catalogue.py, then the zh_CN translations). Tests find steps by id, the transcripts'
checker (tests/gpu/gpucheck/lesson_claims.py) by title, so no number needs changing there.
"""

from __future__ import annotations

from gpumon.i18n import N_
from gpumon.playground.data import actions as act
from gpumon.playground.data.actions import RunCode
from gpumon.playground.lesson import measured
from gpumon.playground.lesson.step import SOURCE_LABELS, LessonStep, StepKind, is_comment
from gpumon.playground.lesson.step_code import (
    ASYNC_N,
    ASYNC_TIMING,
    BENCHMARK,
    BUSY,
    BUSY_OPERANDS,
    LOG_EVERY_STEP,
    MINIBATCHES,
    ONE_GPU,
    OUT_OF_MEMORY,
    PRECISION,
    PRIVATE_FOLDER,
    TWO_GPUS,
    WARM_UP_CUBLAS,
)


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
           "with. Then each GPU: name, bus id, temperature, power, memory used out of total, "
           "and utilization, the share of the last sample period in which at least one kernel "
           "was running (not the share of the GPU's cores in use)."),
        kind="smi",
        more=N_("The CUDA PyTorch was built with is torch.version.cuda, asked for after the "
                "glossary. The table at the bottom lists the processes holding GPU memory; a "
                "PyTorch program appears there once it has touched a GPU. gpumon runs the real "
                "nvidia-smi where the machine has it; elsewhere it shows its own view of the "
                "same NVML readings, laid out like nvidia-smi and labelled so.")),
    LessonStep(
        "glossary", N_("Glossary: the words this lesson uses"),
        N_("Before the code starts, here are the words the lesson uses, each with what it means "
           "here."),
        kind="glossary", source="gpumon", replay=False,
        more=N_("PyTorch's messages and documentation use the same words, so they are the ones "
                "to search for when something goes wrong.")),
    LessonStep(
        "cuda-queries", N_("Ask PyTorch which GPUs it can use"),
        N_("torch.version.cuda is the CUDA this PyTorch was built with, and None on a "
           "CPU-only build. is_available() says whether PyTorch can use an NVIDIA GPU now, and "
           "device_count() how many it sees, numbered cuda:0, cuda:1 and so on. The last line "
           "prints each GPU's UUID, which matches cuda:i with nvidia-smi's GPUs whatever their "
           "order."),
        (act.Versions(), act.IsAvailable(), act.DeviceCount(),
         _code("import os\n{name: os.environ.get(name) for name in "
               "('CUDA_VISIBLE_DEVICES', 'CUDA_DEVICE_ORDER')}"),
         act.CurrentDevice(), act.DeviceName(0),
         _code("['GPU-' + str(torch.cuda.get_device_properties(i).uuid) "
               "for i in range(torch.cuda.device_count())]")),
        stop_at_error=False, show_uuids=True, uses_device=False,
        more=N_("torch.version.cuda is None on a ROCm build too, which drives AMD GPUs through "
                "the same torch.cuda functions (torch.version.hip is set there); on a Mac with "
                "Apple silicon the GPU is mps, not cuda, so try_gpu returns the CPU there. A "
                "CUDA build of PyTorch still says is_available() False when the driver is "
                "missing or too old, or when no GPU is visible to this process. "
                "CUDA_VISIBLE_DEVICES lists the GPUs a process may use, numbered from 0 in the "
                "order given (=2,0 makes GPU 2 cuda:0), takes GPU-<uuid> too, and is read only "
                "when CUDA initializes: set after the first CUDA call in a notebook, it does "
                "nothing. CUDA also puts the fastest GPU first unless "
                "CUDA_DEVICE_ORDER=PCI_BUS_ID, so match cuda:i with nvidia-smi's GPUs by UUID, "
                "which torch prints without the GPU- prefix (the last line adds it)."),
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
           "same code runs with or without a GPU."),
        (act.TryGpu(0), act.TryGpu(10), act.TryAllGpus(),
         _code("torch.device('cuda' if torch.cuda.is_available() else 'cpu')"),
         _code("device = try_gpu()")),
        preamble=act.TRY_GPU_SOURCE, source="English edition",
        more=N_("The book's Chinese edition writes the same choice in one line, "
                "torch.device('cuda' if torch.cuda.is_available() else 'cpu'), which also gives "
                "the first GPU or the CPU. As d2l says, cpu means all the CPU's cores and the "
                "main memory together, while cuda:i is one card and its own memory.")),
    LessonStep(
        "tensor-on-cpu", N_("A tensor starts on the CPU"),
        N_("A new tensor lives in main memory unless you say otherwise. Every tensor knows its "
           "device: x.device says cpu."),
        (act.CreateTensor("x", "[1, 2, 3]"), act.TensorDevice("x"))),
    LessonStep(
        "to-gpu", N_("Copy a tensor to the GPU"),
        N_("x.cuda(0) copies x to the first GPU and returns the copy; x itself stays where it "
           "was, so the copy must be assigned: x = x.cuda(0). x.cuda() means the current GPU, "
           "usually cuda:0, and x.to(device) does the same with the device try_gpu chose."),
        (_code("x.cuda(0)"), act.TensorDevice("x"), act.Move("x", "cuda", index=0),
         act.TensorDevice("x")),
        needs_cuda=True,
        more=N_("The copy crosses the PCIe bus, which is much slower than memory inside the "
                "GPU."),
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
           "on the GPU, the GPU computes x ** 2 and y lives in GPU memory."),
        (act.Compute("y", "pow", "x"),),
        more=N_("y stays there: when Python needs its numbers (step 13 lists when), torch "
                "copies them to main memory, and y itself stays on the GPU."),
        on_gpu=("tensor([1, 4, 9], device='cuda:0')",),
        meta_variant=(act.CreateTensor("xm", "[1, 2, 3]", device="meta"),
                      act.Compute("ym", "pow", "xm"))),
    LessonStep(
        "mixed-devices", N_("Operands on different devices are an error"),
        N_("y is on the GPU and x.cpu() is a copy in main memory: for most operations PyTorch "
           "refuses to combine tensors on different devices rather than copy one behind your "
           "back, and the error names both devices. The usual fix is to move the odd one to "
           "where the work is, c.to(y.device), as you move an input to the model's device."),
        (act.Compute("z", "add", "y", act.Ref("x", "cpu")), _code("y + torch.tensor(10)"),
         _code("y[torch.tensor([0, 2])]"), _code("c = torch.tensor([1, 2, 3])"),
         _code("z = y + c.to(y.device)")),
        needs_cuda=True, stop_at_error=False,
        more=N_("There are exceptions, which the second and third lines show: a 0-dim CPU "
                "tensor such as torch.tensor(10) is accepted like a plain number, and a CPU "
                "tensor may index a GPU tensor."),
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
           "CPU raises the same-device error, naming the input that is elsewhere (mat1). The usual "
           "fix is to move the input to the model's device, as net(torch.rand(2, 3).to(device)) "
           "does, not the model to the CPU."),
        (_code("x = torch.rand(2, 3, device=device)"), act.CallModel("out", "net", "x"),
         _code("net(torch.rand(2, 3))"), _code("net(torch.rand(2, 3).to(device))"),
         _code(MINIBATCHES)),
        needs_cuda=True, stop_at_error=False,
        more=N_("In training this is the first device bug most people meet: a DataLoader hands "
                "out each minibatch, X and y, on the CPU, so both must be moved inside the "
                "loop, at every iteration: X, y = X.to(device), y.to(device)."),
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
           "to finish the work queued before it: what makes many small copies slow is mostly "
           "this waiting, the synchronization, not the bytes moved."),
        (_code("h = torch.tensor([1.0, 2.0, 3.0], device=device)"), _code("h.sum().item()"),
         _code("h.tolist()"), _code("h[h > 1]"), act.ToNumpy(act.Ref("h", "cpu")),
         act.ToNumpy("h"), _code("h.numpy(force=True)"),
         _code("w = torch.ones(3, requires_grad=True)"), _code("w.numpy()"),
         _code("w.detach().numpy()")),
        source="English edition", stop_at_error=False,
        more=N_("x.numpy() makes no copy: the array shares the CPU tensor's memory, which a GPU "
                "tensor cannot do, so torch refuses and asks for .cpu() first; "
                "numpy(force=True) makes that copy for you. .numpy() also refuses a tensor that "
                "requires grad: .detach() it first."),
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
        N_("Three numbers tell where GPU memory goes: memory_allocated, what tensors occupy; "
           "memory_reserved, what torch's caching allocator holds, allocated included; and "
           "nvidia-smi's figure for the process (NVML's), which adds the CUDA context, a few "
           "hundred MiB kept until the process exits. del frees a tensor with its last "
           "reference: allocated drops, reserved does not, as the allocator keeps the block for "
           "reuse. empty_cache() gives unused cached blocks back to the driver, for other "
           "processes. Under each line, gpumon prints what it changed and its peak."),
        (_code("big = torch.ones(4096, 4096, device=device)"),
         _code("torch.cuda.memory_allocated(), torch.cuda.memory_reserved()"),
         act.Delete("big"),
         _code("torch.cuda.memory_allocated(), torch.cuda.memory_reserved()"),
         act.EmptyCache(), _code("big_net = nn.Linear(4096, 4096).to(device)"),
         _code("torch.cuda.max_memory_allocated()"), _code(OUT_OF_MEMORY)),
        source="gpumon", show_memory=True, replay=False, gpu_only=(7,),
        more=N_("nvidia-smi showing more than torch is no leak. In Jupyter, Out[n] and _ keep a "
                "displayed tensor alive after del. On a GPU, the 32 MiB still allocated after "
                "del is cuBLAS's workspace, which an earlier matrix product (step 11's net(x)) "
                "allocated and keeps. empty_cache() gives PyTorch itself no more memory: the "
                "allocator empties its cache and retries before an out-of-memory error, whose "
                "message says what the process holds and suggests expandable_segments. gpumon "
                "resets torch's peak before each line, so max_memory_allocated() gives the "
                "peak of the line it is in. On the CPU, torch.cuda's counters stay (0, 0), as "
                "there is no CUDA allocator: the change and the peak are those of the process's "
                "resident memory (RSS)."),
        window_note=N_("Each action is a marker on the graphs of the Monitor and Playground "
                       "tabs, and their memory lines move with it."),
        measured=measured.MEMORY, measured_more=measured.MEMORY_MORE,
        on_gpu=(N_("# a 64 MiB tensor of ones on cuda:0"),
                N_("# allocated and reserved, in bytes; recorded on an H200: 96.01 MiB and "
                   "98.00 MiB, cuBLAS's 32 MiB workspace included"),
                N_("# del: allocated drops by 64 MiB"),
                N_("# recorded on an H200: 32.01 MiB allocated, 98.00 MiB still reserved"),
                N_("# recorded on an H200: reserved drops to 34 MiB, the cached block goes "
                   "back to the driver"),
                "Linear(in_features=4096, out_features=4096, bias=True)",
                N_("# the peak: at least 67108864"),
                N_("# torch.OutOfMemoryError: CUDA out of memory. Tried to allocate …: it says "
                   "what the GPU has free, what this process has in use (its CUDA context "
                   "included) and how much of it PyTorch allocated, and suggests "
                   "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"))),
    LessonStep(
        "asynchronous", N_("GPU work is asynchronous"),
        N_("A CUDA operation only queues its work and returns, while the GPU computes in the "
           "background. A clock stopped right after twenty products measures the queueing; one "
           "stopped after torch.cuda.synchronize() has waited for the GPU measures the work. "
           "On the CPU the two are the same. gpumon itself synchronizes after every action, so "
           "the times it shows include the GPU's work."),
        (_code(ASYNC_N), _code("a = torch.rand(n, n, device=device)"),
         _code(f"b = a @ a  # {WARM_UP_CUBLAS}"), _code(ASYNC_TIMING)),
        source="English edition", replay=False, measured=measured.ASYNCHRONOUS,
        on_gpu=("4096", N_("# a random (4096, 4096) tensor on cuda:0"), N_("# b on cuda:0"),
                N_("# two times in ms and a share: the products returned long before their "
                   "work was done"))),
    LessonStep(
        "item-every-step", N_("Exercise: .item() at every step"),
        N_("Anything that needs a value on the host waits for the GPU: with .item() at every "
           "step, Python waits for each step's work, and the GPU's queue runs empty while "
           "Python prepares the next step. Copying the losses once at the end lets Python "
           "queue step after step. Each loop runs once untimed, then three times in turn; the "
           "last figure is how much slower .item() every step was."),
        (_code(LOG_EVERY_STEP),),
        source="English edition", replay=False, measured=measured.ITEM_EVERY_STEP,
        more=N_("This is the English edition's exercise. On a GPU, the sizes here make a "
                "step's work outlast its launch, so .item() every step is the slower; on the "
                "CPU, with small sizes and nothing for .item() to wait for, the difference is "
                "noise. The fastest of the three runs counts, as first calls pay one-time "
                "costs."),
        on_gpu=(N_("# two times in ms and how much slower .item() every step was"),)),
    LessonStep(
        "timing", N_("Time the products properly, on every device"),
        N_("Timing GPU code needs a warm-up, a synchronization before the clock is read, and "
           "many runs: torch.utils.benchmark.Timer does all three. A big product "
           "is much faster on a GPU, a small one is not: each launch has a fixed cost. By "
           "default PyTorch multiplies float32 on a GPU's float32 units "
           "(torch.backends.cuda.matmul.allow_tf32 is False); 'high' precision allows TF32 on "
           "the tensor cores, where bfloat16 runs too. Both lose precision: float32 "
           "keeps 23 mantissa bits, TF32 10, bfloat16 7."),
        (_code("torch.get_num_threads()"), _code(BENCHMARK), _code(PRECISION)),
        source="English edition", replay=False, measured=measured.TIMING,
        measured_more=measured.COMPUTE_BOUND,
        more=N_("Timer uses one CPU thread unless told otherwise (num_threads=1), which makes "
                "the CPU look slower by about its number of cores, so the code gives it "
                "torch.get_num_threads(), printed first. Each product runs for at least a "
                "second, long enough to see a GPU's utilization rise. The last line gives "
                "TFLOP/s, 2n³ operations over the time, to compare with the GPU's datasheet. "
                "A CPU has no TF32: there 'tf32' runs the same float32 product, and its "
                "difference from float32 is noise; bfloat16's gain depends on the processor. "
                "Pascal GPUs (GTX 10 series) have no bfloat16 products (pytorch/pytorch#57773): "
                "there the code prints torch's error in place of the bfloat16 figure and the "
                "lesson goes on."),
        on_gpu=(N_("# the number of CPU threads torch uses"),
                N_("# four medians in µs, keyed (10, 'cpu'), (1000, 'cpu'), (10, 'cuda:0'), "
                   "(1000, 'cuda:0')"),
                N_("# TFLOP/s, keyed 'float32', 'tf32' and 'bfloat16'"))),
    LessonStep(
        "gpu-util-is-not-busy", N_("GPU-Util is not how busy the GPU is"),
        N_("GPM, the counters read here, needs a Hopper (H100) or newer GPU: elsewhere the "
           "code prints None and 'unsupported', so compare with the H200's figures below. "
           "nvidia-smi's GPU-Util is the share of time in which at least one CUDA kernel ran, "
           "however small. SM activity is the share of SMs holding at least one warp, even a "
           "stalled one, so full SM activity does not mean peak speed; occupancy is how many "
           "warps each SM holds of the most it can. Tiny products still show GPU-Util far "
           "above SM activity (36 % against 0.24 %, on the H200)."),
        (_code(BUSY), _code(BUSY_OPERANDS), _code("busy(lambda: big @ big)"),
         _code("busy(lambda: small @ small)")),
        source="gpumon", replay=False, gpu_only=(2, 3), measured=measured.BUSY,
        measured_more=measured.BUSY_MORE,
        stop_at_error=False,
        more=N_("An RTX 30 or 40 series GPU or an A100 has no GPM. The code reads the figures "
                "around three seconds of large bf16 products, then of tiny ones. Graphics "
                "activity is GPM's counterpart of GPU-Util: the share of "
                "time a graphics or compute engine was busy. A large product keeps nearly every "
                "SM and its tensor cores busy with few warps each, as its CUDA kernels use many "
                "registers per thread and much shared memory per block, so its low occupancy "
                "is normal; in a memory-bound CUDA kernel, low occupancy may be what holds it "
                "back. The previous step's 790 of 989 TFLOP/s shows the gap between 96 % SM "
                "activity and peak speed. 'SW power cap' under a large product means that the GPU "
                "draws its power limit: full load, not a fault. Pascal GPUs (GTX 10 series) have "
                "no bfloat16 products (pytorch/pytorch#57773): there the large product fails "
                "with torch's error and the step goes on to the tiny ones."),
        window_note=N_("With View ▸ Activity on, the Monitor tab draws the same figures for "
                       "every GPU that has GPM, and says in a sentence what they mean."),
        on_gpu=("None", N_("# the operands' shapes: torch.Size([8192, 8192]) and "
                           "torch.Size([10, 10])"),
                N_("# in %: GPU-Util about 100 and, where GPM answers, SM activity and tensor "
                   "high, occupancy low; then the power and its cap in W, the clock event "
                   "reasons, and whether GPM answered ('reading') or why not"),
                N_("# the same keys: GPU-Util well above SM activity, tensor and DRAM near 0"))),
    LessonStep(
        "save-load", N_("Save on one device, load on another"),
        N_("torch.save records each tensor's device with its data, and torch.load puts it back "
           "there unless map_location says otherwise. So a checkpoint saved from a GPU fails to "
           "load without CUDA ('Attempting to deserialize object on a CUDA device'); "
           "map_location=device loads it anywhere, the habit to teach. SAVED_ON_CUDA, which "
           "comes with gpumon, is an nn.Linear(3, 1) state_dict with its storages tagged "
           "cuda:0, written with that tag on a machine without a GPU."),
        (_code("net = nn.Linear(3, 1).to(device)"), _code("torch.save(net.state_dict(), path)"),
         _code("torch.load(path, map_location=device)"), _code("torch.load(SAVED_ON_CUDA)"),
         _code("torch.load(SAVED_ON_CUDA, map_location='cpu')")),
        preamble=SAVE_PREAMBLE, source="English edition", stop_at_error=False, needed=(0, 1),
        more=N_("It also fails on a machine with fewer GPUs than the saver's: a tensor from "
                "cuda:1 has nowhere to go on one GPU. Since torch 2.6, torch.load defaults to "
                "weights_only=True: tensors and plain containers such as a state_dict load, "
                "other pickled objects are refused."),
        on_gpu=("Linear(in_features=3, out_features=1, bias=True)", "None",
                N_("# net's weight and bias, on cuda:0"),
                N_("# the saved weight and bias, on cuda:0"),
                N_("# the saved weight and bias, on the CPU"))),
    LessonStep(
        "two-gpus-at-once", N_("Exercise: two GPUs at once"),
        N_("The English edition's last exercise: a big matrix product on each of two GPUs, "
           "first one GPU after the other, then both at once. CUDA work is asynchronous, so "
           "Python queues the product on cuda:1 while cuda:0 is still computing, and two GPUs "
           "work together: the second time should be about half the first."),
        (_code(TWO_GPUS),),
        source="English edition", replay=False, min_gpus=2, one_gpu_variant=(_code(ONE_GPU),),
        more=N_("One GPU runs the work queued on it in order, so with one GPU both products go "
                "to cuda:0 and 'at once' brings nothing: the two times are about the same. "
                "Without a GPU there is nothing to run at once."),
        on_gpu=(N_("# two times in ms and a share: both at once takes about half as long"),)),
)

__all__ = ["LESSON", "SOURCE_LABELS", "LessonStep", "StepKind", "is_comment"]
