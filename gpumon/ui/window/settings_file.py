"""The settings file looked at before QSettings reads it, and moved aside when unusable.

QSettings trusts its file: a FIFO in its place blocked start-up forever (QSettings' constructor
reads it), and ``hidden_gpus=@Variant(\\0\\0\\0\\x0b\\x7f\\xff\\xff\\xff)`` (a string list of 2**31
entries) aborted the process inside Qt with ``std::bad_alloc``, naming no file. So the file is
opened here first, without blocking, and read as text: it must be a regular file of at most
``MAX_BYTES``, and hold no value in a form gpumon never writes (``@Variant(...)``, ``@Rect``
and Qt's other serialised types; gpumon writes plain text, ``@ByteArray(...)`` and
``@Invalid()``). A file that fails is renamed ``NAME.bad-YYYYmmdd-HHMMSS`` and gpumon starts
with its defaults; the sentence that says so names both files. Qt-free.
"""

from __future__ import annotations

import os
import re
import stat
import time
from pathlib import Path

from gpumon.i18n import tr
from gpumon.untrusted import for_terminal

MAX_BYTES = 1 << 20  # gpumon writes under 1 KiB
# QSettings reads a value (or an element of a comma-separated list) that starts with "@" as
# a serialised one; "@@" is a literal "@". gpumon writes only these two.
_WRITTEN = ("@ByteArray(", "@Invalid()")
# "@" written as an escape (\x40, \100) that QSettings decodes before it looks at the "@"
_ESCAPED_AT = re.compile(r"\\(x0*40(?![0-9a-fA-F])|0*100(?![0-7]))", re.IGNORECASE)


def problem(path: Path) -> str | None:
    """Why QSettings must not read ``path`` (a phrase), or None: it may, or there is none."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return None
    except OSError as err:
        return err.strerror or str(err)
    if not stat.S_ISREG(info.st_mode):
        return tr("it is not a regular file")
    try:  # O_NONBLOCK: a FIFO put there since the stat opens without waiting for a writer
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as err:
        return tr("it cannot be read ({reason})", reason=err.strerror or err)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return tr("it is not a regular file")
        data = os.read(fd, MAX_BYTES + 1)
    except OSError as err:
        return tr("it cannot be read ({reason})", reason=err.strerror or err)
    finally:
        os.close(fd)
    if len(data) > MAX_BYTES:
        return tr("it is larger than {kib} KiB", kib=MAX_BYTES // 1024)
    if b"\0" in data:
        return tr("it is not text")
    for line in data.decode("utf-8", errors="replace").splitlines():
        _, sep, value = line.partition("=")
        if not sep or line.lstrip().startswith((";", "#", "[")):
            continue
        escaped = _ESCAPED_AT.search(value)
        odd = [e for e in _elements(value) if not e.startswith(("@@", *_WRITTEN))]
        if escaped or odd:
            return tr("it holds a value of a kind gpumon never writes ({value})",
                      value=for_terminal(escaped.group(0) if escaped else odd[0][:24]))
    return None


def _elements(value: str) -> list[str]:
    """A value's comma-separated elements (commas within quotes kept), each stripped of
    spaces and quotes, as QSettings reads a list."""
    out: list[str] = []
    current: list[str] = []
    quoted = escaped = False
    for c in value:
        if escaped:
            escaped = False
        elif c == "\\":
            escaped = True
        elif c == '"':
            quoted = not quoted
            continue
        elif c == "," and not quoted:
            out.append("".join(current).strip())
            current = []
            continue
        current.append(c)
    out.append("".join(current).strip())
    return [e for e in out if e.startswith("@")]


def move_aside(path: Path, why: str) -> tuple[bool, str]:
    """Rename the unusable file at ``path``; (moved, the sentence to show)."""
    aside = path.with_name(f"{path.name}.bad-{time.strftime('%Y%m%d-%H%M%S')}")
    try:
        os.replace(path, aside)
    except OSError as err:
        return False, tr("gpumon cannot use its settings file {path} ({why}) and cannot move "
                         "it aside ({reason}); it starts with its default settings and saves "
                         "none this time.", path=str(path), why=why,
                         reason=err.strerror or err)
    return True, tr("gpumon could not use its settings file and moved it to {aside} ({why}); "
                    "it starts with its default settings.", why=why, aside=str(aside))
