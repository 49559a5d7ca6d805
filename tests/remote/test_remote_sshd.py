"""A remote machine's GPUs through a real sshd on 127.0.0.1, and every fault of a bad link made
for real: each ends in a sentence, and the machine comes back by itself once the cause goes.

The "machines" are Host aliases of one sshd (``sshd.py``); each runs this checkout's gpumon
against the fake NVML with its own scenario, so the values are exact.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from sshd import Lab, Sshd, keygen, remote_script, remote_streams, ssh_clients

from gpumon.remote.source import RemoteSource
from gpumon.ssh.backoff import Backoff
from gpumon.ssh.command import SshOptions
from gpumon.ssh.diagnose import Kind
from gpumon.ssh.target import parse_target
from gpumon.telemetry.model.types import Snapshot, SourceState

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]
INTERVAL = 0.3


def wait_for(check, timeout_s: float, what: str):
    deadline = time.monotonic() + timeout_s
    while True:
        got = check()
        if got:
            return got
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s:g} s waiting for {what}")
        time.sleep(0.05)


def gpumon(*args: str, timeout: float = 90) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(ROOT), os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, "-m", "gpumon", *args], capture_output=True,
                          text=True, timeout=timeout, env=env)


def options(lab: Lab, command: Path | None = None, alive: int = 5) -> SshOptions:
    return SshOptions(config_file=str(lab.config), remote_command=str(command or lab.gpumon),
                      alive_interval_s=alive, alive_count=2)


@pytest.fixture
def open_sources() -> Iterator[list[RemoteSource]]:
    made: list[RemoteSource] = []
    yield made
    for source in made:
        source.close()


def source_for(made: list[RemoteSource], lab: Lab, host: str = "lab1", **kw: object
               ) -> RemoteSource:
    source = RemoteSource(parse_target(host), kw.pop("opts", None) or options(lab),  # type: ignore[arg-type]
                          INTERVAL, backoff=Backoff(0.2, 1.0, healthy_s=5.0))
    made.append(source)
    source.open()
    return source


def fresh(source: RemoteSource, gpus: int = 2) -> Snapshot | None:
    snap = source.sample()
    ok = snap.status.state is SourceState.OK and len(snap.samples) == gpus and not any(
        s.lost for s in snap.samples)
    return snap if ok else None


def failing(source: RemoteSource, kind: Kind) -> str:
    """The sentence once the feed failed with ``kind`` (the snapshot carries it too)."""
    def check() -> str:
        feed = source.feed
        assert feed is not None
        state = feed.state()
        if state.problem_kind is kind:
            snap = source.sample()
            assert snap.status.state is SourceState.ERROR
            assert snap.status.message == state.problem
            return state.problem
        return ""
    return str(wait_for(check, 30, f"a {kind.value} failure"))


def test_once_json_over_ssh_equals_the_machines_own(lab: Lab) -> None:
    """`gpumon --ssh lab1 --once --json` gives the GPU values gpumon prints on lab1 itself."""
    remote = gpumon("--ssh", "lab1", "--ssh-config", str(lab.config),
                    "--ssh-command", str(lab.gpumon), "--once", "--json")
    assert remote.returncode == 0, remote.stderr
    # lab1 itself: the same script, with lab1's scenario, run here without ssh.
    local = subprocess.run([str(lab.gpumon), "--once", "--json"], capture_output=True,
                           text=True, timeout=60, env=dict(os.environ, FAKENVML_GPUS="2"))
    assert local.returncode == 0, local.stderr
    theirs, ours = json.loads(local.stdout), json.loads(remote.stdout)
    assert ours["machine"]["host_name"] == "lab1" and ours["machine"]["source"] == "SSH"
    assert len(ours["gpus"]) == 2

    def values(doc: dict) -> list[dict]:  # type: ignore[type-arg]
        skip = {"timestamp_epoch_s", "energy_mj", "pcie_rx_bytes_per_s", "pcie_tx_bytes_per_s",
                "activity_state"}
        return [{k: v for k, v in g.items() if k not in skip} for g in doc["gpus"]]
    assert values(ours) == values(theirs)
    assert [p["pid"] for p in ours["processes"]] == [p["pid"] for p in theirs["processes"]]


def test_two_machines_with_their_own_scenarios(lab: Lab) -> None:
    done = gpumon("--ssh", "lab1,lab2", "--ssh-config", str(lab.config),
                  "--ssh-command", str(lab.gpumon), "--once")
    assert done.returncode == 0, done.stderr
    assert "lab1: 2 GPUs" in done.stdout and "lab2: 3 GPUs" in done.stdout


def test_closing_leaves_no_ssh_and_no_remote_gpumon(lab: Lab,
                                                    open_sources: list[RemoteSource]) -> None:
    source = source_for(open_sources, lab)
    wait_for(lambda: fresh(source), 30, "lab1's first snapshot")
    assert ssh_clients(lab) and remote_streams(lab)
    started = time.monotonic()
    source.close()
    assert time.monotonic() - started < 1.5
    assert ssh_clients(lab) == []
    wait_for(lambda: remote_streams(lab) == [], 10, "the remote gpumon to end")


def test_sshd_stopped_then_back(lab: Lab, open_sources: list[RemoteSource]) -> None:
    source = source_for(open_sources, lab)
    wait_for(lambda: fresh(source), 30, "lab1's first snapshot")
    sessions = lab.sshd.sessions()
    lab.sshd.stop()
    for pid in sessions:  # the machine is gone, not only its listener
        os.kill(pid, signal.SIGKILL)
    sentence = failing(source, Kind.REFUSED)
    assert "lab1 refused the connection" in sentence
    snap = source.sample()
    assert [s.lost for s in snap.samples] == [True, True]  # the GPUs stay, shown lost
    assert snap.samples[0].message == sentence
    lab.sshd.start()
    wait_for(lambda: fresh(source), 30, "lab1 to come back")


def test_ssh_child_killed_then_back(lab: Lab, open_sources: list[RemoteSource]) -> None:
    source = source_for(open_sources, lab)
    wait_for(lambda: fresh(source), 30, "lab1's first snapshot")
    assert source.feed is not None and source.feed.pid is not None
    os.kill(source.feed.pid, signal.SIGKILL)
    assert "SIGKILL" in failing(source, Kind.KILLED)
    wait_for(lambda: fresh(source), 30, "lab1 to come back")
    assert source.feed.connects >= 2


def test_stalled_stream_turns_stale_then_recovers(lab: Lab,
                                                  open_sources: list[RemoteSource]) -> None:
    """The remote gpumon stopped (SIGSTOP): no line for three intervals, the values are
    stale (the GPUs shown lost with the reason); SIGCONT and they are fresh again."""
    source = source_for(open_sources, lab)
    wait_for(lambda: fresh(source), 30, "lab1's first snapshot")
    streams = remote_streams(lab)
    for pid in streams:
        os.kill(pid, signal.SIGSTOP)
    try:
        snap = wait_for(lambda: (s := source.sample()).status.state is SourceState.ERROR and s,
                        30, "the stall to show")
        assert "No reading from lab1" in snap.status.message
        assert all(s.lost for s in snap.samples)
    finally:
        for pid in streams:
            os.kill(pid, signal.SIGCONT)
    wait_for(lambda: fresh(source), 30, "lab1 to come back")


def test_dead_link_ended_by_keepalive(lab: Lab, open_sources: list[RemoteSource]) -> None:
    """The server side of the link stopped (its sshd session, SIGSTOP): ssh's keep-alive ends
    the link, the sentence says so, and a new connection brings the machine back."""
    source = source_for(open_sources, lab, opts=options(lab, alive=1))
    wait_for(lambda: fresh(source), 30, "lab1's first snapshot")
    sessions = lab.sshd.sessions()
    for pid in sessions:
        with contextlib.suppress(ProcessLookupError):  # a session may end meanwhile
            os.kill(pid, signal.SIGSTOP)
    try:
        assert "stopped answering" in failing(source, Kind.DEAD_LINK)
        wait_for(lambda: fresh(source), 30, "lab1 to come back on a new connection")
    finally:
        for pid in sessions:
            for sig in (signal.SIGKILL, signal.SIGCONT):  # gone already once sshd reaped it
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, sig)


def test_changed_host_key_is_never_accepted(lab: Lab, tmp_path: Path,
                                            open_sources: list[RemoteSource]) -> None:
    good = lab.known_hosts.read_text()
    keygen(tmp_path / "other")
    lab.write_known_hosts(tmp_path / "other.pub")
    source = source_for(open_sources, lab)
    sentence = failing(source, Kind.HOST_CHANGED)
    assert "CHANGED" in sentence and "ssh-keygen -R lab1" in sentence
    assert source.sample().samples == ()  # nothing was read: ssh refused to go on
    lab.known_hosts.write_text(good)  # the administrator confirmed the key
    wait_for(lambda: fresh(source), 30, "lab1 once known_hosts is right")


def test_unknown_host_key_asks_for_a_terminal(lab: Lab,
                                              open_sources: list[RemoteSource]) -> None:
    lab.known_hosts.write_text("")
    source = source_for(open_sources, lab)
    assert "run `ssh lab1` once in a terminal" in failing(source, Kind.HOST_UNKNOWN)
    assert lab.known_hosts.read_text() == ""  # gpumon accepted nothing


def test_missing_remote_command_then_installed(lab: Lab,
                                               open_sources: list[RemoteSource]) -> None:
    missing = lab.bin / "venv-gpumon"
    source = source_for(open_sources, lab, opts=options(lab, missing))
    assert "pip install gpumon" in failing(source, Kind.REMOTE_MISSING)
    missing.symlink_to(lab.gpumon)  # installed there now
    wait_for(lambda: fresh(source), 30, "lab1 once gpumon is installed")


@pytest.mark.parametrize("body, words", [
    # the 50 lines a login script may print before the header (feed.PREAMBLE_LINES) come
    # in half a second, not five: the feed gives up after the 50th
    ("echo 'Welcome to lab1'; while true; do echo 'not json at all'; sleep 0.01; done",
     "no stream header"),
    ('echo \'{"stream": "gpumon.stream/1", "gpumon": "9", "schema": "gpumon.snapshot/1"}\'; '
     "while true; do echo '{\"schema\": \"gpumon.snapshot/1\", \"gpus\": 3}'; sleep 0.1; done",
     "does not send gpumon snapshots"),
    ('echo \'{"stream": "gpumon.stream/1", "gpumon": "0.1", "schema": "gpumon.snapshot/0"}\'; '
     "sleep 30", "schema gpumon.snapshot/0"),
    (f"{sys.executable} -c \"import sys; sys.stdout.write('{{' + 'x' * 3000000)\"; sleep 30",
     "over 1 MiB"),
])
def test_a_remote_that_sends_something_else(lab: Lab, open_sources: list[RemoteSource],
                                            body: str, words: str) -> None:
    script = remote_script(lab.bin / "odd", body)
    source = source_for(open_sources, lab, opts=options(lab, script))
    sentence = failing(source, Kind.OTHER)
    assert words in sentence
    assert source.feed is not None and source.feed.connects >= 1
    script.unlink()
    script.symlink_to(lab.gpumon)  # the right gpumon there now
    wait_for(lambda: fresh(source), 30, "lab1 once it streams snapshots")


def test_a_server_that_accepts_no_key(lab: Lab, tmp_path: Path,
                                      open_sources: list[RemoteSource]) -> None:
    stranger = keygen(tmp_path / "stranger")
    other = Sshd(tmp_path / "sshd2", stranger)
    other.start()
    try:
        lab.machines["lab3"] = {}
        lab.write_config()
        lab.config.write_text(lab.config.read_text().replace(
            f"Host lab3\n  HostName 127.0.0.1\n  Port {lab.sshd.port}",
            f"Host lab3\n  HostName 127.0.0.1\n  Port {other.port}"))
        kind, key = other.host_key.with_suffix(".pub").read_text().split()[:2]
        with lab.known_hosts.open("a") as f:
            f.write(f"[127.0.0.1]:{other.port} {kind} {key}\n")
        source = source_for(open_sources, lab, host="lab3")
        sentence = failing(source, Kind.AUTH)
        assert "ssh-copy-id lab3" in sentence and "ssh-add" in sentence
    finally:
        other.stop()


def test_no_driver_on_the_remote_is_its_own_sentence(lab: Lab,
                                                     open_sources: list[RemoteSource]) -> None:
    script = remote_script(lab.bin / "nodriver", (
        f"export PYTHONPATH={ROOT} GPUMON_TEST_LAB={lab.folder} LD_LIBRARY_PATH=/nonexistent\n"
        f"exec {sys.executable} -m gpumon \"$@\""))
    source = source_for(open_sources, lab, opts=options(lab, script))
    snap = wait_for(lambda: (s := source.sample()).status.state is SourceState.LIBRARY_NOT_FOUND
                    and s, 30, "the remote's own status")
    assert snap.status.message.startswith("On lab1: No NVIDIA driver was found")


def test_a_host_named_like_an_option_is_refused_before_anything_runs(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    fake_ssh = remote_script(tmp_path / "ssh", f"touch {marker}")
    env_path = f"{tmp_path}:{os.environ['PATH']}"
    done = subprocess.run(
        [sys.executable, "-m", "gpumon", f"--ssh=-oProxyCommand=touch {marker}", "--once"],
        capture_output=True, text=True, timeout=60,
        env=dict(os.environ, PATH=env_path, PYTHONPATH=str(ROOT)))
    assert done.returncode == 2
    assert "cannot begin with '-'" in done.stderr
    assert not marker.exists()
    assert fake_ssh.exists()


def test_once_says_why_in_one_sentence_and_exits_1(lab: Lab) -> None:
    done = gpumon("--ssh", "lab1", "--ssh-config", str(lab.config),
                  "--ssh-command", str(lab.bin / "not-there"), "--once")
    assert done.returncode == 1
    assert done.stderr.startswith("gpumon: gpumon is not installed on lab1")
    assert "Traceback" not in done.stderr and done.stdout == ""


def test_topo_and_dmon_over_ssh(lab: Lab) -> None:
    """`gpumon topo --ssh lab1` prints the matrix gpumon topo prints on lab1 itself, and
    `gpumon dmon --ssh lab1` a row per GPU per reading."""
    ssh = ("--ssh", "lab1", "--ssh-config", str(lab.config), "--ssh-command", str(lab.gpumon))
    remote = gpumon("topo", *ssh)
    local = subprocess.run([str(lab.gpumon), "topo"], capture_output=True, text=True,
                           timeout=60, env=dict(os.environ, FAKENVML_GPUS="2"))
    assert remote.returncode == 0 and local.returncode == 0, remote.stderr + local.stderr
    assert remote.stdout == local.stdout and "GPU1" in remote.stdout
    dmon = gpumon("dmon", *ssh, "-c", "2", "-d", "0.5")
    assert dmon.returncode == 0, dmon.stderr
    lines = [line for line in dmon.stdout.splitlines() if not line.startswith("#")]
    assert [line.split()[0] for line in lines] == ["0", "1", "0", "1"]
    refused = gpumon("dmon", "--ssh=-oProxyCommand=x", "-c", "1")
    assert refused.returncode == 2 and "cannot begin with '-'" in refused.stderr


def test_a_killed_gpumon_leaves_no_ssh_and_no_remote_gpumon(lab: Lab) -> None:
    """gpumon SIGKILLed (no close at all): its ssh child's next write finds no reader and
    ssh ends, and the remote stream ends with the connection."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen(
        [sys.executable, "-m", "gpumon", "--ssh", "lab1", "--ssh-config", str(lab.config),
         "--ssh-command", str(lab.gpumon), "-l", "0.3", "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    try:
        assert proc.stdout is not None
        assert json.loads(proc.stdout.readline())["machine"]["host_name"] == "lab1"
        assert ssh_clients(lab) and remote_streams(lab)
    finally:
        proc.kill()
        proc.wait(10)
        if proc.stdout is not None:
            proc.stdout.close()
    wait_for(lambda: ssh_clients(lab) == [] and remote_streams(lab) == [], 15,
             "ssh and the remote gpumon to end after gpumon was killed")
