"""The SSH transport without a server: host checks, the command line, ssh's messages as
sentences, the bounded reader and the sure end of a child (real child processes, no ssh)."""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from testkit import running

from gpumon.ssh.backoff import Backoff
from gpumon.ssh.command import SshOptions, remote_command, ssh_argv
from gpumon.ssh.diagnose import Kind, diagnose
from gpumon.ssh.link import LineTooLong, LinkEnded, SshLink
from gpumon.ssh.target import Target, TargetError, parse_target, parse_targets


# -- target.py ---------------------------------------------------------------------------------
@pytest.mark.parametrize("text, target", [
    ("lab1", Target("lab1")),
    ("alice@lab1", Target("lab1", "alice")),
    ("alice@gpu-07.lab.example.org:2222", Target("gpu-07.lab.example.org", "alice", 2222)),
    ("10.0.0.7:22", Target("10.0.0.7", None, 22)),
    ("[::1]:2200", Target("::1", None, 2200)),
    ("bob@[fe80::1%eth0]", Target("fe80::1%eth0", "bob")),
])
def test_hosts_that_are_accepted(text: str, target: Target) -> None:
    assert parse_target(text) == target
    assert parse_target(target.name) == target  # the name reads back as the same machine


@pytest.mark.parametrize("text, words", [
    ("-oProxyCommand=touch /tmp/x", "cannot begin with '-'"),
    ("-lab1", "cannot begin with '-'"),
    ("alice@-oProxyCommand=x", "cannot begin with '-'"),
    ("-alice@lab1", "cannot begin with '-'"),
    ("lab1 lab2", "spaces or control characters"),
    ("lab1\n-oProxyCommand=x", "spaces or control characters"),
    ("lab1\x1b[31m", "spaces or control characters"),
    ("lab1;reboot", "only letters, digits"),
    ("$(reboot)", "only letters, digits"),
    ("lab1:0", "1 to 65535"),
    ("lab1:ssh", "1 to 65535"),
    ("al ice@lab1", "spaces or control characters"),
    ("al'ice@lab1", "characters a login has not"),
    ("", "is empty"),
    ("@lab1", "is empty"),
])
def test_hosts_that_are_refused(text: str, words: str) -> None:
    with pytest.raises(TargetError) as refused:
        parse_target(text)
    assert words in str(refused.value)
    assert "\n" not in str(refused.value) and "\x1b" not in str(refused.value)


def test_a_host_list_from_a_file(tmp_path: Path) -> None:
    hosts = tmp_path / "lab.txt"
    hosts.write_text("# the lab\nlab1\n\nalice@lab2:2222  # upstairs\nlab1\n")
    assert [t.name for t in parse_targets(f"@{hosts}")] == ["lab1", "alice@lab2:2222"]
    assert [t.name for t in parse_targets("lab1, lab2,")] == ["lab1", "lab2"]
    hosts.write_text("lab1\n-oProxyCommand=x\n")
    with pytest.raises(TargetError, match="cannot begin"):
        parse_targets(f"@{hosts}")
    with pytest.raises(TargetError, match="cannot read the host list"):
        parse_targets(f"@{tmp_path / 'missing'}")


# -- command.py --------------------------------------------------------------------------------
def test_the_command_line_keeps_the_destination_after_double_dash() -> None:
    argv = ssh_argv(Target("lab1", "alice", 2222), "gpumon stream",
                    SshOptions(config_file="/etc/lab_ssh_config"))
    assert argv[:2] == ["ssh", "-T"]
    assert argv[-3:] == ["--", "alice@lab1", "gpumon stream"]
    options = argv[:argv.index("--")]
    assert "BatchMode=yes" in options and "ServerAliveInterval=5" in options
    assert "ServerAliveCountMax=3" in options
    assert options[options.index("-F") + 1] == "/etc/lab_ssh_config"
    assert options[options.index("-p") + 1] == "2222"
    assert not any("StrictHostKeyChecking" in a or "KnownHosts" in a for a in argv)


def test_gpumons_arguments_reach_the_remote_shell_as_one_word_each() -> None:
    hostile = "zh_CN; touch /tmp/owned $(reboot) `id` 'quote\""
    command = remote_command("~/venv/bin/gpumon", ["stream", "--lang", hostile])
    assert command.startswith("~/venv/bin/gpumon stream --lang ")  # the prefix as written
    assert shlex.split(command) == ["~/venv/bin/gpumon", "stream", "--lang", hostile]
    shell = subprocess.run(["sh", "-c", "printf '%s\\n' " + command.split(" ", 1)[1]],
                           capture_output=True, text=True, timeout=10)
    assert shell.stdout.splitlines() == ["stream", "--lang", hostile]


# -- diagnose.py ---------------------------------------------------------------------------------
@pytest.mark.parametrize("stderr, code, kind, words", [
    ("root@127.0.0.1: Permission denied (publickey).\r\n", 255, Kind.AUTH, "ssh-copy-id lab1"),
    ("No ED25519 host key is known for [127.0.0.1]:2222 and you have requested strict "
     "checking.\r\nHost key verification failed.\r\n", 255, Kind.HOST_UNKNOWN, "ssh lab1"),
    ("@@@@\r\n@    WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED!     @\r\n"
     "Host key verification failed.\r\n", 255, Kind.HOST_CHANGED, "ssh-keygen -R lab1"),
    ("ssh: connect to host 127.0.0.1 port 1: Connection refused\r\n", 255, Kind.REFUSED,
     "refused the connection"),
    ("ssh: connect to host 10.9.9.9 port 22: No route to host\r\n", 255, Kind.NO_ROUTE,
     "no route"),
    ("ssh: Could not resolve hostname nosuch: Name or service not known\r\n", 255, Kind.DNS,
     "not known"),
    ("ssh: connect to host 10.9.9.9 port 22: Connection timed out\r\n", 255, Kind.TIMEOUT,
     "did not answer in time"),
    ("Timeout, server 127.0.0.1 not responding.\r\n", 255, Kind.DEAD_LINK,
     "stopped answering"),
    ("bash: line 1: gpumon: command not found\n", 127, Kind.REMOTE_MISSING, "pip install"),
    ("", -9, Kind.KILLED, "SIGKILL"),
    ("weird\x1b[2J failure\n", 255, Kind.OTHER, "weird\\x1b[2J failure"),
])
def test_ssh_messages_become_one_sentence(stderr: str, code: int, kind: Kind,
                                          words: str) -> None:
    problem = diagnose(stderr, code, "lab1")
    assert problem.kind is kind
    assert words in problem.sentence
    assert "\x1b" not in problem.sentence


# -- link.py -------------------------------------------------------------------------------------
def child(code: str) -> SshLink:
    return SshLink.start([sys.executable, "-c", code], max_line=1 << 20)


def test_lines_arrive_whole_and_a_silent_child_times_out() -> None:
    link = child("import sys, time\nsys.stdout.write('one\\ntw'); sys.stdout.flush()\n"
                 "time.sleep(0.3); print('o', flush=True); time.sleep(30)")
    try:
        assert link.read_line(10) == b"one"
        assert link.read_line(10) == b"two"
        started = time.monotonic()
        assert link.read_line(0.2) is None
        assert time.monotonic() - started < 5
    finally:
        link.close()


def test_the_end_carries_the_exit_status_and_stderr() -> None:
    link = child("import sys; print('last'); sys.stderr.write('why it ended\\n'); sys.exit(3)")
    assert link.read_line(10) == b"last"
    with pytest.raises(LinkEnded) as ended:
        link.read_line(10)
    assert ended.value.returncode == 3 and "why it ended" in ended.value.stderr
    link.close()


def test_a_line_over_the_cap_and_endless_output_stay_bounded() -> None:
    link = child("import sys\nwhile True: sys.stdout.write('x' * 65536)")
    try:
        with pytest.raises(LineTooLong):
            link.read_line(30)
        assert link.buffered == 0
    finally:
        link.close()


def test_stderr_keeps_only_its_tail() -> None:
    link = child("import sys\nfor i in range(20000): sys.stderr.write(f'noise {i}\\n')\n"
                 "print('done', flush=True)")
    assert link.read_line(30) == b"done"
    with pytest.raises(LinkEnded) as ended:
        link.read_line(30)
    assert len(ended.value.stderr) <= 16 << 10 and "noise 19999" in ended.value.stderr
    link.close()


def test_bytes_both_ways_for_a_kernels_frames() -> None:
    link = child("import sys\nsys.stdout.buffer.write(sys.stdin.buffer.read(5)[::-1])\n"
                 "sys.stdout.flush()")
    link.write(b"\x00\x01abc")
    got = b""
    while len(got) < 5:
        got += link.read_some(10)
    assert got == b"cba\x01\x00"
    link.close()


def test_kill_ends_a_stopped_child_and_its_group_within_a_second(tmp_path: Path) -> None:
    """A hung link: ssh and what it started (a ProxyCommand) stopped with SIGSTOP."""
    pid_file = tmp_path / "grandchild"
    link = child("import subprocess, sys, time\n"
                 "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
                 f"open({str(pid_file)!r}, 'w').write(str(p.pid))\n"
                 "print('ready', flush=True); time.sleep(60)")
    assert link.read_line(30) == b"ready"
    grandchild = int(pid_file.read_text())
    os.killpg(link.pid, signal.SIGSTOP)
    started = time.monotonic()
    link.kill(grace_s=0.3)
    assert time.monotonic() - started < 1.0
    assert link.proc.returncode is not None and link.proc.returncode < 0
    deadline = time.monotonic() + 5
    while running(grandchild) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not running(grandchild)
    link.close()


# -- backoff.py ----------------------------------------------------------------------------------
def test_backoff_doubles_to_its_cap_spreads_and_starts_over() -> None:
    rolls = iter([0.5] * 8 + [0.0, 1.0])
    backoff = Backoff(1.0, 8.0, jitter=0.2, healthy_s=30, rand=lambda: next(rolls))
    assert [backoff.delay() for _ in range(6)] == [1.0, 2.0, 4.0, 8.0, 8.0, 8.0]
    backoff.ended(5.0)  # a short connection: no reset
    assert backoff.delay() == 8.0
    backoff.ended(60.0)  # one that lasted
    assert backoff.delay() == 1.0
    assert backoff.delay() == pytest.approx(2.0 * 0.8) and backoff.delay() == pytest.approx(
        4.0 * 1.2)
    backoff.cancel()
    assert backoff.wait(60) is False
