"""A playground kernel on another machine: ``ssh HOST gpumon kernel --stdio`` (issue 50).

The client (``kernel_client.py``) speaks to it exactly as to a local kernel: the same frames
on the ssh child's stdin and stdout, the same reader and writer threads, the same faults
(death, garbage, silence: a card, and a fresh kernel on the next action). :class:`SshKernel`
is the part of ``subprocess.Popen`` the client uses, over an :class:`~gpumon.ssh.link.SshLink`:
``pid`` is the local ``ssh`` child's (its pidfd wakes the reader when ssh ends; its process
group is what the client kills), and the kernel's own pid on HOST comes in its ``hello``.

Ending it is ending ``ssh``: the remote watchdog (``cli/kernel.py``) sees the connection's
end and ends the kernel and all it started within its grace, whatever the kernel's
interpreter is doing. So the client's kill (a Stop that did not stop in time, garbage, a
closed output, quitting) kills the ssh child, and no signal has to cross the link. Stop is
:data:`STOP` on the connection, which the remote watchdog (it relays the window's bytes to
the kernel) turns into a SIGINT there, as the local window's Stop is; a kernel ended at its
memory cap there says so on stderr (:meth:`SshKernel.ran_out`).

ssh's stderr (and the remote command's: "gpumon: not found", a Python traceback) is read by
a thread of its own, so the pipe never fills, and only its last ``STDERR_KEEP`` bytes are
kept: when the kernel never said hello or ssh failed, :meth:`SshKernel.problem` says why in
one sentence with what to do (``ssh/diagnose.py``: a login refused, gpumon missing there).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from dataclasses import dataclass

from gpumon.i18n import tr
from gpumon.playground.client.keeper import REPORT_LINE, STOP_HEADER, parse_report
from gpumon.ssh.command import SshOptions, remote_command, ssh_argv, ssh_program
from gpumon.ssh.diagnose import Kind, diagnose
from gpumon.ssh.link import STDERR_KEEP, SshLink
from gpumon.ssh.target import Target

#: The remote gpumon's arguments that start a kernel there.
STDIO_ARGS = ("kernel", "--stdio")
#: The window's Stop on the connection: a bare frame header that no frame has.
STOP = STOP_HEADER
#: What ssh's own failures are: each has a sentence worth more than an exit status.
LINK_PROBLEMS = frozenset(Kind) - {Kind.OTHER, Kind.KILLED}


@dataclass(frozen=True, slots=True)
class Remote:
    """Where the kernel runs: the machine, and how ssh reaches it."""

    target: Target
    options: SshOptions

    @property
    def host(self) -> str:
        return self.target.name

    def argv(self) -> list[str]:
        command = remote_command(self.options.remote_command, STDIO_ARGS)
        return ssh_argv(self.target, command, self.options, ssh_program(self.options))


class SshKernel:
    """A kernel at the far end of an ssh child, with the part of ``Popen`` the client uses."""

    def __init__(self, link: SshLink, host: str) -> None:
        self.link = link
        self.host = host
        self.proc = link.proc
        self.pid = link.pid
        self.args = self.proc.args
        self.stdin = self.proc.stdin
        self.stdout = self.proc.stdout
        self._err = bytearray()
        self.failed = ""  # why ssh could not be started
        self._drain = threading.Thread(target=self._read_stderr, daemon=True,
                                       name=f"gpumon-kernel-ssh-stderr-{self.pid}")
        self._drain.start()

    @classmethod
    def start(cls, remote: Remote) -> SshKernel:
        """Start ssh. Where it cannot be started (no ssh here), a stand-in that ends at once
        carries the sentence, so the client reports it as any kernel's end."""
        try:
            return cls(SshLink.start(remote.argv()), remote.host)
        except OSError as exc:
            kernel = cls(SshLink.start([sys.executable, "-c", ""]), remote.host)
            kernel.failed = tr("ssh could not be started ({error}).", error=exc)
            return kernel

    @property
    def returncode(self) -> int | None:
        return self.proc.returncode

    def _read_stderr(self) -> None:
        stream = self.proc.stderr
        if stream is None:
            return
        fd = stream.fileno()
        try:
            while data := os.read(fd, 4096):
                self._err += data
                del self._err[:-STDERR_KEEP]
        except OSError:
            pass
        finally:
            stream.close()

    def stderr_text(self) -> str:
        """What ssh and the remote command wrote to stderr last (waits briefly for its end)."""
        self._drain.join(1.0)
        return self._err.decode("utf-8", "replace")

    def problem(self) -> str | None:
        """Once ended: the sentence for a failure of the link or of the remote command (a
        login refused, gpumon missing there, the link given up), else None (the kernel's
        own end, which the client's card says)."""
        if self.failed:
            return self.failed
        found = diagnose(self.stderr_text(), self.returncode, self.host)
        return found.sentence if found.kind in LINK_PROBLEMS else None

    def ran_out(self) -> tuple[int, int] | None:
        """Once ended: ``(used, cap)`` bytes when the remote watchdog ended the kernel at its
        memory cap (its line on stderr, ``watchdog.report``), else None."""
        lines = self.stderr_text().splitlines()
        said = [line[len(REPORT_LINE):] for line in lines if line.startswith(REPORT_LINE)]
        return parse_report(said[-1][:200]) if said else None

    def poll(self) -> int | None:
        return self.proc.poll()

    def wait(self, timeout: float | None = None) -> int:
        return self.proc.wait(timeout)

    def send_signal(self, sig: int) -> None:
        """Signals never cross ssh; only the ssh child's own end is a signal's business."""
        with contextlib.suppress(OSError):
            self.proc.send_signal(sig)

    def kill(self) -> None:
        """SIGKILL ssh and its group (a ProxyCommand) at once: the remote watchdog then ends
        the kernel. The pipes stay the client's threads' to close."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, signal.SIGKILL)
