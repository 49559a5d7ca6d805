"""The source gpumon reads, by its options: simulated GPUs (``--simulate N``), or NVML. The
terminal commands, the exporter and the window each choose it here. NVML's binding is imported
only when the source is made, so ``--simulate`` works without nvidia-ml-py, and a missing
binding is an ImportError of the call that makes the source, which each of them turns into a
sentence."""

from __future__ import annotations

from collections.abc import Callable

from gpumon.telemetry.model.types import Source

DEMO_HISTORY_S = 60.0  # the window's simulated GPUs open with a minute already drawn


def source_factory(simulate: int | None, seed: int = 0, gpm: bool = True,
                   history_s: float = 0.0) -> Callable[[], Source]:
    """What makes the source: the simulated one when ``simulate`` is a GPU count, else the
    real NVML one; ``gpm=False`` (``--no-gpm``): no activity reading; ``history_s``: the
    simulated GPUs' seconds before the start that their first reading brings (the window's
    demo opens on graphs already drawn)."""
    def make() -> Source:
        if simulate is not None:
            from gpumon.telemetry.sources.simulated import SimulatedSource

            return SimulatedSource(n_gpus=simulate, seed=seed, gpm=gpm, history_s=history_s)
        from gpumon.telemetry.nvml.source import NvmlSource

        return NvmlSource(gpm=gpm)

    return make


def make_source(simulate: int | None, seed: int = 0, gpm: bool = True) -> Source:
    """The source ``source_factory`` makes, made now."""
    return source_factory(simulate, seed, gpm)()
