"""The longer pieces of code the lesson's steps run, and the words inside them.

The code runs as written, in English; where it is shown, :func:`localize` puts its comments
and docstrings (:data:`CODE_WORDS`, catalogue messages) into the language in use, as the
book's Chinese edition does with its own code. Results are numbers, tuples and dicts, never
English sentences, so what the code returns reads the same in every language. No torch import.
"""

from __future__ import annotations

from gpumon.i18n import N_, tr

# The comments and docstrings of the lesson's code, exactly as they appear in it.
WARM_UP_CUBLAS = N_("warm-up: the first product on a GPU also loads cuBLAS")
ASYNC_SIZE = N_("a size whose products keep a GPU busy; small on the CPU, to stay quick")
ASYNC_RESULT = N_("milliseconds: when the 20 products returned, when their work was done; "
                  "then the first as a share of the second")
WARM_UP_BOTH = N_("warm-up: the first calls pay one-time costs, so neither clock sees them")
ALTERNATE = N_("alternate, three times each, so that neither always runs first")
LOG_SIZE = N_("on a GPU, big enough for a step's work to outlast its launch")
LOG_RESULT = N_("milliseconds, the fastest of three: .item() every step, one copy at the end; "
                "then how much slower the first is")
ALL_THREADS = N_("all of torch's CPU threads (Timer alone uses one)")
BENCHMARK_RESULT = N_("median microseconds of a @ a, by (n, device)")
PRECISION_SIZE = N_("the size measured on an H200; small on the CPU, to stay quick")
TF32 = N_("TF32: float32 products on the tensor cores")
DEFAULT_AGAIN = N_("back to the default for the rest of the session")
PRECISION_RESULT = N_("TFLOP/s of a @ a (2n³ operations a product), by dtype")
NO_BF16 = N_("a Pascal GPU (GTX 10 series) has no bfloat16 products")
MOVE_EACH_BATCH = N_("each minibatch arrives on the CPU: move X and y every time")
ONE_GPU_TWICE = N_("one GPU: both products on cuda:0")
TWO_GPUS_RESULT = N_("milliseconds: one GPU after the other, both at once; then the second "
                     "as a share of the first")
PRIVATE_FOLDER = N_("a private folder made for this run")
TWICE_THE_GPU = N_("bytes: twice the GPU's memory")
BUSY_READER = N_("NVML, read as gpumon reads it")
FIRST_SAMPLE = N_("GPM's first sample, of torch's device (matched by UUID)")
SECOND_SAMPLE = N_("the activity over the loop; GPU-Util and the power now")
#: d2l's own docstrings of try_gpu and try_all_gpus (in playground/data/actions.py).
TRY_GPU_DOC = N_("Return gpu(i) if exists, otherwise return cpu().")
TRY_ALL_GPUS_DOC = N_("Return all available GPUs, or [cpu(),] if no GPU exists.")

CODE_WORDS: tuple[str, ...] = (
    WARM_UP_CUBLAS, ASYNC_SIZE, ASYNC_RESULT, WARM_UP_BOTH, ALTERNATE, LOG_SIZE, LOG_RESULT,
    ALL_THREADS, BENCHMARK_RESULT, PRECISION_SIZE, TF32, DEFAULT_AGAIN, PRECISION_RESULT, NO_BF16,
    MOVE_EACH_BATCH, ONE_GPU_TWICE, TWO_GPUS_RESULT, PRIVATE_FOLDER, TWICE_THE_GPU,
    BUSY_READER, FIRST_SAMPLE, SECOND_SAMPLE, TRY_GPU_DOC, TRY_ALL_GPUS_DOC)


def localize(code: str) -> str:
    """``code`` with its comments and docstrings in the language in use (the code itself,
    names and strings, unchanged)."""
    for words in CODE_WORDS:
        if words in code:
            code = code.replace(words, tr(words))
    return code


#: Step 15's size: measured on an H200 with n = 4096 (steps.py, ``measured``).
ASYNC_N = f"n = 4096 if device.type == 'cuda' else 256  # {ASYNC_SIZE}"

ASYNC_TIMING = f"""import time
start = time.perf_counter()
for _ in range(20):
    b = a @ a
returned = time.perf_counter() - start
if device.type == 'cuda':
    torch.cuda.synchronize()
finished = time.perf_counter() - start
# {ASYNC_RESULT}
round(returned * 1e3, 2), round(finished * 1e3, 2), f'{{returned / finished:.0%}}'"""

#: The book's exercise: .item() at every step against one copy at the end. A Linear(100, 1)
#: was launch-bound on an H200 (0.75 ms a step of CPU work: 7 %); Linear(2048, 2048) on a
#: 2048 batch is not (14-19 %).
LOG_EVERY_STEP = f"""import time
width = 2048 if device.type == 'cuda' else 64  # {LOG_SIZE}
model = nn.Linear(width, width).to(device)
sgd = torch.optim.SGD(model.parameters(), lr=0.01)
data = torch.rand(width, width, device=device)
def train_step():
    loss = model(data).square().mean()
    sgd.zero_grad()
    loss.backward()
    sgd.step()
    return loss
def item_every_step():
    return [train_step().item() for _ in range(100)]
def copy_at_the_end():
    return torch.stack([train_step().detach() for _ in range(100)]).tolist()
def seconds(run):
    start = time.perf_counter()
    run()
    return time.perf_counter() - start
item_every_step(), copy_at_the_end()  # {WARM_UP_BOTH}
every_step, at_the_end = [], []
for _ in range(3):  # {ALTERNATE}
    every_step.append(seconds(item_every_step))
    at_the_end.append(seconds(copy_at_the_end))
# {LOG_RESULT}
every, end = min(every_step), min(at_the_end)
round(every * 1e3, 1), round(end * 1e3, 1), f'{{every / end - 1:+.0%}}'"""

BENCHMARK = f"""from torch.utils import benchmark
times = {{}}
for dev in dict.fromkeys([torch.device('cpu'), device]):
    for n in (10, 1000):
        a = torch.rand(n, n, device=dev)
        timer = benchmark.Timer('a @ a', globals={{'a': a}},
                                num_threads=torch.get_num_threads())  # {ALL_THREADS}
        m = timer.blocked_autorange(min_run_time=1)
        times[(n, str(dev))] = round(m.median * 1e6, 1)
# {BENCHMARK_RESULT}
times"""

#: Step 16's precision part: the same product in float32, with TF32 allowed, and in bf16.
PRECISION = f"""from torch.utils import benchmark
n = 8192 if device.type == 'cuda' else 512  # {PRECISION_SIZE}
a = torch.rand(n, n, device=device)
def tflops(x):
    timer = benchmark.Timer('x @ x', globals={{'x': x}}, num_threads=torch.get_num_threads())
    return float(f'{{2 * n ** 3 / timer.blocked_autorange(min_run_time=0.5).median / 1e12:.3g}}')
speeds = {{'float32': tflops(a)}}
torch.set_float32_matmul_precision('high')  # {TF32}
try:
    speeds['tf32'] = tflops(a)
finally:
    torch.set_float32_matmul_precision('highest')  # {DEFAULT_AGAIN}
try:
    speeds['bfloat16'] = tflops(a.bfloat16())
except RuntimeError as error:  # {NO_BF16}
    speeds['bfloat16'] = str(error).splitlines()[0]
# {PRECISION_RESULT}
speeds"""

MINIBATCHES = f"""loader = torch.utils.data.DataLoader(
    torch.utils.data.TensorDataset(torch.rand(8, 3), torch.rand(8, 1)), batch_size=4)
for X, y in loader:
    X, y = X.to(device), y.to(device)  # {MOVE_EACH_BATCH}
    loss = nn.functional.mse_loss(net(X), y)
loss.device"""

def two_gpus(first: str = "cuda:0", second: str = "cuda:1") -> str:
    """The English edition's exercise 4: a product on each of two GPUs, one after the other
    and at once. The GPUs work asynchronously, so launching on ``second`` need not wait for
    ``first``. With one GPU both are cuda:0, whose queue runs in order: at once brings nothing.
    """
    devices = f"first, second = '{first}', '{second}'"
    if first == second:
        devices += f"  # {ONE_GPU_TWICE}"
    return f"""import time
{devices}
a0 = torch.rand(4000, 4000, device=first)
a1 = torch.rand(4000, 4000, device=second)
def wait():
    torch.cuda.synchronize(first); torch.cuda.synchronize(second)
def seconds(run):
    wait()
    start = time.perf_counter()
    run()
    wait()
    return time.perf_counter() - start
def one_after_the_other():
    for _ in range(10):
        a0 @ a0
    torch.cuda.synchronize(first)
    for _ in range(10):
        a1 @ a1
def both_at_once():
    for _ in range(10):
        a0 @ a0
        a1 @ a1
one_after_the_other(), both_at_once()  # {WARM_UP_BOTH}
# {TWO_GPUS_RESULT}
after, once = seconds(one_after_the_other), seconds(both_at_once)
round(after * 1e3, 1), round(once * 1e3, 1), f'{{once / after:.0%}}'"""


TWO_GPUS = two_gpus()
ONE_GPU = two_gpus("cuda:0", "cuda:0")

#: Step 17's reading: a few seconds of products, read by NVML before and after (nvml/busy.py),
#: and its operands: the H200's bf16 product size on a GPU, small on the CPU.
BUSY = f"""import time
from gpumon.telemetry.nvml.busy import BusyWatch  # {BUSY_READER}
def busy(product, seconds=3):
    watch = BusyWatch(torch.cuda.get_device_properties(device).uuid)  # {FIRST_SAMPLE}
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        product()
        torch.cuda.synchronize(device)
    return watch.stop()  # {SECOND_SAMPLE}"""
BUSY_OPERANDS = f"""n = 8192 if device.type == 'cuda' else 256  # {PRECISION_SIZE}
big = torch.rand(n, n, device=device, dtype=torch.bfloat16)
small = torch.rand(10, 10, device=device)
big.shape, small.shape"""

#: Step 14's last line, run only on a GPU: torch's own out-of-memory error and its advice.
OUT_OF_MEMORY = ("twice = 2 * torch.cuda.get_device_properties(device).total_memory"
                 f"  # {TWICE_THE_GPU}\n"
                 "torch.empty(twice, dtype=torch.uint8, device=device)")

__all__ = ["ASYNC_N", "ASYNC_TIMING", "BENCHMARK", "BUSY", "BUSY_OPERANDS", "CODE_WORDS",
           "LOG_EVERY_STEP", "MINIBATCHES", "ONE_GPU", "OUT_OF_MEMORY", "PRECISION", "TWO_GPUS",
           "localize", "two_gpus"]
