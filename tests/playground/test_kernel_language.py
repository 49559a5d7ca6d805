"""The kernel is another process: it answers in the language the window has when it asks.

Each request carries the window's language (wire.Request.language); the kernel switches to it
before it builds any sentence, so an explanation made there is in the window's language while
torch's message stays as torch wrote it.
"""

from __future__ import annotations

import os
import re
import signal

import pytest

from gpumon import i18n
from gpumon.playground.client.kernel_client import KernelClient, KernelExit
from gpumon.playground.data import actions as act
from gpumon.playground.data.actions import RunCode
from gpumon.playground.data.outcome import LoadStatus, Outcome
from gpumon.playground.data.wire import Request
from tests.playground.kernel_helpers import Inbox

CJK = re.compile(r"[\u4e00-\u9fff]")
BROADCAST = "The size of tensor a (2) must match the size of tensor b (3) at non-singleton " \
            "dimension 0"


def _run(client: KernelClient, inbox: Inbox, action: act.Action) -> Outcome:
    rid = client.request("run", action)
    reply = inbox.wait("reply", rid)
    assert isinstance(reply.data, Outcome)
    return reply.data


def test_a_request_carries_the_language_of_the_moment(monkeypatch: pytest.MonkeyPatch,
                                                      client: KernelClient,
                                                      inbox: Inbox) -> None:
    from gpumon.playground.data.wire import FrameWriter

    sent: list[Request] = []
    send = FrameWriter.send

    def recording(self: FrameWriter, value: object) -> None:
        if isinstance(value, Request):
            sent.append(value)
        send(self, value)

    monkeypatch.setattr(FrameWriter, "send", recording)
    assert Request(1, "ping").language == "en"  # a request built by hand: English
    inbox.wait("reply", client.request("ping"))
    i18n.set_language("zh_CN")
    try:
        inbox.wait("reply", client.request("ping"))
    finally:
        i18n.set_language("en")
    assert [r.language for r in sent if r.kind == "ping"] == ["en", "zh_CN"]


def test_the_kernel_explains_in_chinese_and_keeps_torchs_message(chinese: None,
                                                                  client: KernelClient,
                                                                  inbox: Inbox) -> None:
    outcome = _run(client, inbox, RunCode("torch.ones(2) + torch.ones(3)"))
    assert client.pid != os.getpid()
    assert outcome.error is not None and outcome.error.by_torch
    assert outcome.error.message == BROADCAST  # exactly as torch wrote it
    assert outcome.error.explanation.startswith("这两个形状无法广播到一起")
    refused = _run(client, inbox, act.CreateTensor("t", "[1, 2,"))
    assert refused.error is not None and not refused.error.by_torch
    assert "第 1 个字符处的 [ 没有闭合" in refused.error.message
    status = inbox.wait("reply", client.request("load")).data
    assert isinstance(status, LoadStatus) and status.ok
    if status.threads_note:
        assert "个核心中的" in status.threads_note


def test_the_kernel_follows_the_window_when_its_language_changes(client: KernelClient,
                                                                 inbox: Inbox) -> None:
    english = _run(client, inbox, RunCode("torch.ones(2) + torch.ones(3)"))
    assert english.error is not None
    assert english.error.explanation.startswith("The shapes cannot be broadcast together")
    i18n.set_language("zh_CN")
    try:
        chinese_outcome = _run(client, inbox, RunCode("torch.ones(2) + torch.ones(3)"))
    finally:
        i18n.set_language("en")
    assert chinese_outcome.error is not None and CJK.search(chinese_outcome.error.explanation)
    assert chinese_outcome.error.message == english.error.message == BROADCAST
    again = _run(client, inbox, RunCode("torch.ones(2) + torch.ones(3)"))
    assert again.error is not None and again.error.explanation == english.error.explanation


@pytest.mark.skipif(os.name != "posix", reason="sends a POSIX signal to the kernel")
def test_a_dead_kernel_is_told_in_chinese(chinese: None, client: KernelClient,
                                          inbox: Inbox) -> None:
    _run(client, inbox, RunCode("a = torch.ones(2)"))
    assert [e.name for e in inbox.wait("workspace").data] == ["a"]  # the client knows it now
    pid = client.pid
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    died = inbox.wait("died", timeout=10.0).data
    assert isinstance(died, KernelExit)
    assert died.sentence() == f"演练场的内核进程（pid {pid}）被 SIGKILL 终止。"
    assert died.lost_text() == "工作区中的内容（a）已丢失。"
    assert died.how() == "被 SIGKILL 终止"


def test_kernel_exit_sentences_in_both_languages() -> None:
    exited = KernelExit(12, 3)
    assert exited.sentence() == "The playground kernel (pid 12) exited with code 3."
    assert KernelExit(12, None).sentence() == "The playground kernel (pid 12) ended."
    assert KernelExit(12, -9).sentence() == "The playground kernel (pid 12) was killed by SIGKILL."
    i18n.set_language("zh_CN")
    assert exited.sentence() == "演练场的内核进程（pid 12）已退出，退出码为 3。"
    assert exited.how() == "以退出码 3 退出"
    assert KernelExit(12, None, ("x", "y")).lost_text() == "工作区中的内容（x, y）已丢失。"
    assert exited.lost_text() == "工作区原本是空的，所以没有丢失任何东西。"
