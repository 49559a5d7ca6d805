"""The kernel boundary under faults, against a scripted fake kernel (fake_kernel.py).

For each way a kernel can break the protocol, the client must end that kernel with a reason,
answer the request it owed, never leave its reader waiting, start a fresh kernel on the
next request, and shut down in time with nothing left running. The window's side of the same
faults is in tests/ui/test_kernel_faults_window.py.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from gpumon.playground.client import kernel_client
from gpumon.playground.client.kernel_client import KernelClient, KernelExit
from gpumon.playground.data import wire
from tests.playground.kernel_helpers import Inbox, touch_line, wait_for_file

FAKE = Path(__file__).with_name("fake_kernel.py")

# scenario -> (KernelExit.reason, what its detail says, the exit status or None for a kill)
SCENARIOS = {
    "garbage": ("protocol", "could not be decoded", None),
    "truncated": ("protocol", "in the middle of a message", None),
    "huge": ("protocol", "larger than the 64 MiB", None),
    "closed": ("closed its output", "", None),
    "dies-mid-frame": ("died", "", 3),
    "fork-holds-pipes": ("died", "", 4),
}


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[list[str]]:
    """Every kernel the client starts is the fake, playing the scenario put in the list
    (the list is read at each start: a restart can play another one)."""
    scenario = ["silent"]
    monkeypatch.setattr(kernel_client, "kernel_command",
                        lambda python: [python, str(FAKE), scenario[0]])
    monkeypatch.setattr(wire, "FRAME_REST_S", 1.0)
    monkeypatch.setenv("FAKE_KERNEL_CHILD", str(tmp_path / "child.pid"))
    yield scenario


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_a_broken_kernel_is_ended_with_its_reason_and_the_next_request_starts_a_fresh_one(
        fake: list[str], scenario: str, tmp_path: Path) -> None:
    reason, detail, status = SCENARIOS[scenario]
    fake[0] = scenario
    inbox = Inbox()
    client = KernelClient(inbox)
    try:
        assert inbox.wait("reply", client.request("load"), timeout=20).data.ok
        first_pid = client.pid
        rid = client.request("run", None)  # returns before the broken kernel answers
        assert rid in client.pending
        ended: KernelExit = inbox.wait("died", timeout=10).data
        assert ended.reason == reason and detail in ended.detail
        assert rid in ended.lost_requests  # the request it owed is answered as lost
        if status is not None:
            assert ended.returncode == status
        else:
            assert ended.returncode is not None and ended.returncode < 0  # killed by us
        assert first_pid is not None and not psutil.pid_exists(first_pid) or \
            psutil.Process(first_pid).status() == psutil.STATUS_ZOMBIE
        if scenario == "fork-holds-pipes":  # its child held the pipes: killed with its group
            child = int((tmp_path / "child.pid").read_text())
            deadline = time.monotonic() + 2
            while psutil.pid_exists(child) and time.monotonic() < deadline:
                time.sleep(0.05)
            assert not psutil.pid_exists(child) or \
                psutil.Process(child).status() == psutil.STATUS_ZOMBIE
        fake[0] = "silent"
        client.request("load")
        assert inbox.wait("reply", timeout=20).data.ok  # a fresh kernel
        assert client.starts == 2 and client.pid not in (None, first_pid)
    finally:
        client.shutdown(timeout_s=1.0)  # (how long it takes: benchmarks/bench_kernel_stop.py)


def test_a_kernel_that_stops_answering_is_killed_by_stop_and_quit_never_waits(
        fake: list[str]) -> None:
    inbox = Inbox()
    client = KernelClient(inbox)
    assert inbox.wait("reply", client.request("load"), timeout=20).data.ok
    client.request("run", None)
    assert client.interrupt(grace_s=0.3) == "signalled"
    ended: KernelExit = inbox.wait("restarted", timeout=10).data
    assert ended.reason == "killed after interrupt"
    client.request("run", None)  # the fresh one is silent too: quit must not wait for it
    pid = client.pid
    # It never reads the request to exit: killed once the second is up, not waited for.
    assert client.shutdown(timeout_s=1.0) == -signal.SIGKILL
    assert pid is not None and not psutil.pid_exists(pid)


def test_a_request_over_the_frame_limit_is_refused_with_a_sentence_and_nothing_is_sent(
        fake: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(wire, "MAX_FRAME_BYTES", 1024)
    inbox = Inbox()
    client = KernelClient(inbox)
    try:
        assert inbox.wait("reply", client.request("load"), timeout=20).data.ok
        rid = client.request("run", "x" * 4096)
        refused = inbox.wait("refused", rid, timeout=5)
        assert "larger than the" in refused.data
        assert rid not in client.pending
        assert client.starts == 1
    finally:
        client.shutdown(timeout_s=1.0)


def test_a_megabyte_cell_sent_while_the_kernel_is_busy_returns_at_once(tmp_path: Path) -> None:
    """The real kernel, busy sleeping: the 1 MB request (over the pipe's 64 KiB buffer)
    goes through the writer thread, so the caller returns at once."""
    from gpumon.playground.data.actions import RunCode

    inbox = Inbox()
    client = KernelClient(inbox)
    try:
        mark = tmp_path / "sleeping"
        busy = client.request("run", RunCode(touch_line(mark) + "import time; time.sleep(1.5)"))
        wait_for_file(mark)  # the kernel sleeps: it reads no request for 1.5 s
        assert busy in client.pending
        big = client.request("run", RunCode("n = len('''" + "y" * 1_000_000 + "''')"))
        # back before the kernel has read it: the sleep it reads nothing in is still owed
        # (how long the call takes: benchmarks/bench_kernel.py)
        assert busy in client.pending and big in client.pending
        reply = inbox.wait("reply", big, timeout=60)
        assert reply.data.ok, reply.data.error
    finally:
        client.shutdown(timeout_s=1.0)


def test_the_fake_kernel_runs_in_its_own_session(fake: list[str]) -> None:
    if os.name != "posix":
        pytest.skip("process groups are POSIX")
    inbox = Inbox()
    client = KernelClient(inbox)
    try:
        assert client.start()
        pid = client.pid
        assert pid is not None and os.getpgid(pid) == pid != os.getpgid(0)
    finally:
        client.shutdown(timeout_s=1.0)


if sys.platform == "win32":  # pragma: no cover
    pytestmark = pytest.mark.skip("the fake kernel forks")


def test_a_lost_workspace_card_names_twenty_names_and_counts_the_rest() -> None:
    names = tuple(f"v{i}" for i in range(20))
    text = KernelExit(1, -9, names, (), lost_total=200_000).lost_text()
    assert "v0, v1" in text and "v19" in text and "199,980 more" in text
    assert len(text) < 300
    assert KernelExit(1, -9, ("x", "y")).lost_text() == "The workspace (x, y) is gone."
    assert "nothing was lost" in KernelExit(1, -9, (), lost_total=0).lost_text()


def test_the_windows_job_is_only_for_windows() -> None:
    from gpumon.playground.client.job import put_in_job

    proc = __import__("subprocess").Popen([sys.executable, "-c", "pass"])
    try:
        assert put_in_job(proc) is (sys.platform == "win32")
    finally:
        proc.wait()
