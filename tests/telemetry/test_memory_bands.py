"""Memory by process as bands: the top processes by peak, "others", and the remainder, which
together make used memory at every point (gaps where used is unknown)."""

from __future__ import annotations

import math

import pytest
from testkit import STATUS_OK, TEST_MACHINE

np = pytest.importorskip("numpy", reason="numpy is not installed (the window's History needs it)")

from gpumon.telemetry.history.memory_bands import OTHERS, REMAINDER, memory_bands  # noqa: E402
from gpumon.telemetry.history.store import History, ProcessEntry, ProcessMemory  # noqa: E402
from gpumon.telemetry.model.types import (  # noqa: E402
    GpuProcess,
    GpuSample,
    ProcessType,
    Snapshot,
)

MIB = 1024**2


def memory(used: list[float], others: list[float] | None = None,
           **procs: list[float]) -> ProcessMemory:
    n = len(used)
    return ProcessMemory(
        np.arange(float(n)), np.array(used, dtype=float),
        tuple((ProcessEntry(int(k[1:]), None, k, 0), np.array(v, dtype=float))
              for k, v in procs.items()),
        np.array(others if others is not None else [math.nan] * n, dtype=float))


def test_the_bands_add_up_to_used_memory() -> None:
    nan = math.nan
    bands = memory_bands(memory([1000, 1200, nan, 900], others=[nan, 50, nan, nan],
                                p1=[300, 300, 300, nan], p2=[nan, 400, 400, 500]))
    assert [b.key.split(":")[0] for b in bands.bands] == ["pid", "pid", OTHERS, REMAINDER]
    assert [b.pid for b in bands.bands[:2]] == [2, 1]  # largest peak at the bottom
    top = bands.tops()[-1]
    assert list(top[[0, 1, 3]]) == [1000, 1200, 900]
    assert all(math.isnan(b.values[2]) for b in bands.bands)  # used unknown: a gap in all
    assert list(bands.bands[-1].values[[0, 1, 3]]) == [700, 450, 400]  # used − processes
    assert bands.attributed


def test_the_top_five_by_peak_and_the_rest_as_others() -> None:
    # p1..p7 hold 10·k throughout; p8 holds less in all than p4 but has the highest peak
    procs = {f"p{k}": [10.0 * k] * 3 for k in range(1, 8)}
    procs["p8"] = [math.nan, math.nan, 100.0]
    bands = memory_bands(memory([1000, 1000, 1000], others=[5, math.nan, math.nan], **procs))
    assert [b.pid for b in bands.bands[:5]] == [8, 7, 6, 5, 4]
    others = bands.bands[5]
    assert others.key == OTHERS
    assert list(others.values) == [65, 60, 60]  # p1..p3, and the History's others
    assert bands.tops()[-1].tolist() == [1000, 1000, 1000]
    assert len(memory_bands(memory([1000], p1=[1.0], p2=[2.0]), top=1).bands) == 3


def test_processes_over_used_leave_no_negative_remainder() -> None:
    bands = memory_bands(memory([100, 100], p1=[150, 50]))
    assert list(bands.bands[-1].values) == [0, 50]
    assert list(bands.tops()[-1]) == [150, 100]  # the stack tops their sum there


def test_without_process_memory_there_is_only_the_remainder() -> None:
    bands = memory_bands(memory([100, 200], p1=[math.nan, math.nan]))
    assert [b.key for b in bands.bands] == [REMAINDER]
    assert not bands.attributed and list(bands.tops()[-1]) == [100, 200]


def test_bands_from_a_history_sum_to_used_at_every_tick() -> None:
    rng = np.random.default_rng(3)
    h = History(capacity=100)
    for i in range(150):
        pids = rng.choice(np.arange(1, 30), size=rng.integers(0, 9), replace=False)
        procs = [GpuProcess(0, int(p), ProcessType.COMPUTE, int(rng.integers(1, 500)) * MIB)
                 for p in pids]
        used = sum(p.gpu_mem_bytes or 0 for p in procs) + int(rng.integers(0, 300)) * MIB
        h.append(Snapshot(float(i), TEST_MACHINE, STATUS_OK, processes=tuple(procs),
                          samples=(GpuSample(0, float(i), mem_used_bytes=used),)))
    mem = h.process_memory(0, since=80.0)
    bands = memory_bands(mem)
    assert np.array_equal(bands.tops()[-1], mem.used)
    assert all((b.values >= 0).all() for b in bands.bands)
