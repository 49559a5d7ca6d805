"""print() in typed code: kept for the card (bounded), never written to the terminal."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from gpumon.playground.client.kernel_client import KernelClient
from gpumon.playground.data.actions import RunCode
from gpumon.playground.data.outcome import Outcome
from gpumon.playground.kernel.engine import Engine
from gpumon.playground.kernel.printed import MAX_OUTPUT_CHARS, BoundedText
from tests.playground.kernel_helpers import Inbox


def test_print_goes_to_the_outcome_not_the_terminal(engine: Engine,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    out = engine.run(RunCode("x = torch.ones(2)\nprint('x is', x.sum().item())\nx"))
    assert out.ok and out.output == "x is 2.0\n" and out.preview == "tensor([1., 1.])"
    err = engine.run(RunCode("import sys\nprint('before')\nsys.stderr.write('to stderr\\n')\n"
                             "1 / 0"))
    assert err.error is not None and err.error.type_name == "ZeroDivisionError"
    assert err.output == "before\nto stderr\n"  # what ran before the error is kept
    assert capsys.readouterr() == ("", "")
    assert engine.run(RunCode("y = 1")).output == ""


def test_printed_output_is_bounded(engine: Engine) -> None:
    out = engine.run(RunCode("for i in range(30000):\n    print(i)"))
    assert out.ok
    assert len(out.output) < MAX_OUTPUT_CHARS + 100
    assert out.output.startswith("0\n1\n2\n")
    total = sum(len(f"{i}\n") for i in range(30000))
    assert out.output.endswith(f"… {total - MAX_OUTPUT_CHARS:,} more characters were printed "
                               "(not kept)")


def test_bounded_text_keeps_the_head_and_counts_the_rest() -> None:
    b = BoundedText(limit=5)
    assert b.write("abc") == 3 and b.write("defg") == 4 and b.write("h") == 1
    assert b.dropped == 3 and b.text() == "abcde\n… 3 more characters were printed (not kept)"


@pytest.fixture
def client() -> Iterator[tuple[KernelClient, Inbox]]:
    inbox = Inbox()
    c = KernelClient(inbox)
    yield c, inbox
    c.shutdown()


def test_print_in_the_kernel_reaches_the_card_not_the_terminal(
        client: tuple[KernelClient, Inbox], capfd: pytest.CaptureFixture[str]) -> None:
    c, inbox = client
    reply = inbox.wait("reply", c.request("run", RunCode("print('from the kernel')")),
                       timeout=120)
    assert isinstance(reply.data, Outcome) and reply.data.output == "from the kernel\n"
    out, err = capfd.readouterr()  # the kernel's stdout and stderr are this terminal's
    assert "from the kernel" not in out + err
