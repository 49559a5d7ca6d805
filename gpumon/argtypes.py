"""Argument types the command lines share (the window's, ``gpumon exporter``'s)."""

from __future__ import annotations

import argparse

MAX_SIMULATED_GPUS = 16


def gpu_count(text: str) -> int:
    """A number of simulated GPUs, 1 to MAX_SIMULATED_GPUS; argparse's error otherwise."""
    try:
        n = int(text)
    except ValueError:
        n = 0
    if not 1 <= n <= MAX_SIMULATED_GPUS:
        raise argparse.ArgumentTypeError(
            f"must be a whole number of GPUs from 1 to {MAX_SIMULATED_GPUS}, got {text!r}")
    return n
