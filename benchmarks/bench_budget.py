"""The reading budget: what gpumon's NVML reading costs per GPU per second on a real driver's
call costs (the fake NVML's "h200" cost profile), this tree beside a base revision.

Each case is a child process that reads 8 fake GPUs through gpumon's Sampler and NvmlSource
every 1 s in real time (on a grid, as the app's sampling thread does), after a settle of 6 s
(the first slow tick, and what the reader learns of each call's cost). Over the measuring
period it reports:

- **CPU per GPU per second**: the child's whole CPU time (all threads, ``time.process_time``)
  divided by the seconds and the GPUs: the average over slow and fast ticks. Target: <= 1.0 ms.
- **the longest tick**: the wall time of the slowest ``Sampler.tick()``, whole and per GPU
  (how long the slowest reading held the sampler), and the most CPU time one tick took in the
  sampling thread (on a busy machine the wall time also counts the waits for a core). Target:
  no single call holds a tick longer than 5 ms per GPU.

Cases: no process on the GPUs, and one process per GPU (this script's PID, so psutil finds
it): then NVML's per-process utilization is read too. ``--base REV`` measures gpumon at git
revision REV (``git archive``) the same way, case by case before this tree, both on the fake
built from this tree (``--rounds N`` alternates them N times). Run from the repository
root: ``python benchmarks/bench_budget.py [--quick] [--base REV] [--profile none|h200]``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests" / "telemetry"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from fakenvml import BENCH_PROFILE, PROFILES, build_fake_nvml, fake_driver_env  # noqa: E402
from machine import describe  # noqa: E402

N_GPUS = 8
TARGET_MS = 1.0  # CPU per GPU per second
SETTLE_S = 6.0

# The child: the Sampler on NvmlSource every 1 s on a grid, as the app's sampling thread keeps
# it; prints one JSON line with its CPU time and ticks over the measuring period.
CHILD = """
import json, sys, time
from gpumon.telemetry.nvml.source import NvmlSource
from gpumon.telemetry.sources.sampler import Sampler
settle, seconds = float(sys.argv[1]), float(sys.argv[2])
sampler = Sampler(NvmlSource())
sampler.open()
start = time.monotonic()
n, ticks, cpus, cpu0, t0 = 0, [], [], None, None
while True:
    now = time.monotonic()
    if cpu0 is None and now - start >= settle:
        cpu0, t0 = time.process_time(), now
    if t0 is not None and now - t0 >= seconds:
        break
    began, began_cpu = time.perf_counter(), time.thread_time()
    snap = sampler.tick()
    if t0 is not None:
        ticks.append(time.perf_counter() - began)
        cpus.append(time.thread_time() - began_cpu)
    n += 1
    time.sleep(max(0.0, start + n - time.monotonic()))
print(json.dumps({"cpu_s": time.process_time() - cpu0, "wall_s": time.monotonic() - t0,
                  "ticks": ticks, "cpus": cpus, "gpus": len(snap.samples),
                  "lost": sum(s.lost for s in snap.samples)}))
"""


def base_tree(rev: str, tmp: Path) -> Path:
    """gpumon at ``rev`` (``git archive``) unpacked into ``tmp``."""
    tree = tmp / "base"
    tree.mkdir()
    archive = subprocess.run(["git", "archive", rev, "gpumon", "resources"], cwd=REPO,
                             capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    return tree


def run(tree: Path, env: dict[str, str], seconds: float) -> dict[str, float]:
    out = subprocess.run([sys.executable, "-c", CHILD, str(SETTLE_S), str(seconds)],
                         env=dict(env, PYTHONPATH=str(tree)), cwd=tree, capture_output=True,
                         text=True, timeout=seconds + 120, check=True)
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["gpus"] == N_GPUS and got["lost"] == 0, got
    ticks = got["ticks"]
    return {"cpu_ms_gpu_s": got["cpu_s"] * 1000 / got["wall_s"] / N_GPUS,
            "max_tick_ms": max(ticks) * 1000, "ticks": len(ticks),
            "max_tick_cpu_ms": max(got["cpus"]) * 1000,
            "median_tick_ms": sorted(ticks)[len(ticks) // 2] * 1000}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="30 s per case instead of 90")
    parser.add_argument("--base", metavar="REV", help="also measure gpumon at git revision REV")
    parser.add_argument("--profile", choices=PROFILES, default=BENCH_PROFILE,
                        help=f"the fake NVML's cost profile (default {BENCH_PROFILE})")
    parser.add_argument("--rounds", type=int, default=1, help="alternations of the trees")
    args = parser.parse_args()
    seconds = 30.0 if args.quick else 90.0
    print(f"bench_budget: {describe()}")
    print(f"fake NVML cost profile: {args.profile}; {N_GPUS} GPUs read every 1 s, "
          f"{seconds:g} s a case after {SETTLE_S:g} s of settling")
    met = True
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        lib = build_fake_nvml(work)
        trees = [("this tree", REPO)]
        if args.base:
            trees.insert(0, (f"base {args.base}", base_tree(args.base, work)))
        for procs in (0, 1):
            script = {"gpus": str(N_GPUS), "profile": args.profile}
            if procs:
                script["procs"] = ",".join(f"{g}:{os.getpid()}:{1 << 30}"
                                           for g in range(N_GPUS))
            env = fake_driver_env(lib, work, **script)
            for n in range(args.rounds):
                for name, tree in trees:
                    r = run(tree, env, seconds)
                    ok = r["cpu_ms_gpu_s"] <= TARGET_MS
                    if name == "this tree":
                        met &= ok
                    print(f"{procs} process per GPU, {name:>14s} (round {n + 1}): "
                          f"{r['cpu_ms_gpu_s']:.3f} ms of CPU per GPU per s "
                          f"(target <= {TARGET_MS:g}: {'met' if ok else 'NOT met'}); "
                          f"tick median {r['median_tick_ms']:.2f} ms, longest "
                          f"{r['max_tick_ms']:.1f} ms ({r['max_tick_ms'] / N_GPUS:.2f} ms per "
                          f"GPU), the most CPU in a tick {r['max_tick_cpu_ms']:.1f} ms "
                          f"({r['max_tick_cpu_ms'] / N_GPUS:.2f} ms per GPU) over "
                          f"{r['ticks']:.0f} ticks", flush=True)
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
