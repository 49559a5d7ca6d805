"""Jumps in a gzip file: the bytes at any offset, forward and back, equal the decompressed
file's, across members and with the points thinned; a cut file ends with EOFError."""

from __future__ import annotations

import gzip
import random
import zlib
from pathlib import Path

import pytest

from gpumon.recording.gzseek import Checkpoints, open_gzip


def _data(seed: int, n: int) -> bytes:
    rnd = random.Random(seed)
    return b"".join(f"{i} {rnd.random():.12f} {'x' * rnd.randrange(200)}\n".encode()
                    for i in range(n))


def test_any_offset_reads_the_same_bytes_forward_and_back(tmp_path: Path) -> None:
    a, b = _data(1, 20_000), _data(2, 10_000)
    path = tmp_path / "two-members.gz"
    path.write_bytes(gzip.compress(a, 6) + gzip.compress(b, 1))  # `cat a.gz b.gz`
    whole = a + b
    points = Checkpoints(spacing=64 << 10, most=8)
    with open_gzip(path, points) as f:
        assert f.read() == whole  # the pass that leaves the points
    assert 4 <= len(points) <= 8 and points.spacing > 64 << 10  # thinned, spacing doubled
    rnd = random.Random(3)
    with open_gzip(path, points) as f:
        for _ in range(200):
            offset = rnd.randrange(len(whole))
            f.seek(offset)
            assert f.tell() == offset
            assert f.readline() == whole[offset:whole.index(b"\n", offset) + 1]


def test_a_cut_file_ends_with_eof_error_after_what_it_holds(tmp_path: Path) -> None:
    data = _data(4, 5000)
    packed = gzip.compress(data)
    path = tmp_path / "cut.gz"
    path.write_bytes(packed[: len(packed) // 2])
    with open_gzip(path, Checkpoints()) as f:
        got = b""
        with pytest.raises(EOFError):
            while chunk := f.read(4096):
                got += chunk
    assert got and data.startswith(got)


def test_garbage_is_a_zlib_error(tmp_path: Path) -> None:
    path = tmp_path / "bad.gz"
    path.write_bytes(b"\x1f\x8b" + bytes(range(256)) * 4)
    with open_gzip(path, Checkpoints()) as f, pytest.raises(zlib.error):
        f.read()
