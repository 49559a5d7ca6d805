"""What the tests of the playground kernel over ssh share (``test_ssh_kernel.py``,
``test_ssh_kernel_kept.py``): a lab's Remote, a request run to its answer, and the process
table's word on whether a pid still runs."""

from __future__ import annotations

import time
from pathlib import Path

from sshd import Lab

from gpumon.playground.client.kernel_client import KernelClient
from gpumon.playground.client.ssh_kernel import Remote
from gpumon.playground.data.actions import RunCode
from gpumon.ssh.command import SshOptions
from gpumon.ssh.target import parse_target
from tests.playground.kernel_helpers import Inbox

START_S = 120.0  # a login, the remote's imports, torch's import, on a loaded machine


def remote(lab: Lab, command: Path | None = None, alive: int = 5) -> Remote:
    return Remote(parse_target("lab1"), SshOptions(
        config_file=str(lab.config), remote_command=str(command or lab.gpumon),
        alive_interval_s=alive, alive_count=2))


def running(pid: int) -> bool:
    """True while ``pid`` runs (a zombie has ended)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[-1].split()[0] not in ("Z", "X")


def wait_gone(pids: list[int], timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while any(running(p) for p in pids):
        if time.monotonic() > deadline:
            raise AssertionError(f"still running after {timeout_s:g} s: "
                                 f"{[p for p in pids if running(p)]}")
        time.sleep(0.05)


def run(client: KernelClient, inbox: Inbox, code: str) -> str:
    rid = client.request("run", RunCode(code))
    outcome = inbox.wait("reply", rid, timeout=START_S).data
    assert outcome.ok, outcome.error
    return str(outcome.preview)
