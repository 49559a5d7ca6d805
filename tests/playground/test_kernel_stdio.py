"""``gpumon kernel --stdio`` without a server: a stand-in ``ssh`` that runs the remote
command here, in a login folder of its own, so the kernel over ssh (``ssh_kernel.py``) is
tested where no sshd is installed. The real sshd's tests are tests/remote/test_ssh_kernel.py."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from gpumon.playground.client.kernel_client import KernelClient
from gpumon.playground.client.ssh_kernel import Remote
from gpumon.playground.data.actions import RunCode
from gpumon.ssh.command import SshOptions
from gpumon.ssh.target import parse_target
from tests.playground.kernel_helpers import Inbox

ROOT = Path(__file__).resolve().parents[2]


def test_a_wrong_command_line_is_refused() -> None:
    done = subprocess.run([sys.executable, "-m", "gpumon", "kernel"], capture_output=True,
                          text=True, timeout=60, cwd=ROOT)
    assert done.returncode == 2 and done.stderr == "usage: gpumon kernel --stdio\n"


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the watchdog's pidfds")
def test_the_login_folder_cannot_shadow_torch_and_stays_importable(tmp_path: Path) -> None:
    login = tmp_path / "home"
    login.mkdir()
    (login / "torch.py").write_text("raise SystemExit('the login folder shadowed torch')\n")
    (login / "mine.py").write_text("VALUE = 7\n")
    fake_ssh = tmp_path / "ssh"  # runs its last argument (the remote command) in `login`
    fake_ssh.write_text(f"#!/bin/sh\nfor last; do :; done\ncd {login}\nexec sh -c \"$last\"\n")
    fake_ssh.chmod(0o755)
    inbox = Inbox()
    client = KernelClient(inbox, remote=Remote(parse_target("lab1"), SshOptions(
        program=str(fake_ssh), remote_command=f"{sys.executable} -m gpumon")))
    try:
        rid = client.request("run", RunCode("import torch, mine, os\n"
                                            "(mine.VALUE, os.getcwd(), "
                                            "torch.__file__.startswith(os.getcwd()))"))
        outcome = inbox.wait("reply", rid, timeout=120).data
        assert outcome.ok, outcome.error
        assert outcome.preview == f"(7, '{login}', False)"
    finally:
        client.shutdown(timeout_s=2.0)


def test_no_ssh_here_is_a_sentence_not_an_exception() -> None:
    inbox = Inbox()
    client = KernelClient(inbox, remote=Remote(parse_target("lab1"), SshOptions(
        program="/nonexistent/ssh")))
    try:
        assert client.request("run", RunCode("1")) > 0
        ended = inbox.wait("died", timeout=30).data
        assert ended.sentence().startswith("ssh could not be started (")
    finally:
        client.shutdown(timeout_s=1.0)
