"""Memory by process from a Prometheus server: gpumon's exporter publishes each process's
GPU memory, so the bands name the processes; dcgm-exporter does not, so there is only the
used memory, said to be unattributed."""

from __future__ import annotations

import pytest

np = pytest.importorskip("numpy", reason="numpy is not installed (the window's History needs it)")

from scripted_prometheus import scripted  # noqa: E402

from gpumon.telemetry.cluster.prometheus import PrometheusSource  # noqa: E402
from gpumon.telemetry.history.memory_bands import REMAINDER, memory_bands  # noqa: E402
from gpumon.telemetry.history.store import History  # noqa: E402

MIB = 1024**2
GPU = {"Hostname": "node1", "gpu": "0", "UUID": "GPU-1", "instance": "node1:9835"}


def bands_after_two_ticks(series: dict[str, list[tuple[dict[str, str], float]]]):
    history = History(capacity=10)
    with scripted(series) as server:
        source = PrometheusSource(server.url)
        for _ in range(2):  # the first tick finds the machine, the second asks its processes
            history.append(source.sample())
        source.close()
    return memory_bands(history.process_memory(0))


def test_gpumon_exporters_process_memory_makes_named_bands() -> None:
    process = {**GPU, "pid": "4242", "command": "python train.py", "user": "ana"}
    bands = bands_after_two_ticks({
        "DCGM_FI_DEV_FB_USED": [(GPU, 3000.0)],  # MiB, as dcgm-exporter and gpumon write it
        "gpumon_process_gpu_memory_bytes": [(process, 2000.0 * MIB)],
        "up": [({"instance": "node1:9835"}, 1.0)]})
    assert bands.attributed
    (job, rest) = bands.bands
    assert job.pid == 4242 and job.name == "python" and job.values[-1] == 2000 * MIB
    assert rest.key == REMAINDER and rest.values[-1] == 1000 * MIB


def test_dcgm_exporter_alone_gives_only_unattributed_memory() -> None:
    bands = bands_after_two_ticks({"DCGM_FI_DEV_FB_USED": [(GPU, 3000.0)],
                                   "up": [({"instance": "node1:9835"}, 1.0)]})
    assert not bands.attributed
    assert [b.key for b in bands.bands] == [REMAINDER] and bands.bands[0].values[-1] == 3000 * MIB
