"""The playground kernel over SSH beside the local one: the round trip of an action.

A kernel on "another machine" (``gpumon kernel --stdio`` through a real sshd on 127.0.0.1,
``tests/remote/sshd.py``; the window's side is ``KernelClient(remote=...)``) against a local
kernel (the same client, ``in_band=True``, as over ssh), in the same run: the median time
from sending a request to its answer, for an empty request (``ping``) and three small
actions. Issue 50's target: over loopback SSH at most 20 ms more than the local kernel
(median). Loopback has no network latency, so what is measured is ssh's own cost: its
encryption and its two processes (ssh, sshd) on the way there and back.

Run from the repository root: ``python benchmarks/bench_ssh_kernel.py [--reps N]``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "remote"))
sys.path.insert(0, str(ROOT / "tests" / "telemetry"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_kernel import Waiter  # noqa: E402
from fakenvml import build_fake_nvml  # noqa: E402
from machine import describe  # noqa: E402
from sshd import Lab  # noqa: E402

from gpumon.playground.client.kernel_client import KernelClient  # noqa: E402
from gpumon.playground.client.ssh_kernel import Remote  # noqa: E402
from gpumon.playground.data import actions as A  # noqa: E402
from gpumon.ssh.command import SshOptions  # noqa: E402
from gpumon.ssh.target import parse_target  # noqa: E402

TARGET_MS = 20.0
CASES = [("ping (an empty request)", "ping", None),
         ("x = torch.zeros(4)", "run", A.CreateFilled("z", "zeros", (4,))),
         ("y = x + x", "run", A.Compute("y", "add", "x", "x")),
         ("x = torch.tensor([1., 2., 3.])", "run", A.CreateTensor("x", "[1.0, 2.0, 3.0]"))]


def medians(client: KernelClient, waiter: Waiter, reps: int) -> list[float]:
    """Each case's median round trip in seconds (after a warm-up that imports torch)."""
    waiter.wait(client.request("run", A.CreateTensor("x", "[1.0, 2.0, 3.0]")))
    out = []
    for _label, kind, payload in CASES:
        times = []
        for _ in range(reps):
            start = time.perf_counter()
            waiter.wait(client.request(kind, payload))
            times.append(time.perf_counter() - start)
        out.append(statistics.median(times))
    return out


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=200)
    reps = parser.parse_args().reps
    print(describe())
    work = Path(tempfile.mkdtemp(prefix="bench-ssh-kernel-"))
    (work / "fake").mkdir()
    lab = Lab(work / "lab", build_fake_nvml(work / "fake"), {"lab1": {}}).start()
    results = {}
    try:
        for where, make in (
                ("local", lambda w: KernelClient(w, in_band=True)),
                ("ssh", lambda w: KernelClient(w, remote=Remote(parse_target("lab1"), SshOptions(
                    config_file=str(lab.config), remote_command=str(lab.gpumon)))))):
            waiter = Waiter()
            client = make(waiter)
            try:
                results[where] = medians(client, waiter, reps)
            finally:
                client.shutdown(timeout_s=2.0)
    finally:
        lab.stop()
    ok = True
    print(f"round trip, median of {reps} (local kernel / kernel over loopback ssh)")
    for (label, _k, _p), local, ssh in zip(CASES, results["local"], results["ssh"], strict=True):
        more = (ssh - local) * 1e3
        met = more <= TARGET_MS
        ok &= met
        print(f"  {label:32s} local {local * 1e3:7.3f} ms  ssh {ssh * 1e3:7.3f} ms  "
              f"{more:+7.3f} ms  (target <= +{TARGET_MS:g} ms: {'met' if met else 'NOT met'})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
