"""What typed code prints: ``print()`` and writes to ``sys.stdout`` / ``sys.stderr`` while a
code-line cell runs, kept (bounded) for its card instead of going to the terminal.

Only Python-level writes are caught; what a C library writes to file descriptor 1 or 2 goes
to the kernel's stderr, as before. The kernel runs one request at a time, so swapping
``sys.stdout`` for the length of a cell catches only that cell's output.
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Iterator

from gpumon.i18n import tr

#: Characters of printed output kept per cell; the rest is counted, not kept.
MAX_OUTPUT_CHARS = 20_000


class BoundedText(io.TextIOBase):
    """A text stream that keeps the first ``limit`` characters and counts the rest."""

    def __init__(self, limit: int = MAX_OUTPUT_CHARS) -> None:
        super().__init__()
        self._limit = limit
        self._parts: list[str] = []
        self._kept = 0
        self.dropped = 0

    def writable(self) -> bool:
        return True

    def write(self, s: str) -> int:
        text = str(s)
        room = self._limit - self._kept
        if room > 0:
            self._parts.append(text[:room])
            self._kept += min(room, len(text))
        self.dropped += max(0, len(text) - max(room, 0))
        return len(text)

    def text(self) -> str:
        """What was kept, and a line saying how much was not."""
        kept = "".join(self._parts)
        if self.dropped:
            kept += "\n… " + tr("{count} more characters were printed (not kept)",
                                 count=f"{self.dropped:,}")
        return kept


@contextlib.contextmanager
def printed(limit: int = MAX_OUTPUT_CHARS) -> Iterator[BoundedText]:
    """Send ``sys.stdout`` and ``sys.stderr`` to one bounded buffer for the block."""
    buffer = BoundedText(limit)
    with contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(buffer):
        yield buffer
