"""A fake ``nvidia-smi`` for a remote machine without gpumon: answers ``--query-gpu=...
--format=csv,noheader,nounits [-lms MS]`` and ``--query-compute-apps=...`` in the real tool's
CSV (one line a GPU, fields in the order asked, ``[N/A]`` where not supported), for two GPUs
whose values are fixed and known (``GPUS`` and ``APPS``). Copied to the remote PATH as
``nvidia-smi`` with this interpreter in its first line."""

import sys
import time

GPUS = [
    {"index": "0", "uuid": "GPU-11111111-2222-3333-4444-555555555555",
     "name": "NVIDIA H100 80GB HBM3", "pci.bus_id": "00000000:18:00.0",
     "driver_version": "550.54.15", "pstate": "P0", "persistence_mode": "Enabled",
     "compute_mode": "Default", "display_active": "Disabled", "memory.total": "81559",
     "memory.used": "1024", "memory.free": "80535", "utilization.gpu": "37",
     "utilization.memory": "5", "temperature.gpu": "41", "power.draw": "112.35",
     "power.limit": "700.00", "fan.speed": "[N/A]", "clocks.sm": "1980", "clocks.mem": "2619"},
    {"index": "1", "uuid": "GPU-66666666-7777-8888-9999-000000000000",
     "name": "NVIDIA H100 80GB HBM3", "pci.bus_id": "00000000:2A:00.0",
     "driver_version": "550.54.15", "pstate": "P8", "persistence_mode": "Enabled",
     "compute_mode": "Exclusive_Process", "display_active": "Disabled",
     "memory.total": "81559", "memory.used": "0", "memory.free": "81559",
     "utilization.gpu": "0", "utilization.memory": "0", "temperature.gpu": "30",
     "power.draw": "68.10", "power.limit": "700.00", "fan.speed": "[N/A]",
     "clocks.sm": "345", "clocks.mem": "2619"},
]
APPS = [{"gpu_uuid": GPUS[0]["uuid"], "pid": "4242", "process_name": "/opt/run, v2/python",
         "used_memory": "1018"}]


def main(argv: list[str]) -> int:
    query = next((a for a in argv if a.startswith("--query-")), None)
    if query is None:
        print("fake nvidia-smi: only --query-gpu and --query-compute-apps")
        return 0
    kind, _, fields = query[len("--query-"):].partition("=")
    rows = GPUS if kind == "gpu" else APPS
    period = None
    if "-lms" in argv:
        period = int(argv[argv.index("-lms") + 1]) / 1000
    while True:
        for row in rows:
            print(", ".join(row[f] for f in fields.split(",")), flush=True)
        if period is None:
            return 0
        time.sleep(period)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
