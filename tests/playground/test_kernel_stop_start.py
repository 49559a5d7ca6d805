"""Stop while a fresh kernel is still starting (its first action waits for ``import torch``).

A SIGINT then would kill the kernel before its handler is in place (a traceback on the
terminal, reported as a death), or cut ``import torch`` in half, after which every import
fails ("duplicate registrations"): the kernel is killed and restarted instead, and says so.
A SIGINT that reaches ``import torch`` inside the user's own request waits for the import.
"""

from __future__ import annotations

import os

import pytest
from testkit import wait_until

from gpumon.playground.client.kernel_client import KernelClient, KernelExit
from gpumon.playground.data.actions import RunCode
from gpumon.playground.data.outcome import Outcome
from tests.playground.kernel_helpers import Inbox

posix_only = pytest.mark.skipif(os.name != "posix", reason="sends POSIX signals to the kernel")
# The import is what is stopped: every kernel here imports torch itself (seconds each).
pytestmark = [pytest.mark.usefixtures("kernels_import_torch"), pytest.mark.slow]



def _run(client: KernelClient, inbox: Inbox, source: str) -> Outcome:
    reply = inbox.wait("reply", client.request("run", RunCode(source)), timeout=120)
    assert isinstance(reply.data, Outcome)
    return reply.data


@posix_only
@pytest.mark.parametrize("said_hello", [False, True], ids=["before-hello", "importing-torch"])
def test_stop_while_the_kernel_starts_restarts_it_and_says_so(
        client: KernelClient, inbox: Inbox, capfd: pytest.CaptureFixture[str],
        said_hello: bool) -> None:
    """The window's start: ``load`` (the warm-up) with the user's code queued behind it."""
    load = client.request("load")
    rid = client.request("run", RunCode("import time\ntime.sleep(30)"))
    first = client.pid
    if said_hello:  # then it is importing torch for the load (seconds here)
        inbox.wait("hello", timeout=30)
    assert client.interrupt() == "restarted"
    ended = inbox.wait("restarted", timeout=10).data
    assert isinstance(ended, KernelExit) and ended.pid == first
    assert ended.reason == "killed during start-up" and ended.how() == "killed by SIGKILL"
    assert set(ended.lost_requests) == {load, rid}
    assert client.pid not in (None, first) and client.starts == 2
    out = _run(client, inbox, "torch.ones(2).sum()")  # the fresh kernel imports torch whole
    assert out.ok and out.preview == "tensor(2.)", out.error
    assert "Traceback" not in capfd.readouterr().err  # no KeyboardInterrupt on the terminal


@posix_only
def test_stop_during_the_import_inside_the_users_code_interrupts_after_it(
        client: KernelClient, inbox: Inbox) -> None:
    """No warm-up: the user's request itself imports torch. The Stop waits for the import,
    then interrupts the code; torch stays usable in the same kernel."""
    rid = client.request("run", RunCode("while True:\n    pass"))
    inbox.wait("hello", timeout=30)
    pid = client.pid
    # "started": the request runs, and imports torch first (about a second here)
    wait_until(lambda: client.running_request == rid, 30, "the request to start")
    assert client.interrupt(grace_s=60) == "signalled"
    inbox.wait("interrupted", rid, timeout=60)
    assert client.pid == pid and client.starts == 1
    out = _run(client, inbox, "torch.ones(3).sum()")
    assert out.ok and out.preview == "tensor(3.)", out.error


def test_stop_with_only_the_warm_up_running_is_idle(client: KernelClient,
                                                    inbox: Inbox) -> None:
    """Nothing of the user's is running: Stop does not throw the warm-up away."""
    rid = client.request("load")
    assert client.interrupt() == "idle"
    assert inbox.wait("reply", rid, timeout=120).data.ok
    assert client.starts == 1


@posix_only
def test_stop_right_after_the_request_is_sent_still_interrupts_it(
        client: KernelClient, inbox: Inbox) -> None:
    """Stop before the kernel has begun the request: a SIGINT then would land between
    requests and be ignored (and the kill 2 s later would lose the workspace). The client
    waits for the kernel's word that the request runs, then interrupts it."""
    assert _run(client, inbox, "x = torch.ones(3)").ok
    for _ in range(5):
        rid = client.request("run", RunCode("while True:\n    pass"))
        assert client.interrupt(grace_s=5) == "signalled"  # at once: not started yet
        inbox.wait("interrupted", rid, timeout=10)
    assert client.starts == 1
    assert _run(client, inbox, "x.sum()").preview == "tensor(3.)"  # the workspace is kept
