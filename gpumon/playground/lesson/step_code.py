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
ASYNC_RESULT = N_("milliseconds: when a @ a returned, and when the work was done")
WARM_UP_BOTH = N_("warm-up: the first calls pay one-time costs, so neither clock sees them")
ALTERNATE = N_("alternate, three times each, so that neither always runs first")
LOG_RESULT = N_("milliseconds, the fastest of three: .item() every step, one copy at the end")
ALL_THREADS = N_("all of torch's CPU threads (Timer alone uses one)")
BENCHMARK_RESULT = N_("median microseconds of a @ a, by (n, device)")
MOVE_EACH_BATCH = N_("each minibatch arrives on the CPU: move X and y every time")
TWO_GPUS_RESULT = N_("milliseconds: one GPU after the other, both GPUs at once")
PRIVATE_FOLDER = N_("a private folder made for this run")
#: d2l's own docstrings of try_gpu and try_all_gpus (in playground/data/actions.py).
TRY_GPU_DOC = N_("Return gpu(i) if exists, otherwise return cpu().")
TRY_ALL_GPUS_DOC = N_("Return all available GPUs, or [cpu(),] if no GPU exists.")

CODE_WORDS: tuple[str, ...] = (
    WARM_UP_CUBLAS, ASYNC_RESULT, WARM_UP_BOTH, ALTERNATE, LOG_RESULT, ALL_THREADS,
    BENCHMARK_RESULT, MOVE_EACH_BATCH, TWO_GPUS_RESULT, PRIVATE_FOLDER, TRY_GPU_DOC,
    TRY_ALL_GPUS_DOC)


def localize(code: str) -> str:
    """``code`` with its comments and docstrings in the language in use (the code itself,
    names and strings, unchanged)."""
    for words in CODE_WORDS:
        if words in code:
            code = code.replace(words, tr(words))
    return code


ASYNC_TIMING = f"""import time
start = time.perf_counter()
b = a @ a
returned = time.perf_counter() - start
if device.type == 'cuda':
    torch.cuda.synchronize()
finished = time.perf_counter() - start
# {ASYNC_RESULT}
round(returned * 1e3, 3), round(finished * 1e3, 3)"""

LOG_EVERY_STEP = f"""import time
model = nn.Linear(100, 1).to(device)
sgd = torch.optim.SGD(model.parameters(), lr=0.01)
data = torch.rand(256, 100, device=device)
def train_step():
    loss = model(data).square().mean()
    sgd.zero_grad()
    loss.backward()
    sgd.step()
    return loss
def item_every_step():
    return [train_step().item() for _ in range(300)]
def copy_at_the_end():
    return torch.stack([train_step().detach() for _ in range(300)]).tolist()
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
round(min(every_step) * 1e3, 1), round(min(at_the_end) * 1e3, 1)"""

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

MINIBATCHES = f"""loader = torch.utils.data.DataLoader(
    torch.utils.data.TensorDataset(torch.rand(8, 3), torch.rand(8, 1)), batch_size=4)
for X, y in loader:
    X, y = X.to(device), y.to(device)  # {MOVE_EACH_BATCH}
    loss = nn.functional.mse_loss(net(X), y)
loss.device"""

#: The English edition's exercise 4: a product on each of two GPUs, one after the other and
#: at once. The GPUs work asynchronously, so launching on cuda:1 need not wait for cuda:0.
TWO_GPUS = f"""import time
a0 = torch.rand(4000, 4000, device='cuda:0')
a1 = torch.rand(4000, 4000, device='cuda:1')
def seconds(run):
    torch.cuda.synchronize('cuda:0'); torch.cuda.synchronize('cuda:1')
    start = time.perf_counter()
    run()
    torch.cuda.synchronize('cuda:0'); torch.cuda.synchronize('cuda:1')
    return time.perf_counter() - start
def one_after_the_other():
    for _ in range(10):
        a0 @ a0
    torch.cuda.synchronize('cuda:0')
    for _ in range(10):
        a1 @ a1
def both_at_once():
    for _ in range(10):
        a0 @ a0
        a1 @ a1
one_after_the_other(), both_at_once()  # {WARM_UP_BOTH}
# {TWO_GPUS_RESULT}
round(seconds(one_after_the_other) * 1e3, 1), round(seconds(both_at_once) * 1e3, 1)"""

__all__ = ["ASYNC_TIMING", "BENCHMARK", "CODE_WORDS", "LOG_EVERY_STEP", "MINIBATCHES",
           "TWO_GPUS", "localize"]
