"""What a remote kernel's watchdog says on the connection's stderr when it ended the kernel at
its memory cap (issue 50): read from the real stderr of a stand-in for ``ssh``, as untrusted
text (two numbers taken, nothing else)."""

from __future__ import annotations

import shlex

import pytest

from gpumon.playground.client.keeper import REPORT_LINE
from gpumon.playground.client.ssh_kernel import SshKernel
from gpumon.playground.kernel import watchdog
from gpumon.ssh.link import SshLink


def ended_saying(stderr: str) -> SshKernel:
    kernel = SshKernel(SshLink.start(["sh", "-c", f"printf %s {shlex.quote(stderr)} >&2"]),
                       "lab1")
    kernel.wait(10.0)
    for stream in (kernel.stdin, kernel.stdout):
        if stream is not None:
            stream.close()
    return kernel


def test_the_watchdogs_line_is_found_among_others() -> None:
    assert watchdog.REPORT_LINE == REPORT_LINE  # the window's copy of the kernel side's
    kernel = ended_saying(f"a warning\n{REPORT_LINE}memory 1620000000 1500000000\nbye\n")
    assert kernel.ran_out() == (1_620_000_000, 1_500_000_000)
    assert ended_saying("Killed\n").ran_out() is None


@pytest.mark.parametrize("line", ["memory 1 2 3", "memory -1 2", "memory x 2",
                                  "memory " + "9" * 400 + " 2", "memory 1e9 2",
                                  "memory \u0661\u0662 2"])
def test_a_hostile_line_is_no_report(line: str) -> None:
    assert ended_saying(f"{REPORT_LINE}{line}\n").ran_out() is None


def test_the_watchdog_writes_its_report_to_stderr_with_a_dash(
        monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv(watchdog.REPORT_ENV, "-")
    watchdog.report(1_620_000_000, 1_500_000_000)
    assert capfd.readouterr().err == f"{REPORT_LINE}memory 1620000000 1500000000\n"
