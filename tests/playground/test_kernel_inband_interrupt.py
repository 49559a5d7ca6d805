"""Stop as a frame (issue 50: no signal crosses ``ssh``): the kernel's reader thread reads it
while the user's code runs and stops that code, in Python or in a blocking call, and never
the request after it; the client sends no signal at all."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

from gpumon.playground.client import kernel_client
from gpumon.playground.client.kernel_client import KernelClient
from gpumon.playground.data.actions import RunCode
from gpumon.playground.kernel.main import Kernel
from tests.playground.kernel_helpers import Inbox, touch_line, wait_for_file

pytestmark = pytest.mark.skipif(os.name != "posix", reason="the kernel's interrupts are tested "
                                                           "where SIGINT exists")


def _no_signals(*_args: object) -> bool:
    raise AssertionError("a signal was sent: the in-band Stop sends none")


@pytest.mark.slow
@pytest.mark.usefixtures("kernel_fork_server")
@pytest.mark.parametrize("code", ["n = 0\nwhile True:\n    n += 1", "import time\ntime.sleep(100)"],
                         ids=["python-loop", "sleep"])
def test_an_in_band_stop_stops_the_code_and_keeps_the_kernel(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, code: str) -> None:
    monkeypatch.setattr(kernel_client, "send_interrupt", _no_signals)
    inbox = Inbox()
    client = KernelClient(inbox, in_band=True)
    try:
        rid = client.request("run", RunCode("x = 41"))
        assert inbox.wait("reply", rid, timeout=120).data.ok
        pid = client.pid
        mark = tmp_path / "running"
        rid = client.request("run", RunCode(touch_line(mark) + code))
        wait_for_file(mark)
        assert client.interrupt(grace_s=30.0) == "signalled"
        inbox.wait("interrupted", rid, timeout=20.0)  # well before the 30 s kill
        assert client.pid == pid  # the same kernel, its workspace kept
        rid = client.request("run", RunCode("x + 1"))
        assert inbox.wait("reply", rid, timeout=30).data.preview == "42"
    finally:
        client.shutdown(timeout_s=1.0)


def test_a_stop_for_another_request_is_ignored() -> None:
    kernel = Kernel(io.BytesIO())
    assert not kernel.interrupt(7)  # nothing runs
    kernel.busy, kernel._request_id = True, 8
    assert not kernel.interrupt(7)  # a late Stop for the request before
    kernel.busy = False
    assert not kernel.interrupt(8)  # the request has ended: not between requests either
