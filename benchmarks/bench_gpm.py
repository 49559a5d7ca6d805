"""What reading GPU activity (GPM) adds to a tick, per GPU, on the fake NVML library.

(a) NvmlSource.sample() with GPM on, GPUs with GPM (the fake's "gpm" scenario: no NVLink);
(b) the same source with ``gpm=False`` (``--no-gpm``): the baseline, same fake, same run,
    alternating a and b in rounds; GPM's cost per GPU per tick = (a - b) / GPUs, medians;
(c) the raw GPM calls a reading makes (one nvmlGpmSampleGet, one nvmlGpmMetricsGet on a
    reused c_nvmlGpmMetricsGet_t) through pynvml, without gpumon around them;
(d) the HGX board (8 GPUs, 18 NVLinks each): a tick with GPM and the links' counters, and one
    read of the topology (done at open and once a minute);
(e) 8 GPUs without GPM or NVLink (most GPUs): a tick, and the same tick with the activity hook
    replaced by one that returns nothing, same run: what the hook costs where it reads nothing.

Every tick here is read as a GPM reading: the reader's 100 ms minimum between samples is set
to 0 for the run (the fake returns at once; it gives DRAM as NaN under 100 ms, as the H200 did,
which the reader turns into None like any other). The fake's calls cost microseconds; a real
driver's GPM calls were not timed (the H200 in the issue did not time them), so the figures
are gpumon's Python cost, not the driver's. Target: GPM adds <= 60 us per GPU per tick
(median), about what a tick of one GPU costs today.

Run from the repository root: ``python benchmarks/bench_gpm.py [--quick]``.
"""

from __future__ import annotations

import argparse
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
from fakenvml import build_fake_nvml, use_fake_nvml  # noqa: E402
from machine import describe  # noqa: E402

from gpumon.telemetry.nvml import gpm  # noqa: E402
from gpumon.telemetry.nvml.links import LinkReader  # noqa: E402
from gpumon.telemetry.nvml.source import NvmlSource  # noqa: E402

TARGET_US = 60.0


def median_us(fn: Callable[[], object], reps: int) -> float:
    out = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t0) * 1e6)
    return statistics.median(out)


def ticks(n_gpus: int, rounds: int, reps: int) -> tuple[float, float]:
    """Median tick (us) with GPM on and off, alternating, fast ticks (no slow fields)."""
    on, off = NvmlSource(), NvmlSource(gpm=False)
    on.open()
    off.open()
    on.sample()  # GPM's first sample, and the slow fields of both
    off.sample()
    with_gpm: list[float] = []
    without: list[float] = []
    for _ in range(rounds):
        with_gpm.append(median_us(lambda: on.sample(include_slow=False), reps))
        without.append(median_us(lambda: off.sample(include_slow=False), reps))
    got = on.sample(include_slow=False).samples[0]
    assert got.activity_state is not None and got.activity_state.value == "reading", got
    on.close()
    off.close()
    return statistics.median(with_gpm), statistics.median(without)


def raw_gpm(reps: int) -> float:
    """One reading's GPM calls on GPU 0, straight through pynvml (us)."""
    pynvml.nvmlInit()
    h = pynvml.nvmlDeviceGetHandleByIndex(0)
    samples = [pynvml.nvmlGpmSampleAlloc(), pynvml.nvmlGpmSampleAlloc()]
    q = gpm._query()  # the reader's own query: the same metric list
    pynvml.nvmlGpmSampleGet(h, samples[0])
    k = [0]

    def reading() -> None:
        older, newer = samples[k[0] % 2], samples[(k[0] + 1) % 2]
        pynvml.nvmlGpmSampleGet(h, newer)
        q.sample1, q.sample2 = older, newer
        pynvml.nvmlGpmMetricsGet(q)
        k[0] += 1

    us = median_us(reading, reps)
    for s in samples:
        pynvml.nvmlGpmSampleFree(s)
    pynvml.nvmlShutdown()
    return us


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    rounds, reps = (3, 100) if args.quick else (7, 400)
    print(describe())
    gpm.MIN_INTERVAL_S = 0.0  # every tick a GPM reading (see the docstring)
    with tempfile.TemporaryDirectory() as tmp:
        lib = build_fake_nvml(Path(tmp))
        worst = 0.0
        with use_fake_nvml(lib) as fake:
            for n in (1, 8):
                fake.reset()
                fake.set_gpu_count(n)
                fake.use_scenario("gpm")
                a, b = ticks(n, rounds, reps)
                per_gpu = (a - b) / n
                worst = max(worst, per_gpu)
                print(f"{n:2d} GPU(s): tick {a:7.1f} us with GPM, {b:7.1f} us without "
                      f"(--no-gpm): GPM adds {per_gpu:5.1f} us per GPU per tick "
                      f"({a / b:.2f}x)")
            fake.reset()
            fake.use_scenario("gpm")
            print(f"raw GPM calls of one reading (SampleGet + MetricsGet, "
                  f"{len(gpm._METRIC_IDS)} metrics): {raw_gpm(reps * rounds):.1f} us")
            fake.reset()
            fake.use_scenario("hgx")
            a, b = ticks(8, rounds, reps)
            print(f"HGX, 8 GPUs x 18 NVLinks: tick {a:.1f} us with GPM, {b:.1f} us without "
                  "(both read the links' counters)")
            source = NvmlSource()
            source.open()
            gpus = [(i, pynvml.nvmlDeviceGetHandleByIndex(i), f"00000000:{0x10 + i:02X}:00.0")
                    for i in range(8)]
            topo = median_us(lambda: LinkReader().read_topology(source, gpus), reps // 10 + 3)
            source.close()
            print(f"HGX topology read (8 GPUs, 144 links, 56 P2P pairs): {topo / 1000:.2f} ms")
            fake.reset()
            fake.set_gpu_count(8)
            plain, hookless = NvmlSource(), NvmlSource()
            plain.open()
            hookless.open()
            hookless._activity.read = lambda *_: {}  # type: ignore[method-assign]
            a_us: list[float] = []
            b_us: list[float] = []
            for _ in range(rounds):
                a_us.append(median_us(lambda: plain.sample(include_slow=False), reps))
                b_us.append(median_us(lambda: hookless.sample(include_slow=False), reps))
            a, b = statistics.median(a_us), statistics.median(b_us)
            plain.close()
            hookless.close()
            print(f"8 GPUs without GPM or NVLink: tick {a:.1f} us, {b:.1f} us without the "
                  f"activity hook: {(a - b) / 8:.1f} us per GPU per tick")
    met = worst <= TARGET_US
    print(f"target: GPM adds <= {TARGET_US:g} us per GPU per tick: "
          f"{'met' if met else 'NOT met'} ({worst:.1f} us)")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
