"""The playground kernel on another machine, through a real sshd on 127.0.0.1 (issue 50).

The "remote" is this machine, so its process table is visible: every fault is checked by the
kernel and a child process it started being gone, not by what the window believes. The
remote kernel is ``gpumon kernel --stdio`` of this checkout (the lab's ``bin/gpumon``), with
the CPU build of torch. The tests of a kernel that is kept (Stop that reaches it, big
requests, its answers) share one kernel: ``test_ssh_kernel_kept.py``.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from ssh_kernels import START_S, remote, run, running, wait_gone
from sshd import ROOT, Lab, keygen, remote_script, remote_streams

from gpumon.playground.client.kernel_client import KernelClient
from gpumon.playground.client.ssh_kernel import SshKernel
from gpumon.playground.data.actions import RunCode
from tests.playground.kernel_helpers import Inbox, touch_line, wait_for_file

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux's /proc")]
CHILD = "import subprocess\nchild = subprocess.Popen(['sleep', '1000'])\nchild.pid"


@pytest.fixture
def inbox() -> Inbox:
    return Inbox()


@pytest.fixture
def ssh_client(lab: Lab, inbox: Inbox) -> Iterator[KernelClient]:
    client = KernelClient(inbox, remote=remote(lab))
    yield client
    client.shutdown(timeout_s=2.0)
    wait_gone(remote_streams(lab), 10.0)


def kernel_and_child(client: KernelClient, inbox: Inbox) -> tuple[int, int]:
    """The remote kernel's pid (its hello) and a child process it started."""
    child = int(run(client, inbox, CHILD))
    kernel = inbox.wait("hello", timeout=5.0).data
    assert running(kernel) and running(child)
    assert isinstance(client.process, SshKernel)
    return kernel, child


def hold_the_gil(client: KernelClient, mark: Path) -> None:
    """Make the kernel hold the GIL in one long C call, where none of its own threads can
    act on the connection's end (the watchdog must)."""
    client.request("run", RunCode(touch_line(mark) + "sum(range(10**11))"))
    wait_for_file(mark)


def test_stop_during_one_long_c_call_ends_that_kernel_and_all_it_started(
        ssh_client: KernelClient, inbox: Inbox, tmp_path: Path) -> None:
    """``sum(range(10**11))`` holds the GIL in one C call: no thread of the kernel can act on
    the Stop frame, so after the grace the client ends the link and the remote watchdog
    ends the kernel and its child; the next action gets a fresh kernel."""
    kernel, child = kernel_and_child(ssh_client, inbox)
    mark = tmp_path / "running"
    rid = ssh_client.request("run", RunCode(touch_line(mark) + "sum(range(10**11))"))
    wait_for_file(mark)
    assert ssh_client.interrupt(grace_s=1.0) == "signalled"
    ended = inbox.wait("restarted", timeout=20.0).data
    assert ended.reason == "killed after interrupt" and rid in ended.lost_requests
    assert ended.pid == kernel  # the card names the remote kernel's pid
    wait_gone([kernel, child], 5.0)
    assert run(ssh_client, inbox, "1 + 1") == "2"


CAP_BYTES = 1_500_000_000  # a kernel with torch holds about 0.5 GB before the user's code


def test_a_remote_kernel_past_its_memory_cap_says_so(lab: Lab, inbox: Inbox) -> None:
    """The cap is the remote machine's setting; the watchdog there ends the kernel and says
    why on the connection's stderr, and the card says it as for a local kernel."""
    import psutil

    fraction = CAP_BYTES / psutil.virtual_memory().total
    command = remote_script(lab.bin / "gpumon-capped", (
        f"export GPUMON_KERNEL_MEMORY_FRACTION={fraction!r}\nexec {lab.gpumon} \"$@\""))
    client = KernelClient(inbox, remote=remote(lab, command))
    try:
        kernel, child = kernel_and_child(client, inbox)
        client.request("run", RunCode("chunks = []\nwhile True: chunks.append(b'x' * 10**7)"))
        died = inbox.wait("died", timeout=120).data
        assert died.pid == kernel and died.memory is not None and not died.problem
        used, cap = died.memory
        assert abs(cap - CAP_BYTES) < 1e6 and cap < used < cap + 1_000_000_000
        assert "ran out of its 1.5 GB of memory" in died.sentence()
        wait_gone([kernel, child], 5.0)
        assert run(client, inbox, "2 * 21") == "42"  # a fresh kernel, under the same cap
    finally:
        client.shutdown(timeout_s=1.0)


def wrapped(lab: Lab) -> Path:
    """A remote gpumon that a process stays above, as ``conda run -n x gpumon`` does: the
    kernel's watchdog's parent is then not sshd's session, and lives on when it ends (no
    terminal, no SIGHUP); only the connection's end on stdin says the window is gone."""
    return remote_script(lab.bin / "gpumon-wrapped", f"{lab.gpumon} \"$@\"\necho after >&2")


@pytest.mark.parametrize("wrap", [False, True], ids=["exec", "wrapped"])
def test_the_ssh_child_killed_ends_the_remote_kernel_and_its_child(
        lab: Lab, inbox: Inbox, tmp_path: Path, wrap: bool) -> None:
    client = KernelClient(inbox, remote=remote(lab, wrapped(lab) if wrap else None))
    try:
        kernel, child = kernel_and_child(client, inbox)
        hold_the_gil(client, tmp_path / "running")
        os.kill(client.process.pid, signal.SIGKILL)
        inbox.wait("died", timeout=10.0)
        wait_gone([kernel, child], 5.0)
    finally:
        client.shutdown(timeout_s=1.0)


@pytest.mark.parametrize("wrap", [False, True], ids=["exec", "wrapped"])
def test_a_window_sigkilled_leaves_no_remote_kernel(lab: Lab, tmp_path: Path,
                                                   wrap: bool) -> None:
    """A process running the client (the window) is SIGKILLed while its kernel runs a child:
    its ssh child reads the end of its stdin and closes the channel, and the remote watchdog
    ends the kernel and the child."""
    command = wrapped(lab) if wrap else lab.gpumon
    script = tmp_path / "window.py"
    script.write_text(
        "import sys, queue\n"
        f"sys.path[:0] = [{str(ROOT)!r}]\n"
        "from gpumon.playground.client.kernel_client import KernelClient\n"
        "from gpumon.playground.client.ssh_kernel import Remote\n"
        "from gpumon.playground.data.actions import RunCode\n"
        "from gpumon.ssh.command import SshOptions\n"
        "from gpumon.ssh.target import parse_target\n"
        "q = queue.Queue()\n"
        f"c = KernelClient(q.put, remote=Remote(parse_target('lab1'), SshOptions("
        f"config_file={str(lab.config)!r}, remote_command={str(command)!r})))\n"
        f"rid = c.request('run', RunCode({CHILD!r}))\n"
        "kernel = None\n"
        "while True:\n"
        "    m = q.get()\n"
        "    if m.kind == 'hello': kernel = m.data\n"
        "    if m.kind == 'reply' and m.id == rid: break\n"
        "print(kernel, m.data.preview, flush=True)\n"
        f"c.request('run', RunCode({touch_line(tmp_path / 'running')!r} + "
        "'sum(range(10**11))'))\n"
        "import time; time.sleep(1000)\n")
    with subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE,
                          text=True) as window:
        try:
            assert window.stdout is not None
            kernel, child = (int(p) for p in window.stdout.readline().split())
            assert running(kernel) and running(child)
            wait_for_file(tmp_path / "running")
            window.kill()
            window.wait(10)
            wait_gone([kernel, child], 5.0)
        finally:
            window.kill()


def test_a_stalled_link_ends_the_remote_kernel_within_the_keep_alive(
        tmp_path: Path, fake_nvml_library: Path, inbox: Inbox) -> None:
    """The window's ssh stopped (SIGSTOP): the server's keep-alive (1 s, twice) gives the
    session up, and the connection's end ends the kernel and its child."""
    lab = Lab(tmp_path / "lab", fake_nvml_library, {"lab1": {}})
    config = lab.sshd.config.read_text().replace("ClientAliveInterval 0",
                                                 "ClientAliveInterval 1\nClientAliveCountMax 2")
    lab.sshd.config.write_text(config)
    lab.start()
    client = KernelClient(inbox, remote=remote(lab))
    try:
        kernel, child = kernel_and_child(client, inbox)
        hold_the_gil(client, tmp_path / "running")
        ssh = client.process.pid
        os.kill(ssh, signal.SIGSTOP)
        wait_gone([kernel, child], 3.0 + 5.0)  # the keep-alive, then the watchdog's grace
        os.kill(ssh, signal.SIGCONT)
    finally:
        client.shutdown(timeout_s=1.0)
        lab.stop()


def test_a_remote_without_gpumon_says_what_to_install(lab: Lab, inbox: Inbox) -> None:
    client = KernelClient(inbox, remote=remote(lab, lab.folder / "no-such-gpumon"))
    try:
        client.request("run", RunCode("1"))
        ended = inbox.wait("died", timeout=60.0).data
        assert ended.sentence().startswith("gpumon is not installed on lab1")
    finally:
        client.shutdown(timeout_s=1.0)


def test_a_refused_login_says_so(lab: Lab, inbox: Inbox) -> None:
    other = keygen(lab.folder / "other_key")
    (lab.sshd.folder / "authorized_keys").write_text(other + "\n")  # not the user's key
    client = KernelClient(inbox, remote=remote(lab))
    try:
        client.request("run", RunCode("1"))
        ended = inbox.wait("died", timeout=60.0).data
        assert ended.sentence().startswith("lab1 refused the login")
    finally:
        client.shutdown(timeout_s=1.0)


def test_a_remote_without_torch_answers_with_a_sentence(lab: Lab, inbox: Inbox) -> None:
    blocked = lab.folder / "no-torch"
    (blocked / "torch").mkdir(parents=True)
    (blocked / "torch" / "__init__.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'torch'\", name='torch')\n")
    command = remote_script(lab.bin / "gpumon-no-torch", (
        f"export PYTHONPATH={ROOT}:{blocked} GPUMON_TEST_LAB={lab.folder}\n"
        f"exec {sys.executable} -m gpumon \"$@\""))
    client = KernelClient(inbox, remote=remote(lab, command))
    try:
        rid = client.request("load")
        status = inbox.wait("reply", rid, timeout=START_S).data
        assert not status.ok and status.torch_missing
        rid = client.request("run", RunCode("1 + 1"))
        assert inbox.wait("reply", rid, timeout=60).data.error.type_name == "ImportError"
    finally:
        client.shutdown(timeout_s=1.0)


def silent_after(lab: Lab, seconds: float) -> Path:
    """The lab's gpumon, with the watchdog's silence limit set short."""
    return remote_script(lab.bin / "gpumon-silence", (
        f"export GPUMON_KERNEL_SILENCE_S={seconds:g}\nexec {lab.gpumon} \"$@\""))


@pytest.mark.parametrize("busy", [False, True], ids=["idle", "holding-the-gil"])
def test_a_link_gone_silent_ends_the_remote_kernel_without_sshds_keep_alive(
        lab: Lab, inbox: Inbox, tmp_path: Path, busy: bool) -> None:
    """The window's ssh stopped (SIGSTOP) and sshd's keep-alive off (its default): no beat
    comes, and the watchdog ends the kernel and its child after its silence limit (2 s)."""
    client = KernelClient(inbox, remote=remote(lab, silent_after(lab, 2.0)))
    try:
        kernel, child = kernel_and_child(client, inbox)
        if busy:
            hold_the_gil(client, tmp_path / "running")
        ssh = client.process.pid
        os.kill(ssh, signal.SIGSTOP)
        wait_gone([kernel, child], 2.0 + 1.0 + 5.0)  # the silence, the grace, and 5 s
        os.kill(ssh, signal.SIGCONT)
    finally:
        client.shutdown(timeout_s=1.0)


def test_a_kernel_held_in_one_c_call_on_a_live_link_is_not_taken_for_a_silent_one(
        lab: Lab, inbox: Inbox, tmp_path: Path) -> None:
    """Its reader cannot read the beats while the code holds the GIL, but they keep coming
    (unread bytes on its stdin): past three times the silence limit it still runs."""
    client = KernelClient(inbox, remote=remote(lab, silent_after(lab, 2.0)))
    try:
        kernel, child = kernel_and_child(client, inbox)
        hold_the_gil(client, tmp_path / "running")
        time.sleep(6.0)
        assert running(kernel) and running(child)
    finally:
        client.shutdown(timeout_s=1.0)


def transcript(client: KernelClient, inbox: Inbox) -> str:
    """The whole lesson through ``client``, as ``gpumon lesson`` prints it, numbers masked
    (times, memory readings and a model's random weights differ between any two runs)."""
    import re

    from gpumon.cli.lesson import format_step
    from gpumon.playground.lesson.steps import LESSON

    steps, text = tuple(LESSON), []
    for number in range(1, len(steps) + 1):
        rid = client.request("lesson", (steps, number, None))
        text.append(format_step(inbox.wait("reply", rid, timeout=START_S).data, len(steps)))
    masked = re.sub(r"[-+]?\d+(?:[.,]\d+)*(?:e[-+]?\d+)?", "N", "".join(text))
    # a size's unit follows its value: a step's peak was some bytes in one kernel and
    # some KiB in the other (CI, once: the two processes' allocators differ)
    masked = re.sub(r"\bN (?:B|KiB|MiB|GiB|TiB)\b", "N SIZE", masked)
    return re.sub(r"[ \[]+", " ", masked)  # a random weight's sign moves a column


def test_the_lesson_end_to_end_gives_the_local_transcript(
        ssh_client: KernelClient, inbox: Inbox) -> None:
    local_inbox = Inbox()
    local = KernelClient(local_inbox, in_band=True)
    try:
        over_ssh = transcript(ssh_client, inbox)
        here = transcript(local, local_inbox)
    finally:
        local.shutdown(timeout_s=1.0)
    if over_ssh != here:  # the first lines that differ, for the reader of a failure
        import difflib

        diff = difflib.unified_diff(here.splitlines(), over_ssh.splitlines(), "local", "ssh",
                                    lineterm="", n=1)
        raise AssertionError("\n".join(list(diff)[:40]))
    assert "Attempting to deserialize object on a CUDA device" in here  # torch's own words


@pytest.mark.parametrize("output", ["printf 'not a frame at all, just text\\n'",
                                    "printf '\\000\\000\\001\\000half'"],
                         ids=["garbage", "half-a-frame"])
def test_a_remote_that_sends_what_is_no_kernels_gets_a_card_and_a_fresh_start(
        lab: Lab, inbox: Inbox, output: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Garbage, or a frame that stops half-way (then silence), from the far end: the reader
    refuses it, the link is ended, the card says why, and the next action starts again."""
    from gpumon.playground.data import wire

    # the half frame is one write (a header and 4 bytes of 256); then nothing more comes
    monkeypatch.setattr(wire, "FRAME_REST_S", 0.5)
    command = remote_script(lab.bin / "not-a-kernel", (
        f"export GPUMON_TEST_LAB={lab.folder}\n{output}\nexec sleep 1000"))
    client = KernelClient(inbox, remote=remote(lab, command))
    try:
        client.request("run", RunCode("1"))
        ended = inbox.wait("died", timeout=60.0).data
        assert ended.reason == "protocol" and ended.detail
        first = client.process
        client.request("run", RunCode("1"))  # a fresh ssh and a fresh start
        inbox.wait("died", timeout=60.0)
        assert client.process is not first and client.starts == 2
    finally:
        client.shutdown(timeout_s=1.0)
