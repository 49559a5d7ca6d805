"""peak_decimate on plain arrays: the envelope, the newest sample and gaps survive."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

# The window's graphs need numpy; a GPU machine with torch and NVML only may lack it.
np = pytest.importorskip("numpy", reason="numpy is not installed (the window's graphs need it)")

from gpumon.telemetry.history.decimate import anchored_peak_decimate, peak_decimate  # noqa: E402


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


@given(st.lists(st.floats(-1e6, 1e6), min_size=2, max_size=3000),
       st.floats(0.5, 50.0), st.floats(0.0, 1e9))
def test_anchored_peak_decimate_properties(values: list[float], block_s: float,
                                           start: float) -> None:
    y = np.array(values)
    t = start + np.arange(len(y), dtype=float)
    dt, dy = anchored_peak_decimate(t, y, block_s)
    assert dy.max() == y.max() and dy.min() == y.min()  # the envelope
    assert dt[-1] == t[-1] and dy[-1] == y[-1]  # the newest sample last
    assert np.all(np.diff(dt) >= 0) and len(dt) == len(dy)
    assert len(dt) <= max(len(t), 2 * (len(t) / block_s + 2) + 1)


def test_anchored_blocks_stay_put_while_the_window_slides() -> None:
    t = 1_700_000_000.0 + np.arange(2000.0)
    y = np.sin(t / 3.0)
    a = anchored_peak_decimate(t[:1993], y[:1993], 10.0)
    b = anchored_peak_decimate(t[7:], y[7:], 10.0)  # seven ticks later
    # The blocks both hold whole are decimated alike: a scrolling curve's old columns keep
    # their shape.
    both = (t[20], t[1980])
    ka, kb = (a[0] >= both[0]) & (a[0] < both[1]), (b[0] >= both[0]) & (b[0] < both[1])
    assert np.array_equal(a[0][ka], b[0][kb]) and np.array_equal(a[1][ka], b[1][kb])
    # Counted back from the newest sample, every block moved with the seven new samples.
    p, q = peak_decimate(t[:1993], y[:1993], 200.0), peak_decimate(t[7:], y[7:], 200.0)
    kp, kq = (p[0] >= both[0]) & (p[0] < both[1]), (q[0] >= both[0]) & (q[0] < both[1])
    assert not np.array_equal(p[0][kp], q[0][kq])
