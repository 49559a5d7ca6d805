"""Peak decimation of a plotted series: what a curve needs to look like all its samples.

Qt-free, so it is tested on plain arrays; the GPU panels call it before ``setData``.
"""

from __future__ import annotations

import numpy as np


def peak_decimate(x: np.ndarray, y: np.ndarray, columns: float
                  ) -> tuple[np.ndarray, np.ndarray]:
    """At most about two points per pixel column that draw what all of ``x, y`` would: for
    each block of samples that shares a column, its min and its max at the block's middle.
    Blocks are counted back from the newest sample, which is always kept as the last point
    (pyqtgraph's "peak" mode drops up to a block's worth of the newest samples). A NaN in a
    block makes the block a gap, so a short gap in the data stays visible."""
    n = len(x)
    ds = int(n // columns) if columns >= 1 else 1
    if ds < 2:
        return x, y
    blocks = (n - 1) // ds  # the newest sample stays out of the blocks, and is appended
    start = n - 1 - blocks * ds
    xb = x[start:n - 1].reshape(blocks, ds)
    yb = y[start:n - 1].reshape(blocks, ds)
    xs = np.repeat(xb[:, ds // 2], 2)
    ys = np.empty(2 * blocks)
    ys[0::2] = yb.min(axis=1)  # NaN in a block: a NaN here, and a gap in the curve
    ys[1::2] = yb.max(axis=1)
    return (np.concatenate((x[:start], xs, x[-1:])), np.concatenate((y[:start], ys, y[-1:])))


def anchored_peak_decimate(t: np.ndarray, y: np.ndarray, block_s: float
                           ) -> tuple[np.ndarray, np.ndarray]:
    """Like :func:`peak_decimate`, but the blocks are fixed spans of absolute time,
    ``[k * block_s, (k + 1) * block_s)``, not counts of samples back from the newest. A block
    is then decimated the same way on every tick until it scrolls out, so a scrolling curve's
    old columns keep their shape (counted from the newest sample, every block's min and max
    moved with each new sample, and the whole curve shimmered). The newest
    sample is always the last point; a NaN in a block makes the block a gap. Drawn as is
    when the samples lie at least half a block apart on average (or ``block_s`` <= 0)."""
    n = len(t)
    if n < 3 or not block_s > 0 or 2.0 * (t[-1] - t[0]) / (n - 1) >= block_s:
        return t, y
    bins = np.floor(t[:-1] / block_s)
    starts = np.concatenate(([0], np.flatnonzero(np.diff(bins)) + 1))
    ends = np.concatenate((starts[1:], [n - 1]))
    xs = np.repeat(t[(starts + ends - 1) // 2], 2)
    ys = np.empty(2 * len(starts))
    ys[0::2] = np.minimum.reduceat(y[:-1], starts)  # NaN in a block: a gap
    ys[1::2] = np.maximum.reduceat(y[:-1], starts)
    return np.concatenate((xs, t[-1:])), np.concatenate((ys, y[-1:]))
