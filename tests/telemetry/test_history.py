"""History: bounded memory, chronological series, NaN for missing, extras, resize."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st
from testkit import snapshot as snap

# The window's History needs numpy; a GPU machine with torch and NVML only may lack it.
np = pytest.importorskip("numpy", reason="numpy is not installed (the window's History needs it)")

from gpumon.telemetry.history.store import (  # noqa: E402
    MAX_CAPACITY,
    SELF_MEM_KEY,
    WINDOW_CHOICES_S,
    History,
    capacity_for,
)
from gpumon.telemetry.model.metrics import HISTORY_KEYS  # noqa: E402
from gpumon.telemetry.model.types import (  # noqa: E402
    GpuProcess,
    GpuSample,
    ProcessType,
)


def sample(index: int, t: float, util: float | None = 50.0, **kw: object) -> GpuSample:
    return GpuSample(index=index, timestamp_s=t, gpu_util_pct=util, **kw)  # type: ignore[arg-type]


def test_records_every_history_key_and_self_memory() -> None:
    h = History(10)
    h.append(snap(1.0, sample(0, 1.0)))
    assert h.keys(0)[: len(HISTORY_KEYS)] == list(HISTORY_KEYS)
    assert SELF_MEM_KEY in h.keys(0)
    assert h.gpu_indices() == [0]


def test_append_far_beyond_capacity_keeps_newest_in_order_and_memory_fixed() -> None:
    h = History(100)
    for i in range(100):  # full once: the memory is fixed from here on
        h.append(snap(float(i), sample(0, float(i), util=float(i % 100)),
                      sample(1, float(i), util=1.0)))
    size = h.nbytes
    assert size > 0
    for i in range(100, 10_000):
        h.append(snap(float(i), sample(0, float(i), util=float(i % 100)),
                      sample(1, float(i), util=1.0)))
        if i % 997 == 0:
            assert h.nbytes == size
    times, values = h.series(0, "gpu_util_pct")
    assert len(times) == len(values) == 100 == h.count(0)
    assert np.array_equal(times, np.arange(9900.0, 10_000.0))
    assert np.array_equal(values, np.arange(9900.0, 10_000.0) % 100)
    assert h.latest_time() == 9999.0


def test_memory_follows_the_points_held_until_the_capacity() -> None:
    """An hour at 1 s is 3,601 slots a series: a window that has read for a minute holds a
    minute's worth (doubling as points come), not the hour's from the first reading."""
    h = History(3601)
    h.append(snap(0.0, sample(0, 0.0, util=0.0)))
    first = h.nbytes
    sizes = []
    for i in range(1, 5000):
        h.append(snap(float(i), sample(0, float(i), util=float(i % 7))))
        sizes.append(h.nbytes)
    full = sizes[-1]
    assert first * 50 < full  # 64 slots, not 3,601
    assert sizes == sorted(sizes) and sizes[3600:] == [full] * (len(sizes) - 3600)
    times, values = h.series(0, "gpu_util_pct")
    assert np.array_equal(times, np.arange(1399.0, 5000.0))
    assert np.array_equal(values, np.arange(1399.0, 5000.0) % 7)


def test_a_series_that_appears_while_the_ring_grows_is_nan_before() -> None:
    h = History(1000)
    for i in range(300):
        s = sample(0, float(i), util=1.0)
        extra = {0: {"late": float(i)}} if i >= 100 else {}
        h.append(snap(float(i), s, extra=extra))
    times, late = h.series(0, "late")
    assert len(times) == 300
    assert np.isnan(late[:100]).all() and np.array_equal(late[100:], np.arange(100.0, 300.0))


def test_partial_fill_is_chronological() -> None:
    h = History(8)
    for i in range(3):
        h.append(snap(float(i), sample(0, float(i), util=float(i))))
    times, values = h.series(0, "gpu_util_pct")
    assert times.tolist() == [0.0, 1.0, 2.0] and values.tolist() == [0.0, 1.0, 2.0]


def test_series_are_copies() -> None:
    h = History(4)
    h.append(snap(1.0, sample(0, 1.0, util=1.0)))
    _, values = h.series(0, "gpu_util_pct")
    values[0] = 99.0
    assert h.series(0, "gpu_util_pct")[1][0] == 1.0


def test_none_and_lost_become_nan() -> None:
    h = History(4)
    h.append(snap(1.0, sample(0, 1.0, util=None, power_w=100.0)))
    h.append(snap(2.0, GpuSample(index=0, timestamp_s=2.0, lost=True, power_w=120.0)))
    _, util = h.series(0, "gpu_util_pct")
    _, power = h.series(0, "power_w")
    assert math.isnan(util[0]) and math.isnan(util[1])
    assert power[0] == 100.0 and math.isnan(power[1])


def test_self_memory_sums_own_processes_on_that_gpu() -> None:
    procs = (
        GpuProcess(0, 10, ProcessType.COMPUTE, 100, is_self=True),
        GpuProcess(0, 11, ProcessType.COMPUTE, 50, is_self=True),
        GpuProcess(0, 12, ProcessType.COMPUTE, 1000),
        GpuProcess(1, 10, ProcessType.COMPUTE, 7, is_self=True),
    )
    h = History(4)
    h.append(snap(1.0, sample(0, 1.0), sample(1, 1.0), sample(2, 1.0), processes=procs))
    assert h.series(0, SELF_MEM_KEY)[1].tolist() == [150.0]
    assert h.series(1, SELF_MEM_KEY)[1].tolist() == [7.0]
    assert math.isnan(h.series(2, SELF_MEM_KEY)[1][0])


def test_extra_series_appear_later_with_nan_before_and_when_absent() -> None:
    h = History(10)
    h.append(snap(1.0, sample(0, 1.0)))
    h.append(snap(2.0, sample(0, 2.0), extra={0: {"torch_allocated_bytes": 5.0}}))
    h.append(snap(3.0, sample(0, 3.0)))
    assert "torch_allocated_bytes" in h.keys(0)
    values = h.series(0, "torch_allocated_bytes")[1]
    assert math.isnan(values[0]) and values[1] == 5.0 and math.isnan(values[2])


def test_extra_slot_reuse_does_not_leak_old_values() -> None:
    h = History(2)
    h.append(snap(1.0, sample(0, 1.0), extra={0: {"x": 1.0}}))
    h.append(snap(2.0, sample(0, 2.0), extra={0: {"x": 2.0}}))
    h.append(snap(3.0, sample(0, 3.0)))  # overwrites the slot that held x=1
    values = h.series(0, "x")[1]
    assert values[0] == 2.0 and math.isnan(values[1])


def test_unknown_gpu_and_key() -> None:
    h = History(4)
    assert h.series(3, "power_w")[0].size == 0
    assert h.keys(3) == [] and h.latest_time() is None and h.value_at(3, 1.0) == {}
    h.append(snap(1.0, sample(0, 1.0)))
    times, values = h.series(0, "never_seen")
    assert times.tolist() == [1.0] and math.isnan(values[0])


def test_since_limits_the_window() -> None:
    h = History(100)
    for i in range(50):
        h.append(snap(float(i), sample(0, float(i))))
    times, values = h.series(0, "gpu_util_pct", since=40.0)
    assert times.tolist() == [float(i) for i in range(40, 50)] and len(values) == 10


def test_value_at_is_the_sample_at_or_before() -> None:
    h = History(4)
    for i in range(6):  # the ring wraps: 2..5 remain
        h.append(snap(float(i), sample(0, float(i), util=float(10 * i))))
    assert h.value_at(0, 3.5)["gpu_util_pct"] == 30.0
    assert h.value_at(0, 3.5)["timestamp_s"] == 3.0
    assert h.value_at(0, 4.0)["gpu_util_pct"] == 40.0
    assert h.value_at(0, 100.0)["gpu_util_pct"] == 50.0
    assert h.value_at(0, 1.9) == {}


def test_resize_keeps_the_newest() -> None:
    h = History(10)
    for i in range(15):
        h.append(snap(float(i), sample(0, float(i), util=float(i))))
    h.resize(4)
    assert h.capacity == 4
    assert h.series(0, "gpu_util_pct")[1].tolist() == [11.0, 12.0, 13.0, 14.0]
    h.append(snap(15.0, sample(0, 15.0, util=15.0)))
    assert h.series(0, "gpu_util_pct")[1].tolist() == [12.0, 13.0, 14.0, 15.0]
    h.resize(8)
    h.append(snap(16.0, sample(0, 16.0, util=16.0)))
    assert h.series(0, "gpu_util_pct")[1].tolist() == [12.0, 13.0, 14.0, 15.0, 16.0]


def test_clear_forgets_everything() -> None:
    h = History(4)
    h.append(snap(1.0, sample(0, 1.0)))
    h.clear()
    assert h.gpu_indices() == [] and h.nbytes == 0 and h.latest_time() is None


@pytest.mark.parametrize("bad", [0, 1, -5])
def test_bad_capacity(bad: int) -> None:
    with pytest.raises(ValueError):
        History(bad)


def test_capacity_for() -> None:
    assert WINDOW_CHOICES_S[0] == 60 and WINDOW_CHOICES_S[-1] == 3600
    assert capacity_for(3600, 1.0) == 3601
    assert capacity_for(60, 0.5) == 121
    assert capacity_for(3600, 0.1) == MAX_CAPACITY
    with pytest.raises(ValueError):
        capacity_for(60, 0.0)
    with pytest.raises(ValueError):
        capacity_for(float("nan"), 1.0)


@given(capacity=st.integers(2, 20),
       values=st.lists(st.one_of(st.none(), st.floats(0, 100)), max_size=60),
       new_capacity=st.integers(2, 20))
def test_matches_a_list_of_the_newest_points(
    capacity: int, values: list[float | None], new_capacity: int
) -> None:
    h = History(capacity)
    for i, v in enumerate(values):
        h.append(snap(float(i), sample(0, float(i), util=v)))
    expected = [math.nan if v is None else v for v in values][-capacity:]
    got = h.series(0, "gpu_util_pct")[1].tolist()
    assert np.array_equal(np.array(got), np.array(expected), equal_nan=True)
    h.resize(new_capacity)
    got = h.series(0, "gpu_util_pct")[1].tolist()
    assert np.array_equal(np.array(got), np.array(expected[-new_capacity:]), equal_nan=True)
