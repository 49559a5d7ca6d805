"""The playground kernel on another machine, kept (issue 50): what it answers is what the
local kernel answers, a Stop reaches it and keeps it with its workspace, big requests pass the
relay whole. The lab (a real sshd on 127.0.0.1) and the remote kernel are those of
``test_ssh_kernel.py``, which has the tests of kernels that end.

These tests share one remote kernel: each start is a login, the remote's interpreter and
torch's import, about 3 s of a core, and none of these tests is about a start. Each test begins
on that kernel idle (one that a failed test left running code is ended, and the next test gets
a fresh one), notes its ssh pid and its count of starts (``Kept``), and checks "kept" against
them: a Stop that ended the kernel changes both, and a value set on a kernel that was since
replaced is gone, whichever test set it.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from ssh_kernels import START_S, remote, run, wait_gone
from sshd import Lab, remote_streams
from testkit import wait_until

from gpumon.playground.client.kernel_client import KernelClient
from gpumon.playground.data.actions import CreateTensor, RunCode
from tests.playground.kernel_helpers import Inbox, touch_line, wait_for_file

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux's /proc"),
              pytest.mark.xdist_group("test_ssh_kernel_kept")]  # its module fixture: made once


@dataclass(frozen=True)
class Kept:
    """The module's kernel client and its messages, and how many kernels it had started when
    the test began."""

    client: KernelClient
    inbox: Inbox
    starts: int


@pytest.fixture(scope="module")
def clients(module_lab: Lab) -> Iterator[list[tuple[KernelClient, Inbox]]]:
    """The module's kernel clients: the last one is in use. Each is shut down at the end."""
    made: list[tuple[KernelClient, Inbox]] = []
    yield made
    for client, _ in made:
        client.shutdown(timeout_s=2.0)
    wait_gone(remote_streams(module_lab), 10.0)


@pytest.fixture
def kept(clients: list[tuple[KernelClient, Inbox]], module_lab: Lab) -> Kept:
    """The module's remote kernel, idle: started by the first test's first request."""
    if clients and clients[-1][0].pending:  # a failed test left code running in it
        clients.pop()[0].shutdown(timeout_s=2.0)
    if not clients:
        inbox = Inbox()
        clients.append((KernelClient(inbox, remote=remote(module_lab)), inbox))
    client, inbox = clients[-1]
    return Kept(client, inbox, client.starts)


def test_an_action_and_a_typed_line_answer_as_the_local_kernel(
        kept: Kept) -> None:
    ssh_client, inbox = kept.client, kept.inbox
    local_inbox = Inbox()
    local = KernelClient(local_inbox, in_band=True)
    try:
        answers = []
        for client, box in ((ssh_client, inbox), (local, local_inbox)):
            rid = client.request("run", CreateTensor("x", "[1.0, 2.0, 3.0]"))
            made = box.wait("reply", rid, timeout=START_S).data
            line = run(client, box, "y = x * 2\ny.sum().item()")
            rid = client.request("run", RunCode("x @ torch.ones(2)"))
            error = box.wait("reply", rid, timeout=60).data.error
            rid = client.request("devices")
            devices = [d.name for d in box.wait("reply", rid, timeout=60).data]
            answers.append((made.ok, made.preview, line, error.type_name, error.message,
                            devices))
        assert answers[0] == answers[1]
        assert answers[0][2] == "12.0"
        assert answers[0][4].startswith("inconsistent tensor size")  # torch's own words
    finally:
        local.shutdown(timeout_s=1.0)


@pytest.mark.parametrize("code", ["import time\ntime.sleep(100)", "n = 0\nwhile True:\n    n += 1"],
                         ids=["sleep", "python-loop"])
def test_stop_reaches_a_remote_kernel_in_band_and_keeps_it(
        kept: Kept, tmp_path: Path, code: str) -> None:
    ssh_client, inbox = kept.client, kept.inbox
    run(ssh_client, inbox, "x = 41")
    pid = ssh_client.pid
    mark = tmp_path / "running"  # the remote is this machine: it can touch a file here
    rid = ssh_client.request("run", RunCode(touch_line(mark) + code))
    wait_for_file(mark)
    assert ssh_client.interrupt(grace_s=30.0) == "signalled"
    inbox.wait("interrupted", rid, timeout=20.0)  # well before the 30 s kill
    assert ssh_client.pid == pid  # the same ssh link and kernel, its workspace kept
    assert run(ssh_client, inbox, "x + 1") == "42"


@pytest.mark.parametrize("code", ["import re\nre.match(r'(a*)*b', 'a' * 40)",
                                  "x = 7 ** (10 ** 9)"], ids=["regex", "big-power"])
def test_stop_during_one_long_c_call_that_checks_for_signals_keeps_the_kernel(
        kept: Kept, tmp_path: Path, code: str) -> None:
    """A regex backtracking and a power of a big integer hold the GIL in one C call, where
    no thread of the kernel reads a frame, but they look for signals: the remote watchdog,
    which relays the window's bytes, turns the Stop into a SIGINT, as the local window's
    Stop is, and the kernel and its workspace are kept (ended with the link before)."""
    ssh_client, inbox = kept.client, kept.inbox
    run(ssh_client, inbox, "w = 41")
    pid = ssh_client.pid
    mark = tmp_path / "running"
    rid = ssh_client.request("run", RunCode(touch_line(mark) + code))
    wait_for_file(mark)
    assert ssh_client.interrupt(grace_s=30.0) == "signalled"
    inbox.wait("interrupted", rid, timeout=20.0)  # well before the 30 s kill
    assert ssh_client.pid == pid and ssh_client.starts == kept.starts
    assert run(ssh_client, inbox, "w + 1") == "42"


def test_stop_reaches_code_that_holds_the_gil_from_its_first_line(
        kept: Kept) -> None:
    """Code whose first line is one long C call took the GIL before the kernel's writer
    thread could send "started", and the window, which stops a request only once it has
    started, never sent the Stop: the kernel writes "started" before the code runs."""
    ssh_client, inbox = kept.client, kept.inbox
    run(ssh_client, inbox, "w = 41")
    rid = ssh_client.request("run", RunCode("x = 7 ** (10 ** 9)"))
    wait_until(lambda: ssh_client.running_request == rid, 20.0,
               "the window to hear the code started")
    assert ssh_client.interrupt(grace_s=30.0) == "signalled"
    inbox.wait("interrupted", rid, timeout=20.0)
    assert ssh_client.starts == kept.starts and run(ssh_client, inbox, "w + 1") == "42"


def test_big_requests_pass_the_relay_whole_and_in_order(
        kept: Kept) -> None:
    """The remote watchdog passes the window's bytes on frame by frame (it reads each
    frame's header for a Stop): requests of several MB, sent back to back, arrive whole and
    in order, the second while the first still runs."""
    ssh_client, inbox = kept.client, kept.inbox
    first = ssh_client.request("run", RunCode("import time\ntime.sleep(0.5)\nlen('"
                                              + "a" * 3_000_000 + "')"))
    second = ssh_client.request("run", RunCode("len('" + "b" * 5_000_001 + "')"))
    answer = inbox.wait("reply", first, timeout=START_S).data  # torch is imported first
    assert answer.ok, answer.error
    assert str(answer.preview) == "3000000"
    assert str(inbox.wait("reply", second, timeout=60).data.preview) == "5000001"
