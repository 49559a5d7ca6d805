"""A scripted fake playground kernel: speaks the wire format, then misbehaves on cue.

Run as ``python fake_kernel.py SCENARIO``. It says hello as the real kernel does, then reads
requests; on the first request other than "load"/"devices" it does what SCENARIO says:

- ``garbage``: a frame of random bytes that is no pickle;
- ``truncated``: half a frame, then stays alive, silent;
- ``huge``: a header that announces 3 GB, then stays alive;
- ``closed``: closes its output, stays alive;
- ``silent``: never answers anything;
- ``dies-mid-frame``: half a frame, then exits with status 3;
- ``fork-holds-pipes``: forks a child that keeps both pipes open and sleeps (its pid in
  the file named by FAKE_KERNEL_CHILD), then exits with status 4.
Every other request (before the cue, and ``load``/``devices``) gets a plain reply.
"""

from __future__ import annotations

import os
import struct
import sys
import time
from typing import BinaryIO

from gpumon.playground.data.outcome import LoadStatus
from gpumon.playground.data.wire import Message, encode_frame, read_frame


def send(out: BinaryIO, value: object) -> None:
    """One frame, flushed: the window reads it now."""
    out.write(encode_frame(value))
    out.flush()


def main(scenario: str) -> None:
    inp = os.fdopen(0, "rb")
    out = os.fdopen(1, "wb")
    send(out, Message("hello", None, os.getpid()))
    while True:
        request = read_frame(inp)
        if request.kind == "shutdown":
            return
        if request.kind == "load":
            send(out, Message("reply", request.id, LoadStatus(True, "fake kernel")))
            continue
        if request.kind in ("devices", "workspace", "names"):
            send(out, Message("reply", request.id, []))
            continue
        misbehave(scenario, out)


def misbehave(scenario: str, out) -> None:
    header = struct.Struct(">I")
    if scenario == "garbage":
        body = os.urandom(64)
        out.write(header.pack(len(body)) + body)
        out.flush()
    elif scenario in ("truncated", "dies-mid-frame"):
        out.write(header.pack(100) + b"\x80\x05" + b"x" * 40)
        out.flush()
        if scenario == "dies-mid-frame":
            os._exit(3)
    elif scenario == "huge":
        out.write(header.pack(3_000_000_000))
        out.flush()
    elif scenario == "closed":
        out.close()  # fd 1 with it
    elif scenario == "silent":
        pass
    elif scenario == "fork-holds-pipes":
        pid = os.fork()
        if pid == 0:
            time.sleep(60)
            os._exit(0)
        with open(os.environ["FAKE_KERNEL_CHILD"], "w") as f:
            f.write(str(pid))
        os._exit(4)
    while True:  # alive and silent from now on
        time.sleep(1)


if __name__ == "__main__":
    main(sys.argv[1])
