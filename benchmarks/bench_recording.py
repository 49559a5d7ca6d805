"""A recording of an hour of 8 GPUs at 1 s: its size, the replay's memory, the seek time.

8 simulated GPUs, each second's snapshot written as the window's recorder writes it (the
stream's header, one ``snapshot_json`` line a second; a fake clock, so an hour takes as
long as the CPU needs), to ``.jsonl`` and to ``.jsonl.gz`` (gzip level 6, as the recorder).
Then for each file: the index (``Recording(path)``: time, Python's peak allocation during it
and what the index keeps), the seek time (``at_or_before`` at 200 random moments: median and
max; a gzip file has to decompress from its start for a jump back, the worst case), and a
replay of the whole hour through ``RecordingSource`` at 60x steps (resident memory before
and after: what playing adds).

Targets (issue 55): the compressed hour under 20 MB; the replay's memory bounded (the index
at 16 bytes a snapshot: a 5 GB file of ~300,000 snapshots keeps ~5 MB); a seek in a plain
file under 50 ms.

Run from the repository root: ``python benchmarks/bench_recording.py [--quick]``
(``--quick``: 10 minutes instead of an hour).
"""

from __future__ import annotations

import argparse
import dataclasses
import gzip
import random
import statistics
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import psutil

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from machine import describe  # noqa: E402 (benchmarks/machine.py, beside this script)

from gpumon.recording.reader import Recording  # noqa: E402
from gpumon.recording.source import RecordingSource  # noqa: E402
from gpumon.telemetry.sources.sampler import Sampler  # noqa: E402
from gpumon.telemetry.sources.simulated import SimulatedSource  # noqa: E402
from gpumon.text.json_in import header_line  # noqa: E402
from gpumon.text.json_out import snapshot_json  # noqa: E402

N_GPUS = 8
TARGET_GZ_MB = 20.0
TARGET_SEEK_MS = 50.0
MB = 1024**2


def write(path_plain: Path, path_gz: Path, seconds: int) -> None:
    sampler = Sampler(SimulatedSource(N_GPUS, seed=1))
    sampler.open()
    t0 = 1_790_000_000.0
    with path_plain.open("w", encoding="utf-8") as plain, \
            gzip.open(path_gz, "wt", encoding="utf-8", compresslevel=6) as gz:
        for f in (plain, gz):
            f.write(header_line(1.0) + "\n")
        for i in range(seconds):
            snap = sampler.tick()
            t = t0 + i
            snap = dataclasses.replace(
                snap, timestamp_s=t,
                samples=tuple(dataclasses.replace(s, timestamp_s=t) for s in snap.samples))
            line = snapshot_json(snap) + "\n"
            plain.write(line)
            gz.write(line)
            if i % 60 == 59:
                gz.flush()  # the recorder flushes about once a second; a minute is kinder
    sampler.close()


def measure(path: Path, seeks: int) -> dict[str, float]:
    tracemalloc.start()
    started = time.perf_counter()
    rec = Recording(path)
    index_s = time.perf_counter() - started
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    kept = rec.times.buffer_info()[1] * 8 + rec.offsets.buffer_info()[1] * 8
    rnd = random.Random(1)
    times = []
    for _ in range(seeks):
        t = rnd.uniform(rec.start_s, rec.end_s)
        started = time.perf_counter()
        snap = rec.at_or_before(t)
        times.append(time.perf_counter() - started)
        assert snap is not None and snap.timestamp_s <= t
    proc = psutil.Process()
    before = proc.memory_info().rss
    now = [0.0]
    source = RecordingSource(rec, backfill_s=300.0, clock=lambda: now[0])
    source.open()
    source.clock.set_speed(60.0)
    source.clock.set_playing(True)
    shown = 0
    while source.clock.playing:
        now[0] += 1.0
        snap = source.sample()
        shown += 1 + len(snap.backfill)
    after = proc.memory_info().rss
    source.close()
    return {"index_s": index_s, "index_peak_mb": peak / MB, "index_kept_mb": kept / MB,
            "seek_median_ms": statistics.median(times) * 1000,
            "seek_max_ms": max(times) * 1000, "replay_rss_growth_mb": (after - before) / MB,
            "snapshots": float(len(rec)), "shown": float(shown)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10 minutes instead of an hour")
    args = parser.parse_args()
    seconds = 600 if args.quick else 3600
    print(describe())
    with tempfile.TemporaryDirectory() as tmp:
        plain, gz = Path(tmp) / "hour.jsonl", Path(tmp) / "hour.jsonl.gz"
        started = time.perf_counter()
        write(plain, gz, seconds)
        print(f"{seconds} s of {N_GPUS} GPUs at 1 s written in "
              f"{time.perf_counter() - started:.1f} s")
        sizes = {p.name: p.stat().st_size / MB for p in (plain, gz)}
        for name, size in sizes.items():
            print(f"  {name}: {size:.2f} MB")
        results = {p.name: measure(p, 200 if p is plain else 40) for p in (plain, gz)}
    for name, r in results.items():
        print(f"{name}: index {r['index_s']:.2f} s (peak {r['index_peak_mb']:.2f} MB "
              f"allocated, {r['index_kept_mb']:.3f} MB kept for {r['snapshots']:.0f} "
              f"snapshots); seek median {r['seek_median_ms']:.1f} ms, max "
              f"{r['seek_max_ms']:.1f} ms; a 60x replay of all of it showed "
              f"{r['shown']:.0f} snapshots, RSS +{r['replay_rss_growth_mb']:.1f} MB")
    hour_gz = sizes[gz.name] * 3600 / seconds
    met = hour_gz < TARGET_GZ_MB and results[plain.name]["seek_median_ms"] < TARGET_SEEK_MS
    print(f"an hour compressed: {hour_gz:.1f} MB (target < {TARGET_GZ_MB:.0f} MB); plain seek "
          f"median {results[plain.name]['seek_median_ms']:.1f} ms (target < "
          f"{TARGET_SEEK_MS:.0f} ms): {'met' if met else 'NOT met'}")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
