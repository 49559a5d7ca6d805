"""The simulated GPUs' randomness, a pure function of the seed, the GPU and the time: the
same ``--simulate N --seed S`` shows the same curves on every run and every platform (the
tests and the screenshots rely on it), and any reading can be computed without the ones
before it.
"""

from __future__ import annotations


def mix(*parts: int) -> int:
    """A 64-bit hash of integers (splitmix64 steps); stable across runs and platforms."""
    h = 0x9E3779B97F4A7C15
    for p in parts:
        h = (h ^ (p & 0xFFFFFFFFFFFFFFFF)) & 0xFFFFFFFFFFFFFFFF
        h = (h + 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
        h = ((h ^ (h >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
        h = ((h ^ (h >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
        h ^= h >> 31
    return h


def unit(*parts: int) -> float:
    """A hash mapped to [0, 1)."""
    return (mix(*parts) >> 11) / float(1 << 53)


def smoothstep(x: float) -> float:
    x = min(max(x, 0.0), 1.0)
    return x * x * (3.0 - 2.0 * x)


__all__ = ["mix", "smoothstep", "unit"]
