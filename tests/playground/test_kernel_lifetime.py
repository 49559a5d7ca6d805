"""The real kernel's ties to its window: it never outlives it, and the user's folder never
shadows torch, the standard library or gpumon (kernel/lifeline.py)."""

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

from gpumon.playground.client.kernel_client import KernelClient
from gpumon.playground.data.actions import RunCode
from gpumon.playground.lesson.steps import LESSON
from tests.playground.kernel_helpers import Inbox

pytestmark = [pytest.mark.slow,  # real kernels and subprocesses: seconds each (docs/development.md)
              pytest.mark.skipif(os.name != "posix", reason="signals and fork are POSIX")]
GONE_WITHIN_S = 2.0


def _gone(pids: list[int], within_s: float) -> list[int]:
    """The pids still running (zombies count as gone) after ``within_s``."""
    deadline = time.monotonic() + within_s
    while True:
        left = []
        for pid in pids:
            try:
                if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                    left.append(pid)
            except psutil.NoSuchProcess:
                pass
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.05)


def _wait_for(path: Path, proc: subprocess.Popen[bytes], within_s: float = 60) -> str:
    deadline = time.monotonic() + within_s
    while not path.exists() or not path.read_text().endswith("\n"):
        assert proc.poll() is None, f"exited early with {proc.returncode}"
        assert time.monotonic() < deadline, "never got ready"
        time.sleep(0.05)
    return path.read_text().strip()


WINDOW_LIKE = textwrap.dedent("""
    import sys, time
    from gpumon.playground.client.kernel_client import KernelClient
    from gpumon.playground.data.actions import RunCode
    seen = []
    client = KernelClient(seen.append)
    # the user's code: a child that would daemonise, a plain child, then a busy loop
    client.request("run", RunCode(
        "import subprocess, os\\n"
        "plain = subprocess.Popen(['sleep', '60'])\\n"
        "daemon = subprocess.Popen(['setsid', 'sleep', '60'])\\n"
        "open(os.environ['READY'], 'w').write(f'{os.getpid()} {plain.pid} {daemon.pid}\\\\n')\\n"
        "x = 0\\n"
        "while True: x = x + 1"))
    time.sleep(600)
""")


def test_sigkill_of_the_window_ends_the_kernel_and_what_it_started(tmp_path: Path) -> None:
    ready = tmp_path / "ready"
    env = dict(os.environ, READY=str(ready))
    window = subprocess.Popen([sys.executable, "-c", WINDOW_LIKE], env=env)
    try:
        # written just before the busy loop: the kernel is in it now
        pids = [int(p) for p in _wait_for(ready, window).split()]
        assert _gone(pids, 0) == pids  # all alive before
        window.kill()
        window.wait()
        assert _gone(pids, GONE_WITHIN_S) == []
    finally:
        window.kill()
        for pid in pids if "pids" in locals() else []:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass


def test_a_clean_shutdown_ends_children_the_user_s_code_started(tmp_path: Path) -> None:
    inbox = Inbox()
    client = KernelClient(inbox)
    rid = client.request("run", RunCode(
        "import subprocess\nkids = [subprocess.Popen(['sleep', '60']).pid, "
        "subprocess.Popen(['setsid', 'sleep', '60']).pid]"))
    assert inbox.wait("reply", rid, timeout=60).data.ok
    rid = client.request("run", RunCode("kids"))
    kids = [int(k) for k in inbox.wait("reply", rid).data.preview.strip("[]").split(",")]
    client.shutdown(timeout_s=1.0)
    assert _gone(kids, GONE_WITHIN_S) == []


def test_the_user_s_folder_never_shadows_torch_but_its_modules_import(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "torch.py").write_text("raise ImportError('the shadow torch.py was imported')\n")
    (tmp_path / "random.py").write_text("raise ImportError('the shadow random.py')\n")
    (tmp_path / "gpumon").mkdir()
    (tmp_path / "gpumon" / "__init__.py").write_text("raise ImportError('the shadow gpumon')\n")
    (tmp_path / "mymodule.py").write_text("ANSWER = 42\n")
    (tmp_path / "data.txt").write_text("hello\n")
    monkeypatch.chdir(tmp_path)
    inbox = Inbox()
    client = KernelClient(inbox)
    try:
        version = client.request("run", RunCode("torch.__version__"))
        reply = inbox.wait("reply", version, timeout=60).data
        assert reply.ok, reply.error
        import torch

        assert torch.__version__ in reply.preview
        mine = client.request("run", RunCode(
            "import mymodule, random; (mymodule.ANSWER, open('data.txt').read().strip(), "
            "random.__file__.endswith('random.py') and 'lib' in random.__file__)"))
        reply = inbox.wait("reply", mine, timeout=30).data
        assert reply.ok, reply.error
        assert reply.preview == "(42, 'hello', True)"
    finally:
        client.shutdown(timeout_s=1.0)


def test_a_storm_of_interrupts_during_lesson_steps_never_desynchronises_the_stream() -> None:
    """200 SIGINTs at random moments while lesson steps run (their outcomes are frames sent
    during the user's code): every frame still decodes, the kernel is never ended."""
    inbox = Inbox()
    client = KernelClient(inbox)
    rng = random.Random(23)
    steps = tuple(LESSON)
    cheap = [n for n, s in enumerate(steps, 1) if s.id in
             ("tensor-on-cpu", "device-of-results", "copy-between", "move-model")] or [4, 5, 6]
    try:
        assert inbox.wait("reply", client.request("load"), timeout=60).data.ok
        pid = client.pid
        assert pid is not None
        sent = 0
        deadline = time.monotonic() + 60
        while sent < 200 and time.monotonic() < deadline:
            client.request("lesson", (steps, rng.choice(cheap), None))
            for _ in range(4):
                time.sleep(rng.uniform(0, 0.02))
                os.kill(pid, signal.SIGINT)
                sent += 1
        ping = client.request("ping")
        assert inbox.wait("reply", ping, timeout=60).data == pid
        assert sent >= 200
        assert client.pid == pid and client.starts == 1
        assert not [m for m in inbox.seen if m.kind in ("died", "restarted")]
    finally:
        client.shutdown(timeout_s=1.0)


def test_a_working_folder_deleted_under_the_window_starts_the_kernel_in_home(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    gone = tmp_path / "gone"
    gone.mkdir()
    monkeypatch.chdir(gone)
    gone.rmdir()
    inbox = Inbox()
    client = KernelClient(inbox)
    try:
        rid = client.request("run", RunCode("import os; os.getcwd()"))
        reply = inbox.wait("reply", rid, timeout=60).data
        assert reply.ok, reply.error
        assert reply.preview == repr(os.path.expanduser("~"))
    finally:
        client.shutdown(timeout_s=1.0)
