"""A process's container or job, live: a child moved into a Slurm-shaped cgroup (v1 ``pids``
hierarchy) shows as ``slurm:4242`` in ``--json``, read through the fake driver and /proc.

Making a cgroup needs a writable v1 hierarchy (root on a v1 or hybrid host); elsewhere the
test is skipped and the parser's tests on published texts stand alone.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from fakenvml import FakeNvml

from gpumon.cli.main import main

PIDS = Path("/sys/fs/cgroup/pids")


@pytest.fixture
def child_in_a_slurm_job() -> Iterator[int]:
    top = PIDS / f"gpumon-test-{os.getpid()}"
    job = top / "slurm" / "uid_1000" / "job_4242"
    try:
        job.mkdir(parents=True)
    except OSError as err:
        pytest.skip(f"cannot make a cgroup here: {err}")
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        (job / "cgroup.procs").write_text(str(child.pid))
        yield child.pid
    finally:
        child.kill()
        child.wait(timeout=5)
        for group in (job, job.parent, job.parent.parent, top):
            group.rmdir()


def test_json_names_the_job(fake_nvml: FakeNvml, child_in_a_slurm_job: int,
                            capfd: pytest.CaptureFixture[str]) -> None:
    fake_nvml.add_process(0, child_in_a_slurm_job, 1 << 30)
    fake_nvml.add_process(0, os.getpid(), 1 << 20)
    assert main(["--once", "--json"]) == 0
    procs = {p["pid"]: p for p in json.loads(capfd.readouterr().out)["processes"]}
    assert procs[child_in_a_slurm_job]["container"] == "slurm:4242"
    assert "container" in procs[os.getpid()]  # None or this process's own group
