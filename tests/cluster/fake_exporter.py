"""Run ``gpumon exporter`` in this process on the fake NVML library (a test helper).

Usage: python fake_exporter.py LIBRARY GPUS [exporter arguments...]

FAKE_XIDS=gpu:code:after_ms,... in the environment raises those XID errors (after the start);
FAKE_VALUES=gpu:name=value,... sets those values (names as FakeNvml.set_value's).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "telemetry"))

from fakenvml import use_fake_nvml

from gpumon.cli import exporter as exporter_cli

if __name__ == "__main__":
    with use_fake_nvml(Path(sys.argv[1])) as fake:
        fake.set_gpu_count(int(sys.argv[2]))
        fake.add_process(0, 4242, 512 * 1024**2)
        fake.add_process(1, 4343, 128 * 1024**2, graphics=True)  # a display server
        fake.add_process(1, 4444, 64 * 1024**2)  # and a program that both computes and draws
        fake.add_process(1, 4444, 64 * 1024**2, graphics=True)
        for item in filter(None, os.environ.get("FAKE_VALUES", "").split(",")):
            where, value = item.split("=")
            gpu, key = where.split(":")
            fake.set_value(int(gpu), key, int(value))
        for item in filter(None, os.environ.get("FAKE_XIDS", "").split(",")):
            gpu, code, after_ms = (int(part) for part in item.split(":"))
            fake.add_xid(gpu, code, after_ms)
        sys.exit(exporter_cli.main(sys.argv[3:]))
