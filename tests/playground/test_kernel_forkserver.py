"""Kernels forked from the fork server (Linux): they are the kernels ``python -m`` would start
(a workspace, the user's folder, their own random state, exit codes, signals), and whatever
ends the window or the server ends them (client/forkserver.py, kernel/forkserver.py)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
from testkit import running

from gpumon.playground.client import forkserver
from gpumon.playground.client.forkserver import ForkedKernel, ForkServer
from gpumon.playground.client.kernel_client import KernelClient, KernelExit, kernel_env
from gpumon.playground.data.actions import RunCode
from gpumon.playground.data.outcome import LoadStatus, Outcome
from tests.playground.kernel_helpers import Inbox, touch_line, wait_for_file

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="the fork server is Linux only")
GONE_WITHIN_S = 3.0


@pytest.fixture
def server() -> Iterator[ForkServer]:
    """A ready server for this process's kernels (it stays for the next tests)."""
    started = forkserver.start_server(sys.executable, kernel_env())
    assert started.wait_ready(60), "the fork server never said it was ready"
    yield started


@pytest.fixture
def server_back() -> Iterator[None]:
    """The test ends or replaces this process's server: start the one for this environment
    again afterwards, so the next tests' kernels do not start the ordinary way."""
    yield
    # ready before the next test: a kernel asked for while it imports starts the ordinary way
    # (another import of torch, beside the server's)
    forkserver.start_server(sys.executable, kernel_env()).wait_ready(60)


def _run(client: KernelClient, inbox: Inbox, code: str) -> Outcome:
    rid = client.request("run", RunCode(code))
    reply = inbox.wait("reply", rid, timeout=30).data
    assert isinstance(reply, Outcome)
    return reply


def _gone(pids: list[int], within_s: float) -> list[int]:
    deadline = time.monotonic() + within_s
    while True:
        left = [p for p in pids if running(p)]
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.05)


def test_a_forked_kernel_has_torch_at_once_and_keeps_its_workspace(server: ForkServer) -> None:
    inbox = Inbox()
    client = KernelClient(inbox)
    try:
        client.start()
        kernel = psutil.Process(client.pid)
        # torch came with the fork, before "load" asked for it (how much sooner the kernel
        # is ready: benchmarks/bench_kernel.py)
        assert any("libtorch" in m.path for m in kernel.memory_maps())
        rid = client.request("load")
        status = inbox.wait("reply", rid, timeout=10).data
        assert isinstance(status, LoadStatus) and status.ok, status
        assert isinstance(client.process, ForkedKernel)
        assert kernel.ppid() == server.proc.pid  # the server's child, not the window's
        assert os.getsid(kernel.pid) == kernel.pid  # a session of its own
        assert _run(client, inbox, "x = torch.arange(3)").ok
        assert _run(client, inbox, "x.sum()").preview == "tensor(3)"
    finally:
        client.shutdown(timeout_s=2.0)


def test_each_forked_kernel_draws_its_own_random_numbers(server: ForkServer) -> None:
    draws = []
    for _ in range(2):
        inbox = Inbox()
        client = KernelClient(inbox)
        try:
            draws.append(_run(client, inbox, "import random; random.random()").preview)
            assert isinstance(client.process, ForkedKernel)
        finally:
            client.shutdown(timeout_s=2.0)
    assert draws[0] != draws[1]


def test_a_forked_kernel_runs_in_the_user_s_folder_which_shadows_nothing(
        server: ForkServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "torch.py").write_text("raise ImportError('the shadow torch.py')\n")
    (tmp_path / "mymodule.py").write_text("ANSWER = 42\n")
    monkeypatch.chdir(tmp_path)
    inbox = Inbox()
    client = KernelClient(inbox)
    try:
        reply = _run(client, inbox, "import os, mymodule; (mymodule.ANSWER, os.getcwd(), "
                                    "torch.__file__.endswith('torch.py'))")
        assert isinstance(client.process, ForkedKernel)
        assert reply.ok, reply.error
        assert reply.preview == f"(42, {str(tmp_path)!r}, False)"
    finally:
        client.shutdown(timeout_s=2.0)


def test_a_forked_kernel_killed_by_a_signal_is_reported_so_and_replaced(
        server: ForkServer) -> None:
    inbox = Inbox()
    client = KernelClient(inbox)
    try:
        assert _run(client, inbox, "a = torch.zeros(2)").ok
        inbox.wait("workspace")
        pid = client.pid
        assert pid is not None
        os.kill(pid, signal.SIGKILL)
        ended = inbox.wait("died", timeout=10).data
        assert isinstance(ended, KernelExit)
        assert ended.pid == pid and ended.how() == "killed by SIGKILL"
        assert ended.lost_names == ("a",)
        assert not _run(client, inbox, "a").ok  # a fresh kernel, forked again
        assert isinstance(client.process, ForkedKernel)
        assert client.pid != pid
    finally:
        client.shutdown(timeout_s=2.0)


def test_an_interrupt_reaches_a_forked_kernel_and_an_exit_code_comes_back(
        server: ForkServer, tmp_path: Path) -> None:
    inbox = Inbox()
    client = KernelClient(inbox)
    try:
        assert _run(client, inbox, "x = 5").ok
        mark = tmp_path / "looping"
        rid = client.request("run", RunCode(touch_line(mark) + "n = 0\nwhile True:\n    n += 1"))
        wait_for_file(mark)  # the loop runs now
        assert client.interrupt(grace_s=5.0) == "signalled"
        inbox.wait("interrupted", rid, timeout=5.0)
        assert _run(client, inbox, "x").preview == "5"
        proc = client.process
        assert isinstance(proc, ForkedKernel)
        client.shutdown(timeout_s=2.0)
        assert proc.wait(5) == 0  # the kernel's own exit code, through the server
    finally:
        client.shutdown(timeout_s=2.0)


@pytest.mark.slow  # a kernel that imports torch itself
def test_a_kernel_for_another_environment_starts_the_ordinary_way_and_the_server_stays(
        server: ForkServer, monkeypatch: pytest.MonkeyPatch) -> None:
    def kernel() -> tuple[str, bool]:
        inbox = Inbox()
        client = KernelClient(inbox)
        try:
            reply = _run(client, inbox, "import os; os.environ.get('GPUMON_TEST_OTHER')")
            return reply.preview, isinstance(client.process, ForkedKernel)
        finally:
            client.shutdown(timeout_s=2.0)

    with monkeypatch.context() as m:
        m.setenv("GPUMON_TEST_OTHER", "1")
        assert kernel() == ("'1'", False)  # not forked from the server of the old environment
    assert kernel() == ("None", True)  # which still serves its own
    assert forkserver.current() is server and not server.gone.is_set()


@pytest.mark.slow  # a kernel that imports torch itself, and a new server
def test_a_lost_server_ends_its_kernels_and_the_next_starts_the_ordinary_way(
        server: ForkServer, server_back: None) -> None:
    inbox = Inbox()
    client = KernelClient(inbox)
    try:
        assert _run(client, inbox, "b = 2").ok
        pid = client.pid
        assert pid is not None
        server.proc.kill()
        ended = inbox.wait("died", timeout=10).data
        assert isinstance(ended, KernelExit) and ended.pid == pid
        assert _gone([pid], GONE_WITHIN_S) == []
        assert _run(client, inbox, "1 + 1").preview == "2"
        assert not isinstance(client.process, ForkedKernel)
    finally:
        client.shutdown(timeout_s=2.0)


@pytest.mark.slow  # three imports of torch
def test_the_second_ordinary_start_in_a_row_starts_a_server_for_the_third(
        server: ForkServer, server_back: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """The replaced server forks no more, and its kernel in use goes on until it ends."""
    kept_inbox = Inbox()
    kept = KernelClient(kept_inbox)  # a kernel of the current server, in use throughout
    try:
        assert _run(kept, kept_inbox, "k = 7").ok
        assert isinstance(kept.process, ForkedKernel)
        monkeypatch.setenv("GPUMON_TEST_OTHER", str(os.getpid()))  # an environment of its own
        forked = []
        for _ in range(3):
            current = forkserver.current()
            if current is not None and current is not server:
                assert current.ready.wait(60)
            inbox = Inbox()
            client = KernelClient(inbox)
            try:
                assert _run(client, inbox, "torch.ones(1).sum()").preview == "tensor(1.)"
                forked.append(isinstance(client.process, ForkedKernel))
            finally:
                client.shutdown(timeout_s=2.0)
        assert forked == [False, False, True]
        assert forkserver.current() is not server
        assert not server.gone.is_set() and server.proc.poll() is None  # its kernel runs
        assert _run(kept, kept_inbox, "k").preview == "7"
    finally:
        kept.shutdown(timeout_s=2.0)
    assert server.gone.wait(5)  # retired, it ended with its last kernel
    assert server.proc.wait(5) is not None


def test_a_server_that_ends_before_it_is_ready_is_not_started_again(
        server_back: None, monkeypatch: pytest.MonkeyPatch) -> None:  # env undone first
    """As one that found CUDA initialised after its imports does (kernel/forkserver.py)."""
    monkeypatch.setattr(forkserver, "MODULE", "gpumon.no_such_module")  # exits at once
    monkeypatch.setenv("GPUMON_TEST_OTHER", f"refused-{os.getpid()}")
    env = kernel_env()
    assert forkserver.spawn(sys.executable, env) is None  # the first: the ordinary way
    assert forkserver.spawn(sys.executable, env) is None  # the second starts a server ...
    failed = forkserver.current()
    assert failed is not None and not failed.wait_ready(30) and failed.gone.is_set()
    for _ in range(2):  # ... which ended before it was ready: none is started again
        assert forkserver.spawn(sys.executable, env) is None
        assert forkserver.current() is None


@pytest.mark.parametrize("first", [0, 1], ids=["a JSON list", "an exit with no number"])
def test_a_server_that_says_garbage_is_ended_and_never_used(
        first: int, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    script = Path(__file__).with_name("garbage_forkserver.py").read_text()
    if first:  # the second message alone
        script = script.replace('sock.send(b"[1, 2]")\n', "")
    (tmp_path / "garbage_server.py").write_text(script)
    env = dict(kernel_env(), PYTHONPATH=f"{tmp_path}{os.pathsep}{kernel_env()['PYTHONPATH']}")
    monkeypatch.setattr(forkserver, "MODULE", "garbage_server")
    server = ForkServer(sys.executable, env)
    try:
        assert server.gone.wait(10)  # the reader stopped, with no exception in its thread
        assert not server.ready.is_set() and server.fork(env) is None
    finally:
        server.close()


def test_a_server_where_cuda_was_initialised_would_not_serve(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from gpumon.playground.kernel import forkserver as server_side

    class Cuda:
        initialised = False

        def is_initialized(self) -> bool:
            return self.initialised

    fake = type(sys)("torch")
    fake.cuda = Cuda()  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "torch", fake)
    assert server_side.cuda_untouched()
    fake.cuda.initialised = True  # type: ignore[attr-defined]
    assert not server_side.cuda_untouched()


@pytest.mark.slow  # a kernel that imports torch itself
def test_a_stopped_server_costs_a_request_at_most_the_fork_timeout_and_is_retired(
        server: ForkServer, server_back: None) -> None:
    os.kill(server.proc.pid, signal.SIGSTOP)
    try:
        inbox = Inbox()
        client = KernelClient(inbox)
        try:
            # what the window's first request does, on the GUI thread: it gives up on the
            # server (after FORK_TIMEOUT_S: benchmarks/bench_kernel_stop.py measures it)
            client.start()
            assert not isinstance(client.process, ForkedKernel)
            assert _run(client, inbox, "1 + 1").preview == "2"
            assert server.fork(kernel_env()) is None  # retired: never asked again
        finally:
            client.shutdown(timeout_s=2.0)
    finally:
        if server.proc.poll() is None:
            os.kill(server.proc.pid, signal.SIGCONT)
    assert server.gone.wait(10)  # retired with no kernel: ended (killed if still stopped)


WINDOW_LIKE = textwrap.dedent("""
    import os, sys, time
    from gpumon.playground.client import forkserver
    from gpumon.playground.client.kernel_client import KernelClient, kernel_env
    from gpumon.playground.data.actions import RunCode
    server = forkserver.start_server(sys.executable, kernel_env())
    assert server.ready.wait(60)
    client = KernelClient(lambda message: None)
    client.request("run", RunCode(
        "import subprocess, os\\n"
        "plain = subprocess.Popen(['sleep', '60'])\\n"
        "daemon = subprocess.Popen(['setsid', 'sleep', '60'])\\n"
        "open(os.environ['READY'], 'w').write("
        "f'{os.getppid()} {os.getpid()} {plain.pid} {daemon.pid}\\\\n')\\n"
        "x = 0\\n"
        "while True: x = x + 1"))
    time.sleep(600)
""")


@pytest.mark.slow
def test_sigkill_of_the_window_ends_the_server_the_forked_kernel_and_what_it_started(
        tmp_path: Path) -> None:
    ready = tmp_path / "ready"
    window = subprocess.Popen([sys.executable, "-c", WINDOW_LIKE],
                              env=dict(os.environ, READY=str(ready)))
    pids: list[int] = []
    try:
        deadline = time.monotonic() + 60
        while not ready.exists() or not ready.read_text().endswith("\n"):
            assert window.poll() is None, f"exited early with {window.returncode}"
            assert time.monotonic() < deadline, "never got ready"
            time.sleep(0.05)
        pids = [int(p) for p in ready.read_text().split()]
        server_pid, kernel_pid = pids[:2]
        assert psutil.Process(server_pid).ppid() == window.pid  # the kernel was forked
        assert psutil.Process(kernel_pid).ppid() == server_pid
        assert _gone(pids, 0) == pids
        window.kill()
        window.wait()
        assert _gone(pids, GONE_WITHIN_S) == []
    finally:
        window.kill()
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass


def test_an_idle_server_sleeps_until_it_is_asked_or_its_window_ends(server: ForkServer) -> None:
    """Its loop woke four times a second to look at its parent; a pidfd wakes it now."""
    pid = server.proc.pid
    time.sleep(0.3)

    def switches() -> int:
        status = Path(f"/proc/{pid}/task/{pid}/status").read_text()
        return sum(int(line.split()[1]) for line in status.splitlines()
                   if "ctxt_switches:" in line)

    before = switches()
    # The window the wake-ups are counted over is what is tested: with a pidfd the loop wakes
    # every lifeline.SLEEP_S (5 s) or for a child's end; the old loop, every 0.25 s.
    time.sleep(1.0)
    assert switches() - before <= 2  # every 0.25 s: 4
