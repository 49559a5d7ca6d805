"""The process window's words, without Qt: the unit of a memory graph, the newest numbers
above each graph, and the readings at a time (value_at: the newest at or before it)."""

from __future__ import annotations

from collections import deque

import pytest

from gpumon.telemetry.history.process_trace import ProcessTrace, value_at
from gpumon.ui.monitor.process.readout import current_values, memory_unit, readings_at
from gpumon.units import GIB, KIB, MIB, byte_unit, format_bytes


@pytest.mark.parametrize(("top", "unit"), [(155 * MIB, "MiB"), (0.155 * GIB, "MiB"),
                                           (1023.999 * MIB, "GiB"), (2 * GIB, "GiB"),
                                           (3 * KIB, "MiB"), (0.0, "MiB"),
                                           (float("nan"), "MiB"), (5 * 1024 * GIB, "TiB")])
def test_a_memory_graph_reads_in_the_unit_of_its_highest_value(top: float, unit: str) -> None:
    assert memory_unit(top) == (unit, float({"MiB": MIB, "GiB": GIB}.get(unit, 1024 * GIB)))


def test_byte_unit_is_the_unit_format_bytes_writes() -> None:
    for n in (0, 1, 1023, 1024, 1536 * KIB, 1023.999 * KIB, 155 * MIB, 80 * GIB, 3 * 1024**4):
        assert format_bytes(n).endswith(" " + byte_unit(n))


def test_value_at_is_the_newest_reading_at_or_before() -> None:
    series = deque([(10.0, 1.0), (11.0, None), (12.0, 3.0)])
    assert [value_at(series, t) for t in (9.9, 10.0, 10.5, 11.2, 12.0, 99.0)] == \
        [None, 1.0, 1.0, None, 3.0, 3.0]
    assert value_at(deque(), 5.0) is None


def test_numbers_and_readings_of_a_trace() -> None:
    trace = ProcessTrace(7)
    trace.gpu_mem = {0: deque([(10.0, float(GIB)), (11.0, 2.0 * GIB)]),
                     2: deque([(10.0, float(155 * MIB))])}
    trace.sm_pct = {0: deque([(10.0, 30.0), (11.0, 40.0)]), 2: deque([(10.0, None)])}
    trace.cpu_pct = deque([(10.0, 150.0)])
    trace.rss_bytes = deque([(10.0, float(155 * MIB))])
    assert current_values(trace) == {
        "gpu_mem": [("GPU 0", "2.00 GiB"), ("GPU 2", "155.00 MiB")],
        "sm": [("GPU 0", "40 %"), ("GPU 2", "N/A")],
        "cpu": [("", "150 %")], "rss": [("", "155.00 MiB")]}
    assert readings_at(trace, 10.5) == ["GPU 0: memory 1.00 GiB · SM 30 %",
                                        "GPU 2: memory 155.00 MiB · SM N/A",
                                        "CPU 150 % · RSS 155.00 MiB"]
    trace.exited_s = 11.5
    assert readings_at(trace, 12.0) == ["exited"]
