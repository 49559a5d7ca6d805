"""One machine's snapshot stream over SSH, kept connected by a thread of its own.

The thread starts ``ssh HOST gpumon stream --interval S`` (``ssh/command.py``), waits for the
stream's header (skipping what a login script may print first), then decodes one snapshot a
line (``text/json_in.py``) and keeps the newest. When the link ends, for whatever reason, ssh's
last words become one sentence (``ssh/diagnose.py``) and the thread connects again after a
backoff (``ssh/backoff.py``): doubling waits with jitter, so thirty machines that lost the
network together do not come back in one storm. A stalled link (no line) is left to ssh's
ServerAlive keep-alive to end; the reader only notes when the last line came.

Where gpumon is not installed there (ssh's exit status 127 for the default command), the next
try reads the machine's ``nvidia-smi`` instead (``smi.py``), with fewer fields.

A remote that sends garbage, a line over 1 MiB, or another schema is dropped with a sentence
and tried again later; memory stays bounded (``ssh/link.py``). ``stop()`` ends the ssh child
and the thread within about a second, even on a link that hangs.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable, Mapping

from gpumon.i18n import tr
from gpumon.remote.smi import MARK, SmiParser, smi_command
from gpumon.ssh.backoff import Backoff
from gpumon.ssh.command import (
    DEFAULT_REMOTE,
    SshOptions,
    remote_command,
    ssh_argv,
    ssh_program,
)
from gpumon.ssh.diagnose import Kind, diagnose
from gpumon.ssh.link import LineTooLong, LinkEnded, SshLink
from gpumon.ssh.target import Target
from gpumon.telemetry.model.types import Snapshot
from gpumon.text.json_in import StreamError, decode_header, decode_snapshot
from gpumon.untrusted import for_terminal

HEADER_WAIT_S = 30.0  # from ssh's start to the stream's header (a login, a slow import)
PREAMBLE_LINES = 50  # lines a login script may print before the header


@dataclasses.dataclass(frozen=True, slots=True)
class FeedState:
    """What one machine's feed knows now."""

    snapshot: Snapshot | None  # the newest, restamped to this machine's clock
    arrived_s: float | None  # time.monotonic() when it arrived
    connected: bool  # the stream's header came and the link has not ended since
    problem: str  # why not connected (a sentence); "" while connected or before any try
    problem_kind: Kind | None = None
    lines: int = 0  # snapshots decoded over the feed's life


def restamped(snap: Snapshot, now_s: float) -> Snapshot:
    """``snap`` moved to this machine's clock: its time becomes ``now_s`` (its arrival), and
    each GPU's reading keeps its distance to it (another machine's clock may be off)."""
    shift = now_s - snap.timestamp_s
    samples = tuple(dataclasses.replace(s, timestamp_s=s.timestamp_s + shift)
                    for s in snap.samples)
    return dataclasses.replace(snap, timestamp_s=now_s, samples=samples)


class StreamFeed:
    """The newest snapshot of one machine, read over ssh by a daemon thread."""

    def __init__(self, target: Target, options: SshOptions, interval_s: float, *,
                 extra_args: tuple[str, ...] = (), env: Mapping[str, str] | None = None,
                 backoff: Backoff | None = None,
                 on_change: Callable[[], None] | None = None) -> None:
        self.target = target
        self.options = options
        self.interval_s = interval_s
        self.extra_args = extra_args
        self.env = env
        self.backoff = backoff or Backoff()
        self._on_change = on_change
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        self._state = FeedState(None, None, False, "")
        self._link: SshLink | None = None
        self._thread: threading.Thread | None = None
        self.connects = 0  # ssh children started (tests and benchmarks read it)
        self.smi = False  # gpumon is not there: nvidia-smi is read instead (smi.py)

    # -- the caller's side -------------------------------------------------------------------
    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, daemon=True,
                                            name=f"gpumon-ssh-{self.target.name[:40]}")
            self._thread.start()

    def state(self) -> FeedState:
        with self._lock:
            return self._state

    def wait_for(self, predicate: Callable[[FeedState], bool], timeout_s: float) -> FeedState:
        """Block until ``predicate(state)`` holds or ``timeout_s`` passed; the state then."""
        with self._cond:
            self._cond.wait_for(lambda: predicate(self._state) or self.backoff.cancelled,
                                timeout_s)
            return self._state

    def ask_to_stop(self) -> None:
        """Begin ``stop()`` without waiting: no reconnect, the ssh child asked to end."""
        self.backoff.cancel()
        with self._lock:
            link = self._link
            self._cond.notify_all()
        if link is not None:
            link.terminate()

    def stop(self, join_s: float = 1.0) -> None:
        """End the ssh child and the thread (which never starts another)."""
        self.backoff.cancel()
        with self._lock:
            link = self._link
            self._cond.notify_all()
        if link is not None:
            link.kill(grace_s=0.2)
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(join_s)

    @property
    def pid(self) -> int | None:
        """The ssh child's process id while one runs."""
        with self._lock:
            return None if self._link is None else self._link.pid

    # -- the thread ----------------------------------------------------------------------------
    def _set(self, **changes: object) -> None:
        with self._cond:
            self._state = dataclasses.replace(self._state, **changes)  # type: ignore[arg-type]
            self._cond.notify_all()
        if self._on_change is not None:
            self._on_change()

    def _argv(self) -> list[str] | None:
        program = ssh_program(self.options)
        if program is None:
            return None
        if self.smi:
            command = smi_command(self.interval_s)
        else:
            args = ["stream", "--interval", f"{self.interval_s:g}", *self.extra_args]
            command = remote_command(self.options.remote_command, args)
        return ssh_argv(self.target, command, self.options, program)

    def _run(self) -> None:
        while not self.backoff.cancelled:
            started = time.monotonic()
            self._connect_once()
            self.backoff.ended(time.monotonic() - started)
            if not self.backoff.wait(self.backoff.delay()):
                break

    def _connect_once(self) -> None:
        argv = self._argv()
        if argv is None:
            self._fail(diagnose("", None, self.target.name).sentence, Kind.NO_SSH)
            return
        try:
            link = SshLink.start(argv, self.env)
        except OSError as exc:
            self._fail(tr("ssh could not be started ({error}).", error=exc), Kind.NO_SSH)
            return
        with self._lock:
            if self.backoff.cancelled:  # stop() came while it started
                link.close()
                return
            self._link = link
            self.connects += 1
        try:
            self._read_smi(link) if self.smi else self._read(link)
        except LinkEnded as ended:
            if not self.backoff.cancelled:
                problem = diagnose(ended.stderr, ended.returncode, self.target.name)
                self._ended(problem.kind, self._stream_words(ended.stderr) or problem.sentence)
        except LineTooLong:
            self._fail(tr("{host} sent a line over 1 MiB: that is not a gpumon stream, so "
                          "gpumon dropped the connection.", host=self._host()), Kind.OTHER)
        except StreamError as exc:
            self._fail(tr("{host} does not send gpumon snapshots: {error}.",
                          host=self._host(), error=for_terminal(str(exc))), Kind.OTHER)
        finally:
            with self._lock:
                self._link = None
            link.close(grace_s=0.2)

    def _ended(self, kind: Kind, sentence: str) -> None:
        """A connection ended; where gpumon is missing there (and the default command was
        asked), the next try reads nvidia-smi at once; where that is missing too, the try
        after the wait asks for gpumon again (it may have been installed meanwhile)."""
        if kind is Kind.REMOTE_MISSING and not self.smi \
                and self.options.remote_command == DEFAULT_REMOTE:
            self.smi = True
            self.backoff.skip_next()
            self._fail(sentence, kind)
            return
        if kind is Kind.REMOTE_MISSING and self.smi:
            self.smi = False
            sentence = tr("Neither gpumon nor nvidia-smi was found on {host}: install gpumon "
                          "there (pip install gpumon), or the NVIDIA driver, which brings "
                          "nvidia-smi.", host=self._host())
        self._fail(sentence, kind)

    def _host(self) -> str:
        return for_terminal(self.target.name)

    def _stream_words(self, stderr: str) -> str:
        """A sentence for a remote gpumon that has no ``stream`` (an older one)."""
        if "invalid choice: 'stream'" in stderr or "invalid choice: \"stream\"" in stderr:
            return tr("The gpumon on {host} is too old to stream snapshots: upgrade it there "
                      "(pip install -U gpumon).", host=self._host())
        return ""

    def _fail(self, sentence: str, kind: Kind) -> None:
        self._set(connected=False, problem=sentence, problem_kind=kind)

    def _header(self, link: SshLink, is_header: Callable[[bytes], bool]) -> bytes:
        """The header line, after what a login script may print first."""
        deadline = time.monotonic() + HEADER_WAIT_S
        for _ in range(PREAMBLE_LINES):
            line = link.read_line(max(0.0, deadline - time.monotonic()))
            if line is None:
                raise StreamError(tr("no stream header within {n} s", n=int(HEADER_WAIT_S)))
            if is_header(line):
                return line
        raise StreamError(tr("no stream header in its first {n} lines", n=PREAMBLE_LINES))

    def _read_smi(self, link: SshLink) -> None:
        """nvidia-smi's lines (``smi.py``), a Snapshot each time every GPU had its line."""
        self._header(link, lambda line: line.strip() == MARK.encode())
        self._set(connected=True, problem="", problem_kind=None)
        parser = SmiParser(self.target.name)
        while not self.backoff.cancelled:
            line = link.read_line(max(1.0, self.interval_s))
            if line is None:
                continue
            snap = parser.feed(line.decode("utf-8", "replace"))
            if snap is not None:
                self._set(snapshot=snap, arrived_s=time.monotonic(),
                          lines=self._state.lines + 1)

    def _read(self, link: SshLink) -> None:
        decode_header(self._header(link, lambda line: line.lstrip().startswith(b"{")))
        self._set(connected=True, problem="", problem_kind=None)
        while not self.backoff.cancelled:
            line = link.read_line(max(1.0, self.interval_s))
            if line is None:
                continue  # a stall: staleness is the reader's to judge; ssh ends dead links
            snap = decode_snapshot(line)
            now = time.monotonic()
            self._set(snapshot=restamped(snap, time.time()), arrived_s=now,
                      lines=self._state.lines + 1)
