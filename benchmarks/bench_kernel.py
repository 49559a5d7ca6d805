"""The playground kernel's costs: first action after start, and the round trip per action.

1. First action: a kernel is started and pre-warmed (``load``: torch imported there, as the
   window does after its first frame); then the time from sending the first action
   (``x = torch.tensor([1, 2, 3])``) to its Outcome. Baseline, same run: a cold
   ``python -c "import torch; torch.ones(3)"``, start to exit. Also printed, for
   information: the first action on a kernel that was not pre-warmed (start included).
2. Round trip: the same small actions through the kernel (pickled over the pipes, run,
   answered) against the direct torch call in this process; medians over many repetitions.
   Overhead = kernel - direct. Target: <= 2 ms per action.
3. Lesson request size: the bytes one lesson step's request puts on the pipe with 8
   simulated GPUs in the snapshot, as it was (all 17 steps and the snapshot every time) and
   as it is (the steps once per kernel, then a key).
4. Restart: the kernel is killed (SIGKILL, as Stop not in time or a crash), then the time
   from the kill to the Outcome of the next action that uses torch, and the new kernel's own
   CPU time up to then; a kernel started the ordinary way (the baseline, same run) against
   one forked from the fork server (Linux).

5. Start under the watchdog: from starting a kernel to the answer of its first request
   (``ping``, before torch), a kernel started under its watchdog (``client/keeper.py``, the
   watchdog its parent and subreaper) against one started directly (the baseline, same
   run); and the watchdog's resident memory.

Sections 1 and 4's baseline start every kernel the ordinary way (GPUMON_KERNEL_FORKSERVER=0).

Run from the repository root: ``python benchmarks/bench_kernel.py [--quick]``.
"""

from __future__ import annotations

import argparse
import os
import queue
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import psutil  # noqa: E402
from machine import describe  # noqa: E402 (benchmarks/machine.py, beside this script)

from gpumon.playground.client import forkserver, keeper  # noqa: E402
from gpumon.playground.client.kernel_client import KernelClient, kernel_env  # noqa: E402
from gpumon.playground.data import actions as A  # noqa: E402
from gpumon.playground.data.wire import Message  # noqa: E402

TARGET_MS = 2.0
FIRST = A.CreateTensor("x", "[1, 2, 3]")


class Waiter:
    """Replies by request id, from the client's reader thread."""

    def __init__(self) -> None:
        self.replies: queue.Queue[Message] = queue.Queue()

    def __call__(self, message: Message) -> None:
        if message.kind in ("reply", "internal_error", "died"):
            self.replies.put(message)

    def wait(self, rid: int) -> Message:
        while True:
            m = self.replies.get(timeout=120)
            if m.kind == "died":
                raise RuntimeError(f"the kernel died: {m.data}")
            if m.id == rid:
                return m


def cold_torch() -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import torch; torch.ones(3)"], check=True)
    return time.perf_counter() - start


def first_action(prewarm: bool) -> float:
    waiter = Waiter()
    client = KernelClient(waiter)
    try:
        start = time.perf_counter()
        if prewarm:
            waiter.wait(client.request("load"))
            start = time.perf_counter()
        reply = waiter.wait(client.request("run", FIRST))
        took = time.perf_counter() - start
        assert reply.data.ok, reply.data.error
        return took
    finally:
        client.shutdown()


def restart(forked: bool) -> tuple[float, float]:
    """Seconds from a SIGKILL to the next torch action's Outcome, and the new kernel's CPU-s."""
    os.environ[forkserver.ENABLE_ENV] = "1" if forked else "0"
    if forked:
        assert forkserver.start_server(sys.executable, kernel_env()).ready.wait(60)
    waiter = Waiter()
    client = KernelClient(lambda m: None if m.kind == "died" else waiter(m))
    try:
        waiter.wait(client.request("run", FIRST))
        pid = client.pid
        assert pid is not None
        start = time.perf_counter()
        os.kill(pid, 9)
        while client.pid == pid:
            time.sleep(0.001)
        reply = waiter.wait(client.request("run", A.RunCode("torch.ones(3).sum()")))
        took = time.perf_counter() - start
        assert reply.data.ok, reply.data.error
        assert client.pid is not None
        times = psutil.Process(client.pid).cpu_times()
        return took, times.user + times.system
    finally:
        client.shutdown()
        forkserver.shutdown()


def round_trips(reps: int) -> bool:
    import torch

    waiter = Waiter()
    client = KernelClient(waiter)
    x = torch.tensor([1.0, 2.0, 3.0])
    cases = [
        ("x = torch.zeros(4)", A.CreateFilled("z", "zeros", (4,)), lambda: torch.zeros(4)),
        ("y = x + x", A.Compute("y", "add", "x", "x"), lambda: x + x),
        ("x = torch.tensor([1., 2., 3.])", A.CreateTensor("x", "[1.0, 2.0, 3.0]"),
         lambda: torch.tensor([1.0, 2.0, 3.0])),
    ]
    ok = True
    try:
        waiter.wait(client.request("run", A.CreateTensor("x", "[1.0, 2.0, 3.0]")))
        ping = []
        for _ in range(reps):
            a = time.perf_counter()
            waiter.wait(client.request("ping"))
            ping.append(time.perf_counter() - a)
        print(f"  ping (an empty request) round trip: {statistics.median(ping) * 1e3:.3f} ms")
        for label, action, direct in cases:
            via, plain = [], []
            for _ in range(reps):
                a = time.perf_counter()
                waiter.wait(client.request("run", action))
                via.append(time.perf_counter() - a)
                a = time.perf_counter()
                direct()
                plain.append(time.perf_counter() - a)
            k, d = statistics.median(via), statistics.median(plain)
            over_ms = (k - d) * 1e3
            met = over_ms <= TARGET_MS
            ok &= met
            print(f"  {label:32s} kernel {k * 1e3:7.3f} ms  direct {d * 1e3:7.3f} ms  "
                  f"overhead {over_ms:6.3f} ms  (target <= {TARGET_MS} ms: "
                  f"{'met' if met else 'NOT met'})")
    finally:
        client.shutdown()
    return ok


def kept_start(kept: bool) -> tuple[float, int]:
    """Seconds from start to the first ``ping`` answer; the watchdog's RSS (0: none)."""
    os.environ[forkserver.ENABLE_ENV] = "0"
    spawn = keeper.spawn
    if not kept:
        keeper.spawn = lambda *_args: None  # type: ignore[assignment]
    waiter = Waiter()
    client = KernelClient(waiter)
    try:
        start = time.perf_counter()
        waiter.wait(client.request("ping"))
        took = time.perf_counter() - start
        assert client.pid is not None
        parent = psutil.Process(client.pid).parent()
        rss = parent.memory_info().rss if kept and parent is not None else 0
        return took, rss
    finally:
        keeper.spawn = spawn
        client.shutdown()


def lesson_sizes() -> None:
    from gpumon.playground.data.wire import Request, encode_frame
    from gpumon.playground.lesson.steps import LESSON
    from gpumon.telemetry.sources.simulated import SimulatedSource

    source = SimulatedSource(8, seed=0)
    source.open()
    snapshot = source.sample()
    steps = tuple(LESSON)
    every_time = len(encode_frame(Request(1, "lesson", (steps, 5, snapshot))))
    first = len(encode_frame(Request(1, "lesson", (1, steps, 5, snapshot))))
    later = len(encode_frame(Request(2, "lesson", (1, None, 6, snapshot))))
    print(f"  before (steps every time): {every_time:7d} bytes per step")
    print(f"  now, a lesson's first step: {first:6d} bytes; each later step: {later:6d} "
          f"bytes ({later / every_time:.2f}x before)")


def send_while_busy(runs: int) -> float:
    """Seconds a 1 MB request takes to return while the kernel sleeps and reads nothing (it
    goes through the client's writer thread: more than the pipe's 64 KiB buffer)."""
    waiter = Waiter()
    client = KernelClient(waiter)
    try:
        waiter.wait(client.request("run", FIRST))
        took = []
        for _ in range(runs):
            busy = client.request("run", A.RunCode("import time; time.sleep(0.5)"))
            start = time.perf_counter()
            big = client.request("run", A.RunCode("n = len('''" + "y" * 1_000_000 + "''')"))
            took.append(time.perf_counter() - start)
            waiter.wait(busy)
            waiter.wait(big)
        return statistics.median(took)
    finally:
        client.shutdown(timeout_s=2.0)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    runs = 2 if args.quick else 5
    reps = 100 if args.quick else 500
    print(describe())
    os.environ[forkserver.ENABLE_ENV] = "0"
    print("1. first action")
    cold = statistics.median(cold_torch() for _ in range(runs))
    warm = statistics.median(first_action(prewarm=True) for _ in range(runs))
    unwarmed = statistics.median(first_action(prewarm=False) for _ in range(runs))
    print(f"  cold python -c 'import torch; torch.ones(3)': {cold * 1e3:8.1f} ms (baseline)")
    print(f"  first action, kernel pre-warmed:             {warm * 1e3:8.1f} ms "
          f"({warm / cold:.3f}x the baseline)")
    print(f"  first action, kernel started with it:        {unwarmed * 1e3:8.1f} ms "
          f"({unwarmed / cold:.2f}x the baseline; for information)")
    print(f"2. round trip per action ({reps} repetitions, medians)")
    ok = round_trips(reps)
    print("3. lesson request size (8 simulated GPUs)")
    lesson_sizes()
    print(f"4. restart after a SIGKILL, to the next torch action's outcome ({runs} runs, medians)")
    if sys.platform.startswith("linux"):
        plain = [restart(forked=False) for _ in range(runs)]
        forked = [restart(forked=True) for _ in range(runs)]
        p_s, p_cpu = (statistics.median(v) for v in zip(*plain, strict=True))
        f_s, f_cpu = (statistics.median(v) for v in zip(*forked, strict=True))
        print(f"  ordinary start (baseline): {p_s * 1e3:8.1f} ms, new kernel's CPU {p_cpu:5.2f} s")
        print(f"  forked from the server:    {f_s * 1e3:8.1f} ms, new kernel's CPU {f_cpu:5.2f} s "
              f"({f_s / p_s:.3f}x the baseline's time)")
    else:
        print("  (no fork server on this platform)")
    if keeper.usable():
        print(f"5. start to the first answer, under the watchdog ({runs * 3} runs, medians)")
        direct = statistics.median(kept_start(False)[0] for _ in range(runs * 3))
        under = [kept_start(True) for _ in range(runs * 3)]
        u_s, u_rss = (statistics.median(v) for v in zip(*under, strict=True))
        print(f"  started directly (baseline): {direct * 1e3:7.1f} ms")
        print(f"  under its watchdog:          {u_s * 1e3:7.1f} ms "
              f"(+{(u_s - direct) * 1e3:.1f} ms); the watchdog's RSS {u_rss / 2**20:.1f} MiB")
    print(f"6. a 1 MB request sent while the kernel is busy ({runs} runs, median)")
    sent = send_while_busy(runs)
    print(f"  returns to the caller in {sent * 1e3:8.1f} ms (the kernel sleeps 500 ms; "
          "target: well under it)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
