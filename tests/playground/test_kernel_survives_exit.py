"""exit() typed in the code line, in the real kernel process: a card, and the same kernel with
its workspace answers the next request (before, the kernel ended and the workspace was lost)."""

from __future__ import annotations

from gpumon.playground.client.kernel_client import KernelClient
from gpumon.playground.data.actions import RunCode
from gpumon.playground.data.outcome import Outcome
from tests.playground.kernel_helpers import Inbox


def test_exit_in_the_code_line_keeps_the_kernel_and_its_workspace(client: KernelClient,
                                                                  inbox: Inbox) -> None:
    first = client.request("run", RunCode("x = torch.ones(3)"))
    assert inbox.wait("reply", first).data.ok
    pid = client.pid
    for code in ("exit()", "quit()", "import sys; sys.exit(2)"):
        rid = client.request("run", RunCode(code))
        outcome = inbox.wait("reply", rid).data
        assert isinstance(outcome, Outcome) and not outcome.ok, code
        assert outcome.error is not None and outcome.error.type_name == "SystemExit"
    names = client.request("names")
    assert inbox.wait("reply", names).data[0] == "x"
    assert client.pid == pid and client.starts == 1
    assert not [m for m in inbox.seen if m.kind in ("died", "restarted")]
