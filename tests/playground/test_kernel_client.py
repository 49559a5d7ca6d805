"""The playground kernel in its own process: answers, interrupts, deaths, restarts, quit."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import pytest

from gpumon.playground.client.interrupt import creation_flags, interrupt_path
from gpumon.playground.client.kernel_client import KernelClient, KernelExit
from gpumon.playground.data import actions as act
from gpumon.playground.data.actions import RunCode
from gpumon.playground.data.outcome import LoadStatus, Outcome
from tests.playground.kernel_helpers import Inbox, touch_line, wait_for_file

posix_only = pytest.mark.skipif(os.name != "posix", reason="sends POSIX signals to the kernel")



def _run(client: KernelClient, inbox: Inbox, action: act.Action) -> Outcome:
    rid = client.request("run", action)
    reply = inbox.wait("reply", rid)
    assert isinstance(reply.data, Outcome)
    return reply.data


def test_kernel_is_another_process_and_answers_in_order(client: KernelClient,
                                                        inbox: Inbox) -> None:
    first = client.request("load")
    second = client.request("run", act.CreateTensor("x", "[1, 2, 3]"))
    hello = inbox.wait("hello")
    assert hello.data == client.pid and hello.data != os.getpid()
    status = inbox.wait("reply", first).data
    assert isinstance(status, LoadStatus) and status.ok
    outcome = inbox.wait("reply", second).data
    assert outcome.ok and outcome.code == "x = torch.tensor([1, 2, 3])"
    assert [e.name for e in inbox.wait("workspace").data] == ["x"]
    assert client.pending == ()


def test_torch_errors_come_back_as_outcomes(client: KernelClient, inbox: Inbox) -> None:
    outcome = _run(client, inbox, RunCode("torch.ones(2) @ torch.ones(3)"))
    assert not outcome.ok and outcome.error is not None
    assert outcome.error.type_name == "RuntimeError" and outcome.error.by_torch


@pytest.mark.internal_error
def test_a_bug_of_ours_is_an_internal_error_with_traceback(client: KernelClient,
                                                          inbox: Inbox) -> None:
    rid = client.request("no-such-request")
    message = inbox.wait("internal_error", rid)
    assert "Traceback" in message.data and "unknown kernel request" in message.data
    assert _run(client, inbox, RunCode("1 + 1")).preview == "2"  # the kernel goes on


@pytest.mark.slow
@posix_only
def test_interrupt_stops_a_running_loop_and_keeps_the_workspace(
        client: KernelClient, inbox: Inbox, tmp_path: Path) -> None:
    _run(client, inbox, RunCode("x = torch.ones(3)"))
    pid = client.pid
    mark = tmp_path / "looping"
    rid = client.request("run", RunCode(touch_line(mark) + "n = 0\nwhile True:\n    n += 1"))
    wait_for_file(mark)  # the loop runs now
    assert client.interrupt(grace_s=5.0) == "signalled"
    inbox.wait("interrupted", rid, timeout=5.0)
    assert client.pid == pid  # the same kernel: nothing was lost
    assert _run(client, inbox, RunCode("x.sum()")).preview == "tensor(3.)"


@pytest.mark.slow
@posix_only
def test_code_that_ignores_the_interrupt_is_killed_and_restarted(
        client: KernelClient, inbox: Inbox, tmp_path: Path) -> None:
    _run(client, inbox, RunCode("x = torch.ones(3)"))
    pid = client.pid
    mark = tmp_path / "ignoring"
    rid = client.request("run", RunCode(
        "import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\n"
        + touch_line(mark) + "time.sleep(60)"))
    wait_for_file(mark)  # SIGINT is ignored from now on
    assert client.interrupt(grace_s=1.0) == "signalled"
    ended = inbox.wait("restarted", timeout=10.0).data
    assert isinstance(ended, KernelExit)
    assert ended.reason == "killed after interrupt" and ended.how() == "killed by SIGKILL"
    assert ended.lost_names == ("x",) and ended.lost_requests == (rid,)
    assert "(x) is gone" in ended.lost_text()
    assert client.pid is not None and client.pid != pid  # a fresh kernel is already there
    assert not _run(client, inbox, RunCode("x")).ok  # its workspace is empty


@pytest.mark.slow
@posix_only
def test_sigkill_during_an_action_is_reported_and_the_next_action_starts_afresh(
        client: KernelClient, inbox: Inbox, tmp_path: Path) -> None:
    _run(client, inbox, RunCode("a = torch.zeros(4)"))
    pid = client.pid
    assert pid is not None
    mark = tmp_path / "sleeping"
    rid = client.request("run", RunCode(touch_line(mark) + "import time\ntime.sleep(10)"))
    wait_for_file(mark)
    os.kill(pid, signal.SIGKILL)
    died = inbox.wait("died", timeout=10.0).data
    assert died.returncode == -signal.SIGKILL and died.how() == "killed by SIGKILL"
    assert died.lost_requests == (rid,) and died.lost_names == ("a",)
    outcome = _run(client, inbox, RunCode("torch.ones(2).sum()"))
    assert outcome.ok and client.pid not in (None, pid) and client.starts == 2


def test_os_exit_is_reported_with_its_exit_code(client: KernelClient, inbox: Inbox) -> None:
    client.request("run", RunCode("import os\nos._exit(3)"))
    died = inbox.wait("died", timeout=20.0).data
    assert died.returncode == 3 and died.how() == "exited with code 3"
    assert died.lost_text() == "The workspace was empty, so nothing was lost."


def test_shutdown_during_a_long_operation_is_quick_and_leaves_no_process(
        client: KernelClient, inbox: Inbox, tmp_path: Path) -> None:
    mark = tmp_path / "sleeping"
    client.request("run", RunCode(touch_line(mark) + "import time\ntime.sleep(10)"))
    inbox.wait("hello")
    wait_for_file(mark)
    proc = client.process
    assert proc is not None
    assert client.shutdown(timeout_s=1.0) == -signal.SIGKILL  # killed once the second is up
    assert proc.poll() is not None
    assert client.request("ping") == -1  # shut down for good
    assert "died" not in [m.kind for m in inbox.seen]


def test_shutdown_when_idle_exits_zero(client: KernelClient, inbox: Inbox) -> None:
    client.request("ping")
    inbox.wait("reply")
    assert client.shutdown(timeout_s=5.0) == 0


@pytest.mark.parametrize(("platform", "os_name", "path"), [
    ("linux", "posix", "sigint"), ("darwin", "posix", "sigint"),
    ("win32", "nt", "ctrl_break"), ("emscripten", "other", "none")])
def test_interrupt_path_per_platform(platform: str, os_name: str, path: str) -> None:
    assert interrupt_path(platform, os_name) == path


def test_only_windows_needs_a_new_process_group() -> None:
    assert creation_flags("sigint") == 0
    assert creation_flags("ctrl_break") == 0x200  # CREATE_NEW_PROCESS_GROUP


def test_without_a_gentle_interrupt_the_kernel_is_killed(
        client: KernelClient, inbox: Inbox, monkeypatch: pytest.MonkeyPatch,
        tmp_path: Path) -> None:
    monkeypatch.setattr("gpumon.playground.client.kernel_client.interrupt_path", lambda: "none")
    mark = tmp_path / "sleeping"
    client.request("run", RunCode(touch_line(mark) + "import time\ntime.sleep(10)"))
    inbox.wait("hello")
    wait_for_file(mark)
    assert client.interrupt() == "killed"
    assert inbox.wait("restarted", timeout=10.0).data.reason == "killed after interrupt"


def test_the_kernel_reads_python_from_sys_executable() -> None:
    assert KernelClient(Inbox()).python == sys.executable


@pytest.mark.slow
def test_many_large_requests_in_a_row_never_deadlock(client: KernelClient,
                                                     inbox: Inbox) -> None:
    """The window sends the next request while the kernel still answers the last ones: the
    client must not hold its lock while a write waits on a full pipe, or the reader (which
    needs that lock to deliver each answer) stops draining the kernel, whose answers then
    fill its own pipe, and both wait for ever. Each request here (and its echoed code) is
    larger than a pipe's buffer."""
    import threading

    big = "s = '" + "a" * 200_000 + "'"
    sent: list[int] = []
    give_up = threading.Event()

    def send_all() -> None:
        for _ in range(12):
            if give_up.is_set():
                return
            sent.append(client.request("run", RunCode(big)))

    sender = threading.Thread(target=send_all, daemon=True)
    sender.start()
    sender.join(60.0)
    deadlocked = sender.is_alive()
    if deadlocked:  # unblock the writer so the test can end
        give_up.set()
        proc = client.process
        assert proc is not None
        proc.kill()
        sender.join(10.0)
    assert not deadlocked, "the client and the kernel wait on each other"
    for rid in sent:
        assert inbox.wait("reply", rid, timeout=60.0).data.ok


@pytest.mark.slow
def test_a_file_the_users_code_left_open_is_written_when_the_kernel_exits(
        client: KernelClient, inbox: Inbox, tmp_path) -> None:
    """The kernel ends with os._exit (no interpreter teardown): it flushes open files first."""
    path = tmp_path / "notes.txt"
    outcome = _run(client, inbox, RunCode(f"f = open({str(path)!r}, 'w')\nf.write('kept')"))
    assert outcome.error is None
    assert path.read_text() == ""  # still in f's buffer
    assert client.shutdown(timeout_s=5.0) == 0
    assert path.read_text() == "kept"
