"""Python cost of one Sampler.tick() for 1, 8 and 16 GPUs.

(a) SimulatedSource through Sampler.tick();
(b) NvmlSource through Sampler.tick(), the real nvidia-ml-py binding on the fake NVML library
    (tests/telemetry/fakenvml, compiled here with gcc);
(c) baseline: the same pynvml calls NvmlSource makes per tick, called directly with cached
    handles, on the same fake library, in the same run.

The sampler's clock is a fake one advanced by 1 s per tick, so the slow fields (power limit,
pstate, persistence, compute mode, PCIe RX/TX, and the health counts: ECC, remapped rows,
retired pages, PCIe replays) are read every 5th tick, as in the app at a 1 s
interval; the baseline makes those calls on the same ticks. Each GPU runs 0 processes, then 1
(this process, so psutil finds it; NvmlSource then also pays for one psutil look-up per tick,
which the raw calls do not). Target: (b) <= 3x (c), on the median.

Run from the repository root: ``python benchmarks/bench_sampling.py [--quick]``.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests" / "telemetry"))

import pynvml  # noqa: E402
from fakenvml import FakeNvml, build_fake_nvml, use_fake_nvml  # noqa: E402
from machine import describe  # noqa: E402 (benchmarks/machine.py, beside this script)

from gpumon.telemetry.nvml.source import NvmlSource  # noqa: E402
from gpumon.telemetry.sources.sampler import Sampler  # noqa: E402
from gpumon.telemetry.sources.simulated import SimulatedSource  # noqa: E402

TARGET_RATIO = 3.0
SLOW_EVERY = 5  # ticks between slow-field reads (slow_every_s=5 at a 1 s interval)


class FakeClock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def timed(step: Callable[[int], object], reps: int, out: list[float]) -> None:
    """Call step(i) reps times, appending each call's duration in microseconds."""
    clock = time.perf_counter
    for i in range(reps):
        t0 = clock()
        step(i)
        out.append((clock() - t0) * 1e6)


def stats(us: list[float]) -> tuple[float, float]:
    """(median, p95) in microseconds."""
    return statistics.median(us), statistics.quantiles(us, n=20)[18]


def sampler_step(sampler: Sampler, clock: FakeClock) -> Callable[[int], object]:
    def step(_i: int) -> object:
        clock.t += 1.0
        return sampler.tick()
    return step


def raw_step(handles: list[object]) -> Callable[[int], object]:
    """The calls NvmlSource._read_sample and _read_processes make, without gpumon around them."""
    n = pynvml

    def step(i: int) -> object:
        for h in handles:
            n.nvmlDeviceGetMemoryInfo(h, n.nvmlMemory_v2)
            n.nvmlDeviceGetUtilizationRates(h)
            n.nvmlDeviceGetTemperatureV(h, n.NVML_TEMPERATURE_GPU)
            n.nvmlDeviceGetPowerUsage(h)
            n.nvmlDeviceGetEncoderUtilization(h)
            n.nvmlDeviceGetDecoderUtilization(h)
            n.nvmlDeviceGetFanSpeed(h)
            n.nvmlDeviceGetClockInfo(h, n.NVML_CLOCK_SM)
            n.nvmlDeviceGetClockInfo(h, n.NVML_CLOCK_MEM)
            n.nvmlDeviceGetCurrentClocksEventReasons(h)
            n.nvmlDeviceGetTotalEnergyConsumption(h)
            n.nvmlDeviceGetFieldValues(h, [n.NVML_FI_DEV_MEMORY_TEMP])
            if i % SLOW_EVERY == 0:
                n.nvmlDeviceGetEnforcedPowerLimit(h)
                n.nvmlDeviceGetPersistenceMode(h)
                n.nvmlDeviceGetComputeMode(h)
                n.nvmlDeviceGetPerformanceState(h)
                n.nvmlDeviceGetPcieThroughput(h, n.NVML_PCIE_UTIL_RX_BYTES)
                n.nvmlDeviceGetPcieThroughput(h, n.NVML_PCIE_UTIL_TX_BYTES)
                n.nvmlDeviceGetEccMode(h)  # the health fields (health.read_health)
                for kind in (n.NVML_MEMORY_ERROR_TYPE_CORRECTED,
                             n.NVML_MEMORY_ERROR_TYPE_UNCORRECTED):
                    for counter in (n.NVML_VOLATILE_ECC, n.NVML_AGGREGATE_ECC):
                        n.nvmlDeviceGetTotalEccErrors(h, kind, counter)
                n.nvmlDeviceGetRemappedRows(h)
                n.nvmlDeviceGetRetiredPagesPendingStatus(h)
                n.nvmlDeviceGetPcieReplayCounter(h)
                n.nvmlDeviceGetRetiredPages(
                    h, n.NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS)
                n.nvmlDeviceGetRetiredPages(h, n.NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR)
            n.nvmlDeviceGetComputeRunningProcesses_v3(h)
            n.nvmlDeviceGetGraphicsRunningProcesses_v3(h)
        return None
    return step


def count_calls(fake: FakeNvml, n_gpus: int) -> int:
    return sum(fake.device_calls(g) for g in range(n_gpus))


def bench(fake: FakeNvml, n_gpus: int, procs: int, reps: int, rounds: int) -> dict[str, float]:
    fake.reset()
    fake.set_gpu_count(n_gpus)
    for g in range(n_gpus):
        for _ in range(procs):  # this process, so psutil finds it (as for a real job)
            fake.add_process(g, os.getpid(), 2 << 30)
    sim_clock, nvml_clock = FakeClock(), FakeClock()
    sim = Sampler(SimulatedSource(n_gpus, clock=sim_clock), clock=sim_clock,
                  wall_clock=sim_clock)
    nvml = Sampler(NvmlSource(), clock=nvml_clock)
    assert nvml.open().usable and nvml.tick().samples[0].lost is False
    sim.open()
    pynvml.nvmlInit()  # a second reference; the baseline's own handles
    try:
        handles = [pynvml.nvmlDeviceGetHandleByIndex(g) for g in range(n_gpus)]
        steps = {"sim": sampler_step(sim, sim_clock), "nvml": sampler_step(nvml, nvml_clock),
                 "raw": raw_step(handles)}
        before = count_calls(fake, n_gpus)
        steps["nvml"](0)
        calls_tick = count_calls(fake, n_gpus) - before
        results: dict[str, list[float]] = {k: [] for k in steps}
        for step in steps.values():  # warm-up
            timed(step, max(20, reps // 10), [])
        for _ in range(rounds):  # interleaved, so drift on a shared machine hits all alike
            for name, step in steps.items():
                timed(step, reps, results[name])
    finally:
        pynvml.nvmlShutdown()
        nvml.close()
    out: dict[str, float] = {"calls": float(calls_tick)}
    for name, us in results.items():
        out[name + "_med"], out[name + "_p95"] = stats(us)
    return out


def binding_version() -> str:
    try:
        return importlib.metadata.version("nvidia-ml-py")
    except importlib.metadata.PackageNotFoundError:
        return "?"


def machine() -> str:
    return f"{describe()}, nvidia-ml-py {binding_version()}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="short run (less precise)")
    parser.add_argument("--procs", type=int, nargs="+", default=[0, 1],
                        help="processes per GPU, one table row each (default: 0 1)")
    args = parser.parse_args()
    reps, rounds = (200, 3) if args.quick else (1000, 5)
    print(f"bench_sampling: {machine()}")
    print(f"{reps * rounds} ticks per case, slow fields every {SLOW_EVERY}th tick; "
          "times in microseconds per tick; calls = NVML device calls per tick\n")
    header = (f"{'GPUs':>4} {'procs':>5} {'calls':>5} | {'sim med':>8} {'p95':>8} | "
              f"{'nvml med':>8} {'p95':>8} | {'raw med':>8} {'p95':>8} | {'nvml/raw':>8}")
    print(header)
    print("-" * len(header))
    worst = 0.0
    with tempfile.TemporaryDirectory() as tmp, use_fake_nvml(build_fake_nvml(Path(tmp))) as fake:
        for procs, n_gpus in ((p, n) for p in args.procs for n in (1, 8, 16)):
            r = bench(fake, n_gpus, procs, reps, rounds)
            ratio = r["nvml_med"] / r["raw_med"]
            worst = max(worst, ratio)
            print(f"{n_gpus:>4} {procs:>5} {r['calls']:>5.0f} | "
                  + " | ".join(f"{r[k + '_med']:>8.1f} {r[k + '_p95']:>8.1f}"
                               for k in ("sim", "nvml", "raw"))
                  + f" | {ratio:>7.2f}x")
    met = worst <= TARGET_RATIO
    print(f"\ntarget: NvmlSource tick <= {TARGET_RATIO:g}x the raw NVML calls (median); "
          f"worst {worst:.2f}x -> {'MET' if met else 'MISSED'}")
    print("note: on real hardware nvmlDeviceGetPcieThroughput samples over ~20 ms; the fake "
          "returns at once, so these figures exclude that wait")
    return 0


if __name__ == "__main__":
    sys.exit(main())
