"""peak_decimate on plain arrays: the envelope, the newest sample and gaps survive."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

# The window's graphs need numpy; a GPU machine with torch and NVML only may lack it.
np = pytest.importorskip("numpy", reason="numpy is not installed (the window's graphs need it)")

from gpumon.telemetry.decimate import peak_decimate  # noqa: E402


def test_peak_decimate_keeps_envelope_newest_sample_and_gaps() -> None:
    x = np.arange(1000.0)
    y = np.sin(x / 7.0)
    same = peak_decimate(x, y, 800.0)  # more than half a column a sample: drawn as is
    assert same[0] is x and same[1] is y
    dx, dy = peak_decimate(x, y, 100.0)
    assert len(dx) <= 2 * 100 + 10 + 1
    assert dy.max() == y.max() and dy.min() == y.min()
    assert (dx[-1], dy[-1]) == (x[-1], y[-1])  # the newest sample, always
    assert np.all(np.diff(dx) >= 0)
    y[500] = np.nan  # one missing sample stays a visible gap
    assert np.isnan(peak_decimate(x, y, 100.0)[1]).any()


@given(st.lists(st.floats(-1e6, 1e6), min_size=2, max_size=3000),
       st.floats(1.0, 500.0))
def test_peak_decimate_properties(values: list[float], columns: float) -> None:
    y = np.array(values)
    x = np.arange(len(y), dtype=float)
    dx, dy = peak_decimate(x, y, columns)
    assert dy.max() == y.max() and dy.min() == y.min()
    assert dx[-1] == x[-1] and dy[-1] == y[-1]
    assert np.all(np.diff(dx) >= 0) and len(dx) == len(dy)
    assert len(dx) <= max(len(x), 2 * columns + len(x) / columns + 2)
