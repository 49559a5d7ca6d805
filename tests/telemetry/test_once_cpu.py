"""``gpumon --once`` shows a process's host CPU % (issue 54, item 9): CPU % is a rate, so the
snapshot printed is the second reading, as nvitop -1 does; on the fake NVML through the real
binding, with a real busy process and an idle one listed on the GPU."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator

import pytest
from fakenvml import FakeNvml

from gpumon.cli.main import main
from gpumon.units import MIB

SPIN = "import time\nwhile True: pass"
# The sleeper says so once its interpreter has started: started at once, its own start-up (a
# twentieth of a second of CPU) fell in the half-second sample and read 10 % (CI, once).
IDLE = "import time\nprint('asleep', flush=True)\ntime.sleep(120)"


@pytest.fixture
def children() -> Iterator[list[subprocess.Popen[bytes]]]:
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for child in started:
        child.kill()
        child.wait(10)
        if child.stdout is not None:
            child.stdout.close()


def _listed(fake: FakeNvml, started: list[subprocess.Popen[bytes]]) -> tuple[int, int]:
    busy = subprocess.Popen([sys.executable, "-c", SPIN])
    idle = subprocess.Popen([sys.executable, "-c", IDLE], stdout=subprocess.PIPE)
    started += [busy, idle]
    assert idle.stdout is not None and idle.stdout.readline() == b"asleep\n"
    fake.add_process(0, busy.pid, 300 * MIB)
    fake.add_process(0, idle.pid, 200 * MIB)
    return busy.pid, idle.pid


def test_once_json_has_each_process_cpu_percent(
        fake_nvml: FakeNvml, children: list[subprocess.Popen[bytes]],
        capsys: pytest.CaptureFixture[str]) -> None:
    busy, idle = _listed(fake_nvml, children)
    assert main(["--once", "--json"]) == 0
    procs = {p["pid"]: p for p in json.loads(capsys.readouterr().out)["processes"]}
    # A spinning loop uses a core (less on a loaded machine, never none); a sleeper none.
    assert procs[busy]["cpu_pct"] is not None and procs[busy]["cpu_pct"] > 10.0, procs[busy]
    assert procs[idle]["cpu_pct"] is not None and procs[idle]["cpu_pct"] < 10.0, procs[idle]


def test_once_table_shows_cpu_percent_not_na(
        fake_nvml: FakeNvml, children: list[subprocess.Popen[bytes]],
        capsys: pytest.CaptureFixture[str]) -> None:
    busy, idle = _listed(fake_nvml, children)
    assert main(["--once"]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines()
            if f" {busy} " in line or f" {idle} " in line]
    assert len(rows) == 2, rows
    for row in rows:  # the CPU column: the number before "NNN MiB"
        cpu = row.split("MiB")[0].split()[-2]
        assert cpu.endswith("%") and cpu != "N/A", row
