"""One process's GPU memory as NVML counts it (nvidia-smi's process table), on the GPU with a
given UUID, in an NVML session of its own (session.py).

For the lesson's memory step, which prints it beside torch's two counters: the process figure
is about the CUDA context plus what torch reserved. NVML never creates a CUDA context.
"""

from __future__ import annotations

from gpumon.telemetry.nvml.readers import read_processes
from gpumon.telemetry.nvml.session import nvml_session


def process_memory_by_uuid(uuid: str, pid: int) -> int | None:
    """Bytes of GPU memory NVML counts for process ``pid`` on the GPU whose UUID is ``uuid``
    (any spelling: device_ids.normalize_uuid); None when NVML cannot say: no NVML, no GPU with
    that UUID, ``pid`` not in its lists (in a container whose PIDs are not the host's, NVML
    lists the host's), or no figure for it. A PID in both lists counts once, its larger figure,
    as gpumon's process table does (the table's own reader, readers.read_processes)."""
    with nvml_session(uuid) as gpu:
        if gpu is None:
            return None
        found, _ = read_processes(gpu, gpu.handle)
        return found[pid][1] if pid in found else None
