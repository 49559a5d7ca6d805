"""When the kernel starts in a systemd scope of its own (client/keeper.py): the detection,
from what the machine has, and the command the watchdog then starts under. This machine has
no user systemd manager, so a stand-in ``systemd-run`` runs the command it is given."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import psutil
import pytest

from gpumon.playground.client import keeper
from gpumon.playground.client.kernel_client import KernelClient
from gpumon.playground.data.actions import RunCode
from tests.playground.kernel_helpers import Inbox

TOOL = "/usr/bin/systemd-run"
RUNTIME = "/run/user/1000"
USER_BUS_AND_V2 = {f"{RUNTIME}/systemd/private", "/sys/fs/cgroup/cgroup.controllers"}


def _scope(env: dict[str, str], tool: str | None = TOOL,
           present: set[str] = USER_BUS_AND_V2, cap: int = 4_000_000_000) -> list[str]:
    return keeper.scope_command(cap, env, lambda _name: tool, lambda path: path in present)


def test_a_user_manager_on_cgroup_v2_gets_a_scope_with_the_memory_cap() -> None:
    assert _scope({"XDG_RUNTIME_DIR": RUNTIME}) == [
        TOOL, "--user", "--scope", "--quiet", "--collect", "-p", "MemoryMax=4000000000", "--"]
    assert _scope({"XDG_RUNTIME_DIR": RUNTIME}, cap=0)[-2:] == ["--collect", "--"]


@pytest.mark.parametrize(("env", "tool", "present"), [
    ({}, TOOL, USER_BUS_AND_V2),  # no session: no runtime folder
    ({"XDG_RUNTIME_DIR": "run/user/1000"}, TOOL, USER_BUS_AND_V2),  # not absolute
    ({"XDG_RUNTIME_DIR": RUNTIME}, None, USER_BUS_AND_V2),  # no systemd-run
    ({"XDG_RUNTIME_DIR": RUNTIME}, TOOL, {"/sys/fs/cgroup/cgroup.controllers"}),  # no manager
    ({"XDG_RUNTIME_DIR": RUNTIME}, TOOL, {f"{RUNTIME}/systemd/private"}),  # cgroup v1
    ({"XDG_RUNTIME_DIR": RUNTIME, keeper.SCOPE_ENV: "0"}, TOOL, USER_BUS_AND_V2),  # turned off
], ids=["no-session", "relative-runtime", "no-systemd-run", "no-user-manager", "cgroup-v1",
        "turned-off"])
def test_no_scope_where_one_cannot_be_made(env: dict[str, str], tool: str | None,
                                           present: set[str]) -> None:
    assert _scope(env, tool, present) == []


def test_this_machine_without_a_user_manager_gets_no_scope() -> None:
    """The real look-up, as the window makes it."""
    if os.path.exists(f"{os.environ.get('XDG_RUNTIME_DIR', '/nowhere')}/systemd/private"):
        pytest.skip("a user systemd manager runs here")
    assert keeper.scope_command(1) == []


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the watchdog is Linux's")
def test_the_kernel_starts_under_the_scope_command_with_its_watchdog(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    log = tmp_path / "args"
    tool = tmp_path / "systemd-run"
    tool.write_text('#!/bin/sh\nprintf "%s\\n" "$@" > "$SCOPE_LOG"\n'
                    'while [ "$1" != "--" ]; do shift; done\nshift\nexec "$@"\n')
    tool.chmod(tool.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("SCOPE_LOG", str(log))
    monkeypatch.setenv("GPUMON_KERNEL_FORKSERVER", "0")
    monkeypatch.setattr(keeper, "scope_command",
                        lambda cap, env: [str(tool), "--user", "--scope", "-p",
                                          f"MemoryMax={cap}", "--"])
    inbox = Inbox()
    client = KernelClient(inbox)
    try:
        rid = client.request("run", RunCode("6 * 7"))
        assert inbox.wait("reply", rid, timeout=120).data.ok
        assert client.pid is not None
        parent = psutil.Process(client.pid).parent()
        assert parent is not None and "watchdog.py" in " ".join(parent.cmdline())
        assert parent.environ().get(keeper.IN_SCOPE_ENV) == "1"
        args = log.read_text().split("\n")
        assert args[:4] == ["--user", "--scope", "-p", f"MemoryMax={keeper.memory_cap()}"]
        assert "--keep" in args
    finally:
        client.shutdown(timeout_s=1.0)


def test_report_folders_of_ended_windows_are_removed_when_empty(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A SIGKILLed window leaves its (empty) folder for the kernels' memory reports; the
    next window removes it, and nothing of a running window or with a file in it."""
    monkeypatch.setattr(keeper.tempfile, "tempdir", str(tmp_path))
    ended_pid = max(psutil.pids()) + 100_000  # above every pid in use: no such process
    gone = tmp_path / f"{keeper.REPORT_PREFIX}{ended_pid}-abc"
    kept_full = tmp_path / f"{keeper.REPORT_PREFIX}{ended_pid}-def"
    alive = tmp_path / f"{keeper.REPORT_PREFIX}{os.getpid()}-ghi"
    for folder in (gone, kept_full, alive):
        folder.mkdir()
    (kept_full / "kernel-1").write_text("memory 2 1\n")
    made = Path(keeper.report_folder())
    assert made.parent == tmp_path and made.name.startswith(f"{keeper.REPORT_PREFIX}{os.getpid()}-")
    assert stat.S_IMODE(made.stat().st_mode) == 0o700
    assert not gone.exists() and kept_full.exists() and alive.exists()
