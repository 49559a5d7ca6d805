"""The kernel's message protocol: length-prefixed pickles of gpumon's own values over two pipes.

A frame is a 4-byte big-endian length followed by that many bytes of pickle; no frame is
larger than :data:`MAX_FRAME_BYTES` (refused with a sentence on either side).

Why pickle and not JSON: both sides are gpumon of the same install, and the messages are
gpumon's frozen values (Action, Outcome, ErrorInfo, LoadStatus, StepResult, Snapshot) with
tuples, sets and floats inside them; pickle carries them unchanged where JSON would need a
converter per class, kept in step by hand. What makes it safe is the reader, not the writer:
the unpickler here imports nothing but gpumon's own data modules (:data:`ALLOWED_MODULES`)
and a few plain builtins, so a frame from a kernel that user code has tampered with can
refuse to decode, but can never make the window import a module or call a function that is
not one of those values' constructors.
"""

from __future__ import annotations

import io
import os
import pickle
import select
import struct
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from queue import SimpleQueue
from typing import IO, Any

from gpumon.i18n import tr
from gpumon.units import MIB, format_bytes

_HEADER = struct.Struct(">I")
#: The largest frame either side sends or accepts (a workspace of thousands of names is
#: well under 1 MiB).
MAX_FRAME_BYTES = 64 * MIB
#: Once a frame has begun, the rest must arrive within this many seconds: a kernel that
#: stops in the middle of a message never holds the window's reader.
FRAME_REST_S = 10.0
#: The only modules a frame may name: gpumon's data, the lesson's values, the monitor's
#: snapshot (lesson requests carry it, with its activity states and topology: pure values).
#: Neither torch nor anything of the user's.
ALLOWED_MODULES = ("gpumon.playground.data", "gpumon.playground.lesson",
                   "gpumon.telemetry.model.types", "gpumon.telemetry.model.activity",
                   "gpumon.telemetry.model.topology")
#: The kernel's environment, set by the window when it starts one (kernel/lifeline.py):
#: the window's pid, and the folder the user works in.
PARENT_ENV = "GPUMON_KERNEL_PARENT"
FOLDER_ENV = "GPUMON_KERNEL_FOLDER"
_ALLOWED_BUILTINS = frozenset({"complex", "set", "frozenset", "bytearray", "range", "slice"})


@dataclass(frozen=True)
class Request:
    """Window → kernel: do ``kind`` with ``payload``; the answer carries the same ``id``."""

    id: int
    kind: str  # "load", "devices", "run", "workspace", "lesson", "code", "ping", "shutdown";
    # read by the kernel's reader thread at once: "interrupt" (payload: the request to stop),
    # "beat" (over ssh, every second: the link lives; kernel/watchdog.py's Relay)
    payload: Any = None
    language: str = "en"  # the window's language (gpumon.i18n): the kernel answers in it


@dataclass(frozen=True)
class Message:
    """Kernel → window (or the client → its listener): what happened, for request ``id``.

    kinds from the kernel: ``hello`` (data: pid), ``reply``, ``internal_error`` (data: the
    traceback text), ``interrupted``, ``started`` (the user's request ``id`` runs now and a
    SIGINT would interrupt it; the client keeps it), ``workspace`` (list of entries), ``counters``
    (``{cuda index: (allocated, reserved)}``), ``outcome`` (an Outcome of a lesson step, sent
    as it happens, before the step's ``reply``). kinds the client adds: ``died`` and
    ``restarted`` (data: :class:`~gpumon.playground.client.kernel_client.KernelExit`).
    """

    kind: str
    id: int | None = None
    data: Any = None


class ProtocolError(Exception):
    """A frame that cannot be read; its text is a sentence for the card."""


class FrameTooLarge(ProtocolError):
    """A frame over :data:`MAX_FRAME_BYTES`, sent or announced."""

    def __init__(self, size: int) -> None:
        super().__init__(tr("a message of {size} is larger than the {limit} a playground "
                            "message may be", size=format_bytes(size),
                            limit=format_bytes(MAX_FRAME_BYTES, "MiB", decimals=0)))
        self.size = size


class ForbiddenGlobal(ProtocolError, pickle.UnpicklingError):
    """A frame names something outside :data:`ALLOWED_MODULES` (torch, the user's code)."""


def encode_frame(value: object) -> bytes:
    """The frame of ``value``; FrameTooLarge over the limit, pickling's own errors as is."""
    body = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    if len(body) > MAX_FRAME_BYTES:
        raise FrameTooLarge(len(body))
    return _HEADER.pack(len(body)) + body


class _Unpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if module == "builtins" and name in _ALLOWED_BUILTINS:
            return super().find_class(module, name)
        if any(module == m or module.startswith(m + ".") for m in ALLOWED_MODULES) and \
                not name.startswith("_"):
            return super().find_class(module, name)
        raise ForbiddenGlobal(tr("a message names {name}, which is not one of gpumon's own "
                                 "values", name=f"{module}.{name}"[:120]))


def decode_body(body: bytes) -> Any:
    """A frame's body as a value; ProtocolError for anything that is not a clean pickle of
    gpumon's own values."""
    try:
        return _Unpickler(io.BytesIO(body)).load()
    except ProtocolError:
        raise
    except Exception as exc:  # whatever a torn or hostile pickle raises
        raise ProtocolError(tr("a message could not be decoded ({error})",
                               error=f"{type(exc).__name__}: {exc}"[:200])) from None


def read_frame(stream: IO[bytes]) -> Any:
    """Read one frame (blocking); EOFError when the other side closed its end, ProtocolError
    (after consuming the frame) when it cannot be decoded."""
    header = _read_exactly(stream, _HEADER.size)
    (length,) = _HEADER.unpack(header)
    if length > MAX_FRAME_BYTES:
        raise FrameTooLarge(length)
    return decode_body(_read_exactly(stream, length))


def _read_exactly(stream: IO[bytes], n: int) -> bytes:
    chunks = []
    while n:
        chunk = stream.read(n)
        if not chunk:
            raise EOFError("the other end of the kernel's pipe closed")
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def process_end_fd(pid: int) -> int | None:
    """A file descriptor that becomes readable when process ``pid`` ends (a Linux pidfd,
    5.3 and later), or None where there is none (other systems, an older kernel, a process
    already gone). The caller closes it."""
    opener = getattr(os, "pidfd_open", None)
    if opener is None:
        return None
    try:
        return int(opener(pid))
    except OSError:
        return None


class FrameReader:
    """Reads frames from a pipe without ever waiting on a dead or wedged writer.

    On POSIX the pipe is polled: EOFError when the writer closed it, or when the writer's
    process has ended while something it started still holds the pipe open (``alive()``
    says False and nothing is left to read); ProtocolError when a frame cannot be decoded,
    is announced over the size limit, or stops half-way for :data:`FRAME_REST_S`. Elsewhere
    (Windows pipes cannot be polled) it reads blocking, with the same checks on each frame.

    Given the writer's ``pid`` where the system has pidfds (Linux), the wait sleeps until
    the pipe or the process's end wakes it (and asks ``alive()`` every :data:`SLEEP_S`
    all the same); without one it asks ``alive()`` every :data:`POLL_S` (an idle window's
    reader woke five times a second for that). ``close()`` lets the pidfd go.
    """

    POLL_S = 0.2
    SLEEP_S = 5.0

    def __init__(self, stream: IO[bytes], alive: Callable[[], bool],
                 rest_within_s: float | None = None, pid: int | None = None) -> None:
        self._stream = stream
        self._alive = alive
        self._rest_s = FRAME_REST_S if rest_within_s is None else rest_within_s
        self._fd = stream.fileno()
        self._poll = select.poll() if hasattr(select, "poll") else None
        self._ended: int | None = None  # the writer's pidfd, while it has not ended
        if self._poll is not None:
            self._poll.register(self._fd, select.POLLIN | select.POLLHUP | select.POLLERR)
            ended = process_end_fd(pid) if pid is not None else None
            if ended is not None and not alive():  # gone, maybe its pid taken: no use
                os.close(ended)
            elif ended is not None:
                self._ended = ended
                self._poll.register(ended, select.POLLIN)
        self._buffer = bytearray()

    def read(self) -> Any:
        if self._poll is None:
            return read_frame(self._stream)
        header = self._take(_HEADER.size, deadline=None)
        (length,) = _HEADER.unpack(header)
        if length > MAX_FRAME_BYTES:
            raise FrameTooLarge(length)
        return decode_body(self._take(length, deadline=time.monotonic() + self._rest_s))

    def close(self) -> None:
        """Let the pidfd go (the pipe is the caller's)."""
        self._forget_end()

    def _forget_end(self) -> None:
        ended, self._ended = self._ended, None
        if ended is not None:
            if self._poll is not None:
                self._poll.unregister(ended)
            os.close(ended)

    def _wait_ms(self, deadline: float | None) -> int:
        """How long a poll may sleep before ``alive()`` and the deadline are looked at:
        :data:`POLL_S`, or with a pidfd to wake it :data:`SLEEP_S` or until the deadline."""
        if self._ended is None:
            return round(self.POLL_S * 1000)
        wait_s = self.SLEEP_S if deadline is None else min(
            self.SLEEP_S, max(0.0, deadline - time.monotonic()) + 0.001)
        return round(wait_s * 1000)

    def _take(self, n: int, deadline: float | None) -> bytes:
        assert self._poll is not None
        while len(self._buffer) < n:
            if deadline is None and self._buffer:  # a frame has begun
                deadline = time.monotonic() + self._rest_s
            ready = {fd for fd, _ in self._poll.poll(self._wait_ms(deadline))}
            if self._ended is not None and self._ended in ready:
                self._forget_end()  # it ended: from now on ask alive() (it may lag)
            if self._fd not in ready:
                if not self._alive():  # ended; a child of its keeps the pipe open
                    raise EOFError("the kernel ended; the pipe is held by a process it started")
                if deadline is not None and time.monotonic() > deadline:
                    raise ProtocolError(tr("the kernel stopped in the middle of a message "
                                           "for {seconds:.0f} s", seconds=self._rest_s))
                continue
            chunk = os.read(self._fd, 1 << 20)
            if not chunk:
                raise EOFError("the other end of the kernel's pipe closed")
            self._buffer += chunk
        out = bytes(self._buffer[:n])
        del self._buffer[:n]
        return out


class FrameWriter:
    """One thread writes every frame, so no signal handler in another thread can ever cut a
    frame in half, and no caller waits on a full pipe. ``send`` encodes in the caller's
    thread (so a value that cannot be pickled, or is too large, is the caller's exception)
    and returns at once."""

    def __init__(self, stream: IO[bytes], name: str,
                 on_broken: Callable[[], None] | None = None) -> None:
        self._stream = stream
        self._queue: SimpleQueue[bytes | threading.Event | None] = SimpleQueue()
        self._on_broken = on_broken
        self.broken = False
        self._thread = threading.Thread(target=self._write, name=name, daemon=True)
        self._thread.start()

    def send(self, value: object) -> None:
        self._queue.put(encode_frame(value))

    def send_bytes(self, frame: bytes) -> None:
        self._queue.put(frame)

    def drain(self, timeout_s: float | None = None) -> bool:
        """Wait until what is queued now is written; True if it was within ``timeout_s``."""
        done = threading.Event()
        self._queue.put(done)
        return done.wait(timeout_s)

    def close(self, timeout_s: float | None = None) -> bool:
        """Write what is queued, then close the stream; True if done within ``timeout_s``."""
        self._queue.put(None)
        self._thread.join(timeout_s)
        return not self._thread.is_alive()

    def _write(self) -> None:
        while True:
            frame = self._queue.get()
            if frame is None:
                break
            if isinstance(frame, threading.Event):
                frame.set()
                continue
            if self.broken:
                continue
            try:
                self._stream.write(frame)
                self._stream.flush()
            except (OSError, ValueError):  # the reader is gone
                self.broken = True
                if self._on_broken is not None:
                    self._on_broken()
        try:
            self._stream.close()
        except (OSError, ValueError):
            pass
