"""A gzip file read with jumps: the decompressor's state kept every so many bytes.

Python's ``gzip`` seeks back by decompressing from the start: in a recording of an hour of
8 GPUs (76 MB inside 2 MB) a jump to its end took up to 1.1 s (benchmarks/README.md). The
index pass reads the whole file once anyway; ``GzipRaw`` keeps, every ``spacing`` bytes of
output, where the compressed data was and a copy of zlib's state (~40 kB each), so a jump
decompresses at most ``spacing`` bytes from the nearest point before it. At most
``MAX_POINTS`` are kept (every other is dropped and the spacing doubled when there would be
more): ~5 MB for any file; a 5 GB one then jumps over at most ~40 MB.
"""

from __future__ import annotations

import bisect
import io
import threading
import zlib
from pathlib import Path
from typing import Any

SPACING = 1 << 20
MAX_POINTS = 128
CHUNK = 16 << 10
_GZIP = 31  # zlib's wbits for a gzip header and trailer


class Checkpoints:
    """Points to resume decompressing at: (output offset, input offset, zlib state)."""

    def __init__(self, spacing: int = SPACING, most: int = MAX_POINTS) -> None:
        self.spacing, self.most = spacing, most
        self._outs: list[int] = []
        self._points: list[tuple[int, int, Any]] = []
        self._lock = threading.Lock()

    def offer(self, out_pos: int, in_pos: int, state: Any) -> None:
        with self._lock:
            if self._outs and out_pos < self._outs[-1] + self.spacing:
                return
            self._outs.append(out_pos)
            self._points.append((out_pos, in_pos, state.copy()))
            if len(self._points) > self.most:  # keep every other, twice as far apart
                self._points = self._points[::2]
                self._outs = self._outs[::2]
                self.spacing *= 2

    def before(self, out_pos: int) -> tuple[int, int, Any] | None:
        """The last point at or before ``out_pos`` (its state copied: points are reused)."""
        with self._lock:
            i = bisect.bisect_right(self._outs, out_pos) - 1
            if i < 0:
                return None
            out, inp, state = self._points[i]
            return out, inp, state.copy()

    def __len__(self) -> int:
        return len(self._points)


class GzipRaw(io.RawIOBase):
    """The decompressed bytes of a gzip file (members one after another), seekable."""

    def __init__(self, path: Path, points: Checkpoints) -> None:
        super().__init__()
        self._file = path.open("rb")
        self._points = points
        self._restart(0, 0, zlib.decompressobj(_GZIP))

    def _restart(self, out_pos: int, in_pos: int, state: Any) -> None:
        self._file.seek(in_pos)
        self._d, self._pos, self._buf, self._eof = state, out_pos, b"", False

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def readinto(self, b: Any) -> int:
        while not self._buf and not self._eof:
            self._fill()
        n = min(len(b), len(self._buf))
        b[:n] = self._buf[:n]
        self._buf = self._buf[n:]
        self._pos += n
        return n

    def _fill(self) -> None:
        self._points.offer(self._pos, self._file.tell(), self._d)
        chunk = self._file.read(CHUNK)
        if not chunk:
            if not self._d.eof:
                raise EOFError("Compressed file ended before the end-of-stream marker was "
                               "reached")
            self._eof = True
            return
        if self._d.eof:  # the next member starts with this chunk
            self._d = zlib.decompressobj(_GZIP)
        data = self._d.decompress(chunk)
        while self._d.eof and self._d.unused_data:
            rest = self._d.unused_data
            self._d = zlib.decompressobj(_GZIP)
            data += self._d.decompress(rest)
        self._buf = data

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        if whence == io.SEEK_CUR:
            offset += self._pos
        elif whence != io.SEEK_SET:
            raise io.UnsupportedOperation("a gzip recording seeks from its start only")
        if offset < self._pos or offset - self._pos > self._points.spacing:
            point = self._points.before(offset)
            if point is not None and (offset < self._pos or point[0] > self._pos):
                self._restart(*point)
            elif offset < self._pos:
                self._restart(0, 0, zlib.decompressobj(_GZIP))
        while self._pos < offset and not self._eof:
            if not self._buf:
                self._fill()
                continue
            n = min(offset - self._pos, len(self._buf))
            self._buf = self._buf[n:]
            self._pos += n
        return self._pos

    def close(self) -> None:
        if not self.closed:
            self._file.close()
        super().close()


def open_gzip(path: Path, points: Checkpoints) -> io.BufferedReader:
    return io.BufferedReader(GzipRaw(path, points), buffer_size=CHUNK)
