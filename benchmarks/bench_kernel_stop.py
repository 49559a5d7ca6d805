"""How long the playground kernel's ways out take (the tests check what happens, not when).

1. Quit during a long operation: a kernel runs ``time.sleep(60)``; ``shutdown(timeout_s=1.0)``
   (what closing the window does), from the call to its return, and the kernel's return code
   (-9: killed once the second was up). Target: under timeout + 2 s.
2. Stop of code that ignores Ctrl+C: the kernel ignores SIGINT and sleeps; ``interrupt
   (grace_s=1.0)``, from the call to the ``restarted`` message (the kernel killed, a fresh one
   started). Target: under 5 s.
3. A stopped fork server (SIGSTOP): the first request's ``start()`` on the GUI thread, from
   the call to its return (it gives up on the server after ``FORK_TIMEOUT_S`` and starts the
   kernel the ordinary way). Target: under ``FORK_TIMEOUT_S`` + 2 s.

The tests that check the behaviour: tests/playground/test_kernel_client.py,
test_kernel_faults.py, test_kernel_stop_start.py, test_kernel_forkserver.py and
tests/ui/test_playground_kernel_link.py.

Run from the repository root: ``python benchmarks/bench_kernel_stop.py``.
"""

from __future__ import annotations

import argparse
import os
import queue
import signal
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from machine import describe  # noqa: E402

from gpumon.playground.client import forkserver  # noqa: E402
from gpumon.playground.client.kernel_client import KernelClient, kernel_env  # noqa: E402
from gpumon.playground.data.actions import RunCode  # noqa: E402
from gpumon.playground.data.wire import Message  # noqa: E402


class Inbox:
    """Every message of the client, in order, from its reader thread."""

    def __init__(self) -> None:
        self.messages: queue.Queue[Message] = queue.Queue()

    def __call__(self, message: Message) -> None:
        self.messages.put(message)

    def wait(self, kind: str, rid: int | None = None, timeout: float = 120) -> Message:
        while True:
            m = self.messages.get(timeout=timeout)
            if m.kind == kind and (rid is None or m.id == rid):
                return m


def running(client: KernelClient, inbox: Inbox, code: str, mark: Path) -> None:
    """``code`` sent, and the kernel in it (it touched ``mark`` first)."""
    client.request("run", RunCode(f"__import__('pathlib').Path({str(mark)!r}).touch()\n" + code))
    deadline = time.monotonic() + 120
    while not mark.exists():
        if time.monotonic() > deadline:
            raise RuntimeError("the kernel never ran the code")
        time.sleep(0.01)


def quit_during_sleep(tmp: Path) -> tuple[float, int | None]:
    inbox = Inbox()
    client = KernelClient(inbox)
    running(client, inbox, "import time\ntime.sleep(60)", tmp / "sleeping")
    start = time.perf_counter()
    code = client.shutdown(timeout_s=1.0)
    return time.perf_counter() - start, code


def stop_ignoring_ctrl_c(tmp: Path) -> float:
    inbox = Inbox()
    client = KernelClient(inbox)
    try:
        running(client, inbox, "import signal, time\nsignal.signal(signal.SIGINT, "
                "signal.SIG_IGN)\ntime.sleep(60)", tmp / "ignoring")
        start = time.perf_counter()
        assert client.interrupt(grace_s=1.0) == "signalled"
        inbox.wait("restarted", timeout=30)
        return time.perf_counter() - start
    finally:
        client.shutdown(timeout_s=1.0)


def start_with_a_stopped_server() -> float | None:
    if not forkserver.enabled():
        return None
    server = forkserver.start_server(sys.executable, kernel_env())
    server.wait_ready(60)
    os.kill(server.proc.pid, signal.SIGSTOP)
    client = KernelClient(Inbox())
    try:
        start = time.perf_counter()
        client.start()
        return time.perf_counter() - start
    finally:
        if server.proc.poll() is None:  # (a retired server is killed)
            os.kill(server.proc.pid, signal.SIGCONT)
        client.shutdown(timeout_s=2.0)
        forkserver.shutdown()


def main() -> int:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()
    print(describe())
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        took, code = quit_during_sleep(Path(tmp))
        ok &= took < 3.0
        print(f"1. quit during time.sleep(60), timeout 1 s: {took:.2f} s, return code {code} "
              f"(target < 3 s)")
        took = stop_ignoring_ctrl_c(Path(tmp))
        ok &= took < 5.0
        print(f"2. stop of code that ignores Ctrl+C, grace 1 s: {took:.2f} s to a fresh kernel "
              f"(target < 5 s)")
    waited = start_with_a_stopped_server()
    if waited is None:
        print("3. no fork server on this platform")
    else:
        limit = forkserver.FORK_TIMEOUT_S + 2.0
        ok &= waited < limit
        print(f"3. start() with the fork server stopped: {waited:.2f} s "
              f"(FORK_TIMEOUT_S {forkserver.FORK_TIMEOUT_S:.1f} s; target < {limit:.1f} s)")
    print("targets met" if ok else "a target NOT met")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
