"""What the user's code cannot escape (issue 53): a daemon it starts (forked twice, in a
session of its own) ends with the kernel however the kernel ends; killing the kernel's
watchdog does not leave it running unwatched; and it cannot take more than its memory cap.
Each fault is made for real, and the process table is looked at afterwards. Both kinds of
kernel: the first, started under its watchdog (client/keeper.py), and one forked from the
fork server."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import psutil
import pytest
from testkit import still_running

from gpumon.playground.client import forkserver, keeper
from gpumon.playground.client.kernel_client import KernelClient
from gpumon.playground.data.actions import RunCode
from tests.playground.kernel_helpers import Inbox

pytestmark = [pytest.mark.slow,  # real kernels, daemons and windows: seconds each
              pytest.mark.skipif(not sys.platform.startswith("linux"),
                                 reason="subreapers, pidfds and /proc are Linux's")]
GONE_WITHIN_S = 5.0
KINDS = pytest.mark.parametrize("forked", [False, True], ids=["first-kernel", "forked-kernel"])

# Typed code that starts a daemon the classic way: fork, setsid, fork again, the middle one
# exits, the daemon's streams go to /dev/null; it runs ``sleep MARK`` so that the process
# table can be searched for it by its command line, wherever it was re-parented.
DAEMON = textwrap.dedent("""
    import os
    r, w = os.pipe()
    first = os.fork()
    if first == 0:
        os.setsid()
        if os.fork() == 0:
            null = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(null, fd)
            os.write(w, str(os.getpid()).encode())
            os.execvp("sleep", ["sleep", "{mark}"])
        os._exit(0)
    os.close(w)
    os.waitpid(first, 0)
    daemon = int(os.read(r, 20))
    daemon
""")


def _mark() -> str:
    return f"{random.randrange(10**6, 10**7)}.5"


def _with_mark(mark: str) -> list[int]:
    """The processes whose command line is ``sleep MARK``."""
    found = []
    for p in psutil.process_iter(["cmdline", "status"]):
        if p.info["cmdline"] == ["sleep", mark] and p.info["status"] != psutil.STATUS_ZOMBIE:
            found.append(p.pid)
    return found


def _until_gone(pids: list[int], mark: str | None = None) -> list[int]:
    deadline = time.monotonic() + GONE_WITHIN_S
    while True:
        left = still_running(pids) + (_with_mark(mark) if mark else [])
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.05)


def _watchdogs_of(kernel: int) -> list[int]:
    """The kernel's watchdog: its parent (a first kernel) or its child (a forked one)."""
    me = psutil.Process(kernel)
    found = []
    for p in [me.parent(), *me.children()]:
        try:
            if p is not None and "watchdog.py" in " ".join(p.cmdline()):
                found.append(p.pid)
        except psutil.ZombieProcess:  # killed, not reaped yet: no watchdog any more
            pass
    return found


def _client(monkeypatch: pytest.MonkeyPatch, forked: bool) -> tuple[KernelClient, Inbox]:
    if not forked:
        monkeypatch.setenv("GPUMON_KERNEL_FORKSERVER", "0")
    else:  # ready, or the kernel would start the ordinary way (a loaded machine: minutes)
        server = forkserver.current()
        assert server is not None and server.wait_ready(300)
    inbox = Inbox()
    return KernelClient(inbox), inbox


def _run(client: KernelClient, inbox: Inbox, code: str) -> str:
    rid = client.request("run", RunCode(code))
    reply = inbox.wait("reply", rid, timeout=120).data
    assert reply.ok, reply
    return str(reply.preview)


@KINDS
@pytest.mark.usefixtures("kernel_fork_server")
def test_a_daemon_the_code_started_ends_when_the_kernel_crashes(
        monkeypatch: pytest.MonkeyPatch, forked: bool) -> None:
    client, inbox = _client(monkeypatch, forked)
    mark = _mark()
    try:
        daemon = int(_run(client, inbox, DAEMON.format(mark=mark)))
        kernel = client.pid
        assert kernel is not None
        deadline = time.monotonic() + GONE_WITHIN_S  # it says its pid just before its exec
        while _with_mark(mark) != [daemon]:
            assert time.monotonic() < deadline, "the daemon never ran"
            time.sleep(0.05)
        watchdogs = _watchdogs_of(kernel)
        assert psutil.Process(daemon).ppid() == kernel  # the kernel is a subreaper
        client.request("run", RunCode("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)"))
        died = inbox.wait("died", timeout=60).data
        assert died.signal_name() == "SIGKILL" and died.pid == kernel
        assert _until_gone([kernel, daemon, *watchdogs], mark) == []
        assert _run(client, inbox, "1 + 1") == "2"  # a fresh kernel serves
    finally:
        client.shutdown(timeout_s=1.0)
        for pid in _with_mark(mark):
            os.kill(pid, signal.SIGKILL)


@KINDS
@pytest.mark.usefixtures("kernel_fork_server")
def test_a_daemon_the_code_started_ends_when_the_window_quits(
        monkeypatch: pytest.MonkeyPatch, forked: bool) -> None:
    client, inbox = _client(monkeypatch, forked)
    mark = _mark()
    try:
        daemon = int(_run(client, inbox, DAEMON.format(mark=mark)))
        kernel = client.pid
        assert kernel is not None
        watchdogs = _watchdogs_of(kernel)
        client.shutdown(timeout_s=1.0)
        assert _until_gone([kernel, daemon, *watchdogs], mark) == []
    finally:
        client.shutdown(timeout_s=1.0)
        for pid in _with_mark(mark):
            os.kill(pid, signal.SIGKILL)


# The window's side as the window holds it; the user's code starts a daemon, ignores SIGTERM
# (the parent-death signal's), keeps the lifeline thread from the GIL, kills the kernel's
# watchdog and holds the GIL inside one C call.
WINDOW_LIKE = textwrap.dedent("""
    import os, sys, time
    from gpumon.playground.client.kernel_client import KernelClient
    from gpumon.playground.data.actions import RunCode
    seen = []
    client = KernelClient(seen.append)
    client.request("run", RunCode(os.environ["DAEMON"] + "\\n"
        "import psutil, signal, sys, time\\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\\n"
        "me = psutil.Process()\\n"
        "dogs = [p for p in [me.parent(), *me.children()]\\n"
        "        if 'watchdog.py' in ' '.join(p.cmdline())]\\n"
        "pids = ' '.join(str(p.pid) for p in dogs)\\n"
        "open(os.environ['READY'], 'w').write(f'{os.getpid()} {daemon} {pids}\\\\n')\\n"
        "time.sleep(0.5)\\n"
        "sys.setswitchinterval(1000)\\n"
        "for p in dogs: p.kill()\\n"
        "x = sum(range(10**11))"))
    time.sleep(600)
""")


def test_user_code_that_kills_the_watchdog_leaves_no_kernel_or_daemon(tmp_path: Path) -> None:
    """The first kernel: the window ends it at once when its watchdog is killed, and then a
    SIGKILLed window leaves nothing behind. (A forked kernel's keeper is the fork server,
    whose own interpreter ends its kernels with the window.)"""
    ready, mark = tmp_path / "ready", _mark()
    env = dict(os.environ, READY=str(ready), DAEMON=DAEMON.format(mark=mark),
               GPUMON_KERNEL_FORKSERVER="0")
    window = subprocess.Popen([sys.executable, "-c", WINDOW_LIKE], env=env)
    pids: list[int] = []
    try:
        deadline = time.monotonic() + 120
        while not ready.exists() or not ready.read_text().endswith("\n"):
            assert window.poll() is None, f"the window ended early: {window.returncode}"
            assert time.monotonic() < deadline, "the kernel never ran the code"
            time.sleep(0.05)
        pids = [int(p) for p in ready.read_text().split()]
        assert len(pids) == 3  # the kernel, the daemon and the one watchdog it found
        assert _until_gone(pids, mark) == []  # the watchdog killed: the kernel ended with it
        assert window.poll() is None  # and the window lives on
        window.kill()
        window.wait()
        assert _until_gone(pids, mark) == []
    finally:
        window.kill()
        window.wait()
        for pid in [*pids, *_with_mark(mark)]:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass


def test_the_window_says_the_kernel_ended_because_its_watchdog_was_killed(
        monkeypatch: pytest.MonkeyPatch) -> None:
    client, inbox = _client(monkeypatch, forked=False)
    try:
        _run(client, inbox, "1")
        kernel = client.pid
        assert kernel is not None
        (watchdog,) = _watchdogs_of(kernel)
        client.request("run", RunCode(  # the kernel cannot end itself: the window must
            "import signal, sys, os\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
            f"sys.setswitchinterval(1000)\nos.kill({watchdog}, signal.SIGKILL)\n"
            "x = sum(range(10**11))"))
        died = inbox.wait("died", timeout=60).data
        assert died.watchdog_lost and died.pid == kernel
        assert "watchdog was ended" in died.sentence()
        assert _until_gone([kernel, watchdog]) == []
    finally:
        client.shutdown(timeout_s=1.0)


RECURSION = "import sys\nsys.setrecursionlimit(10**9)\ndef deeper(n): return deeper(n + 1)\n" \
            "deeper(0)"
ALLOCATION = "chunks = []\nwhile True: chunks.append(b'x' * 10**7)"
CAP_BYTES = 1_500_000_000  # a kernel with torch holds about 0.5 GB before the user's code


@pytest.mark.parametrize(("forked", "code"), [(False, RECURSION), (True, RECURSION),
                                              (False, ALLOCATION)],
                         ids=["first-kernel-recursion", "forked-kernel-recursion",
                              "first-kernel-allocation"])
@pytest.mark.usefixtures("kernel_fork_server")
def test_a_kernel_past_its_memory_cap_is_stopped_and_the_window_says_why(
        monkeypatch: pytest.MonkeyPatch, forked: bool, code: str) -> None:
    monkeypatch.setenv(keeper.FRACTION_ENV, repr(CAP_BYTES / psutil.virtual_memory().total))
    client, inbox = _client(monkeypatch, forked)
    try:
        _run(client, inbox, "import torch\n1")
        kernel = client.pid
        assert kernel is not None
        watchdogs = _watchdogs_of(kernel)
        assert len(watchdogs) == 1
        client.request("run", RunCode(code))
        died = inbox.wait("died", timeout=120).data
        assert died.pid == kernel and died.memory is not None
        used, cap = died.memory
        assert abs(cap - CAP_BYTES) < 1e6 and cap < used < cap + 1_000_000_000
        assert "ran out of its 1.5 GB of memory" in died.sentence()
        assert _until_gone([kernel, *watchdogs]) == []
        assert _run(client, inbox, "2 * 21") == "42"  # a fresh kernel, under the same cap
    finally:
        client.shutdown(timeout_s=1.0)


def test_the_cap_is_a_fraction_of_the_machine_s_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    total = psutil.virtual_memory().total
    assert keeper.memory_cap(0.25) == int(total * 0.25)
    monkeypatch.delenv(keeper.FRACTION_ENV, raising=False)
    assert keeper.memory_cap() == int(total * keeper.DEFAULT_FRACTION)
    for off in ("0", "-1", "nan", "2"):
        monkeypatch.setenv(keeper.FRACTION_ENV, off)
        assert keeper.memory_cap() == 0
    monkeypatch.setenv(keeper.FRACTION_ENV, "half")  # not a number: the default
    assert keeper.memory_cap() == int(total * keeper.DEFAULT_FRACTION)


@pytest.mark.parametrize("language", ["en", "zh_CN"])
def test_the_log_s_card_says_the_kernel_ran_out_of_its_cap(language: str) -> None:
    from gpumon import i18n
    from gpumon.playground.client.kernel_client import KernelExit

    i18n.set_language(i18n.CHINESE if language == "zh_CN" else i18n.ENGLISH)
    ended = KernelExit(41, -signal.SIGKILL, ("x",), (3,), memory=(1_620_000_000, CAP_BYTES))
    text = ended.sentence()
    assert "41" in text and "1.5" in text and "1.6" in text
    assert ("ran out of its 1.5 GB of memory" in text) == (language == "en")
    assert ("用完了分配给它的 1.5 GB 内存" in text) == (language == "zh_CN")
    assert "SIGKILL" not in text  # the cause, not the signal that carried it out


@pytest.mark.usefixtures("kernel_fork_server")
def test_a_forked_kernel_starts_another_watchdog_when_its_own_is_killed(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Its keeper is the fork server; the watchdog beside it caps its memory and must not be
    left dead."""
    client, inbox = _client(monkeypatch, forked=True)
    try:
        _run(client, inbox, "1")
        kernel = client.pid
        assert kernel is not None
        (first,) = _watchdogs_of(kernel)
        assert psutil.Process(first).ppid() == kernel  # beside it: a forked kernel's
        _run(client, inbox, f"import os, signal\nos.kill({first}, signal.SIGKILL)")
        deadline = time.monotonic() + GONE_WITHIN_S
        while (found := _watchdogs_of(kernel)) in ([], [first]):
            assert time.monotonic() < deadline, "no new watchdog"
            time.sleep(0.05)
        (second,) = found
        assert second != first and str(kernel) in psutil.Process(second).cmdline()
        assert still_running([first]) == []
    finally:
        client.shutdown(timeout_s=1.0)


def test_kernels_under_their_watchdog_leave_no_descriptor_open_in_the_window(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Each kept kernel's pidfd is closed once it has ended: a window restarts its kernel
    many times."""
    client, inbox = _client(monkeypatch, forked=False)
    try:
        inbox.wait("reply", client.request("ping"), timeout=120)
        before = len(os.listdir("/proc/self/fd"))
        for _ in range(4):
            pid = client.pid
            assert pid is not None
            os.kill(pid, signal.SIGKILL)
            inbox.wait("died", timeout=60)
            inbox.wait("reply", client.request("ping"), timeout=120)
        deadline = time.monotonic() + GONE_WITHIN_S
        while len(os.listdir("/proc/self/fd")) > before and time.monotonic() < deadline:
            time.sleep(0.05)  # the last one's reader closes its end after the reply
        assert len(os.listdir("/proc/self/fd")) == before
    finally:
        client.shutdown(timeout_s=1.0)
