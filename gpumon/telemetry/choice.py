"""The source a terminal command reads: simulated GPUs, or NVML (imported only then, so
``--simulate`` works without nvidia-ml-py)."""

from __future__ import annotations

from gpumon.telemetry.model.types import Source


def make_source(simulate: int | None, seed: int = 0, gpm: bool = True) -> Source:
    """The simulated source when ``simulate`` is a GPU count, else the real NVML one;
    ``gpm=False`` (``--no-gpm``): no activity reading."""
    if simulate is not None:
        from gpumon.telemetry.sources.simulated import SimulatedSource

        return SimulatedSource(n_gpus=simulate, seed=seed, gpm=gpm)
    from gpumon.telemetry.nvml.source import NvmlSource

    return NvmlSource(gpm=gpm)
