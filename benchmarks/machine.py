"""One line describing the machine a benchmark ran on, printed first by each script."""

from __future__ import annotations

import os
import sys
from pathlib import Path


def describe() -> str:
    """Cores, CPU model, Python and platform, e.g. '2 cores, AMD EPYC, Python 3.11.7, linux'."""
    model = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{os.cpu_count()} cores, {model}, Python {sys.version.split()[0]}, {sys.platform}"
