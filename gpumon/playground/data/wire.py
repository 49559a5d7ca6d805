"""The kernel's message protocol: length-prefixed pickles of plain values over two pipes.

Both sides are gpumon of the same install, so pickle is safe here (nothing from outside ever
reaches these pipes) and carries the existing frozen values (Action, Outcome, LoadStatus)
unchanged. A frame is a 4-byte big-endian length followed by that many bytes of pickle.
"""

from __future__ import annotations

import io
import pickle
import struct
from dataclasses import dataclass
from typing import IO, Any

_HEADER = struct.Struct(">I")


@dataclass(frozen=True)
class Request:
    """Window → kernel: do ``kind`` with ``payload``; the answer carries the same ``id``."""

    id: int
    kind: str  # "load", "devices", "run", "workspace", "lesson", "code", "ping", "shutdown"
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


def write_frame(stream: IO[bytes], value: object) -> None:
    """Write one pickled frame and flush it."""
    body = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_HEADER.pack(len(body)) + body)
    stream.flush()


class ForbiddenGlobal(pickle.UnpicklingError):
    """A frame names a class of a module the reader must not import (torch, in the window)."""


class _Unpickler(pickle.Unpickler):
    def __init__(self, data: IO[bytes], forbidden: tuple[str, ...]) -> None:
        super().__init__(data)
        self._forbidden = forbidden

    def find_class(self, module: str, name: str) -> Any:
        root = module.split(".", 1)[0]
        if root in self._forbidden:
            raise ForbiddenGlobal(f"a kernel message holds {module}.{name}; only plain values "
                                  "may cross to the window")
        return super().find_class(module, name)


def read_frame(stream: IO[bytes], forbidden: tuple[str, ...] = ()) -> Any:
    """Read one frame; raises EOFError when the other side has closed its end, and
    :class:`ForbiddenGlobal` (after consuming the frame) if it names a ``forbidden`` module."""
    header = _read_exactly(stream, _HEADER.size)
    (length,) = _HEADER.unpack(header)
    return _Unpickler(io.BytesIO(_read_exactly(stream, length)), forbidden).load()


def _read_exactly(stream: IO[bytes], n: int) -> bytes:
    chunks = []
    while n:
        chunk = stream.read(n)
        if not chunk:
            raise EOFError("the other end of the kernel's pipe closed")
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)
