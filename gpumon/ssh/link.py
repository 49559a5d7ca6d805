"""One ``ssh`` child: bytes in, lines or bytes out, its stderr kept, and an end that always comes.

    link = SshLink.start(ssh_argv(target, command, options))
    line = link.read_line(timeout_s=3.0)   # bytes without b"\\n"; None: nothing in time
    link.write(b"...")                     # to the remote command's stdin (a kernel's frames)
    link.kill()                            # any thread: the child and its group end, < 1 s
    link.close()                           # the reading thread: kill() and free the pipes

The child runs in a session (process group) of its own, so ``kill()`` reaches ssh and
anything its config started (a ProxyCommand): SIGTERM, then SIGKILL after ``grace_s``,
which also ends a child that is stopped (SIGSTOP) or stuck on a dead link. Reading is
bounded: a line longer than ``max_line`` bytes raises :class:`LineTooLong` (the caller ends
the link), so a remote that sends endless output without a newline costs at most
``max_line`` plus one read of memory. stderr is read in the same calls (ssh's messages
say why it failed) and only its last ``STDERR_KEEP`` bytes are kept. Reads wait in
``poll()``, never in a blocking read, so a caller's timeout always holds. Linux and macOS.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence

MAX_LINE = 1 << 20  # 1 MiB: a snapshot of 8 GPUs with 200 processes is ~150 KB
STDERR_KEEP = 16 << 10
CHUNK = 64 << 10


class LinkEnded(Exception):
    """The remote side's output ended (ssh exited or closed its stdout)."""

    def __init__(self, returncode: int | None, stderr: str) -> None:
        super().__init__(f"ssh ended (exit {returncode})")
        self.returncode = returncode
        self.stderr = stderr


class LineTooLong(Exception):
    """A line over the cap arrived; the link should be closed."""


class SshLink:
    """A started ssh child with bounded, time-limited reads. One reader thread at a time;
    ``kill()`` may be called from any thread."""

    def __init__(self, proc: subprocess.Popen[bytes], max_line: int = MAX_LINE) -> None:
        self.proc = proc
        self.max_line = max_line
        self._buf = bytearray()
        self._err = bytearray()
        self._out_open = True
        self._err_open = True
        self._closed = False
        assert proc.stdout is not None and proc.stderr is not None
        self._out_fd = proc.stdout.fileno()
        self._err_fd = proc.stderr.fileno()
        self._poll = select.poll()
        self._poll.register(self._out_fd, select.POLLIN)
        self._poll.register(self._err_fd, select.POLLIN)

    @classmethod
    def start(cls, argv: Sequence[str], env: Mapping[str, str] | None = None,
              max_line: int = MAX_LINE) -> SshLink:
        """Start ``argv`` (an ssh command line) in a session of its own; OSError when the
        program cannot be started."""
        proc = subprocess.Popen(list(argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, bufsize=0, close_fds=True,
                                start_new_session=True,
                                env=None if env is None else dict(env))
        return cls(proc, max_line)

    @property
    def pid(self) -> int:
        return self.proc.pid

    @property
    def buffered(self) -> int:
        """Bytes read from the child and not handed out yet (a line over ``max_line`` is
        dropped: a remote that never ends its line costs little here)."""
        return len(self._buf)

    # -- reading -----------------------------------------------------------------------------
    def read_line(self, timeout_s: float) -> bytes | None:
        """The next line without its newline; None when none came within ``timeout_s``.
        LinkEnded at the end of the output, LineTooLong past ``max_line``."""
        deadline = time.monotonic() + max(0.0, timeout_s)
        while True:
            end = self._buf.find(b"\n")
            if end >= 0:
                line = bytes(self._buf[:end])
                del self._buf[:end + 1]
                return line
            if len(self._buf) > self.max_line:
                self._buf.clear()
                raise LineTooLong()
            if not self._out_open:
                raise self._ended()
            if not self._pump(deadline - time.monotonic()) and time.monotonic() >= deadline:
                return None

    def read_some(self, timeout_s: float) -> bytes:
        """Whatever bytes came (a kernel's frames), at most ``max_line``; b"" when none came
        within ``timeout_s``; LinkEnded at the end of the output."""
        deadline = time.monotonic() + max(0.0, timeout_s)
        while not self._buf:
            if not self._out_open:
                raise self._ended()
            if not self._pump(deadline - time.monotonic()) and time.monotonic() >= deadline:
                return b""
        data = bytes(self._buf[:self.max_line])
        del self._buf[:len(data)]
        return data

    def _pump(self, wait_s: float) -> bool:
        """Wait up to ``wait_s`` and read what is there; False when the time ran out with
        nothing read from stdout."""
        if wait_s <= 0:
            wait_s = 0.0
        events = self._poll.poll(round(wait_s * 1000))
        got = False
        for fd, _ in events:
            try:
                data = os.read(fd, CHUNK)
            except (BlockingIOError, InterruptedError):
                continue
            except OSError:
                data = b""
            if fd == self._out_fd:
                got = True
                if data:
                    self._buf += data
                else:
                    self._out_open = False
                    self._poll.unregister(fd)
            elif data:
                self._err += data
                del self._err[:-STDERR_KEEP]
            else:
                self._err_open = False
                self._poll.unregister(fd)
        return got

    def _ended(self) -> LinkEnded:
        """stdout is closed: drain stderr (ssh's last words) and wait for the exit."""
        deadline = time.monotonic() + 2.0
        while self._err_open and time.monotonic() < deadline:
            self._pump(deadline - time.monotonic())
        try:
            code: int | None = self.proc.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            code = None
        return LinkEnded(code, self.stderr_text())

    def stderr_text(self) -> str:
        """The last ``STDERR_KEEP`` bytes ssh (or the remote command) wrote to stderr."""
        return self._err.decode("utf-8", "replace")

    # -- writing -----------------------------------------------------------------------------
    def write(self, data: bytes) -> None:
        """Send ``data`` to the remote command's stdin; OSError (BrokenPipeError) when the
        link is gone. Blocks while the pipe is full (a remote that does not read)."""
        stdin = self.proc.stdin
        if stdin is None or self._closed:
            raise BrokenPipeError("the link is closed")
        stdin.write(data)

    # -- ending ------------------------------------------------------------------------------
    def terminate(self) -> None:
        """Ask the child and its group to end (SIGTERM) without waiting: many links are
        asked first, then each ``kill()`` finds its child gone."""
        self._closed = True
        if self.proc.poll() is None:
            self._signal(signal.SIGTERM)

    def kill(self, grace_s: float = 0.3) -> int | None:
        """End the child and its process group: stdin closed, SIGTERM, SIGKILL after
        ``grace_s``; returns the exit status. Any thread may call it (a reader blocked in
        ``read_line`` then sees the end); safe to call twice."""
        self._closed = True
        proc = self.proc
        if proc.stdin is not None:
            with contextlib.suppress(OSError):
                proc.stdin.close()
        if proc.poll() is None:
            self._signal(signal.SIGTERM)
            try:
                proc.wait(grace_s)
            except subprocess.TimeoutExpired:
                pass
        self._signal(signal.SIGKILL)  # also what ssh left in its group (a ProxyCommand)
        try:
            return proc.wait(1.0)
        except subprocess.TimeoutExpired:  # only a process stuck in the kernel (D state)
            return None

    def close(self, grace_s: float = 0.3) -> int | None:
        """``kill()``, then release the pipes: by the thread that reads, once done."""
        code = self.kill(grace_s)
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        return code

    def _signal(self, sig: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, sig)
