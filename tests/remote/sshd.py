"""A real OpenSSH server on 127.0.0.1, as the current user, and an ssh_config of "machines".

``Lab`` makes, in a temporary folder: a host key and a user key (ssh-keygen), an
``authorized_keys``, an ``sshd_config`` for ``/usr/sbin/sshd -D -e`` on a free loopback port,
a ``known_hosts`` that knows the host key, and an ``ssh_config`` with a Host alias per
machine (``lab1``, ``lab2``, ... -> 127.0.0.1, that port) handed to gpumon with ``-F``.
Each machine's remote gpumon is a small script in ``bin/`` that runs this checkout's gpumon
with the project's fake NVML and that machine's scenario (FAKENVML_* variables), so the
values are exact and known. Tests skip, saying why, where sshd or ssh-keygen is missing.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
QUICK_BENCHMARK = ROOT / "tests" / "quick_benchmark"  # sitecustomize.py: the timing step's budget
SSHD = "/usr/sbin/sshd"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def need_openssh() -> None:
    if not os.access(SSHD, os.X_OK):
        pytest.skip("OpenSSH's server is not installed (Debian: apt-get install openssh-server)")
    for tool in ("ssh", "ssh-keygen"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not installed (Debian: apt-get install openssh-client)")


def keygen(path: Path) -> str:
    """A new ed25519 key at ``path``; its public line."""
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "gpumon-test",
                    "-f", str(path)], check=True, timeout=30)
    return path.with_suffix(".pub").read_text().strip()


class Sshd:
    """One sshd process on ``port``, accepting the keys in ``authorized_keys``."""

    def __init__(self, folder: Path, authorized: str, port: int | None = None) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self.port = port or free_port()
        self.host_key = folder / "host_ed25519"
        if not self.host_key.exists():
            keygen(self.host_key)
        (folder / "authorized_keys").write_text(authorized + "\n")
        self.config = folder / "sshd_config"
        self.config.write_text("\n".join([
            f"Port {self.port}", "ListenAddress 127.0.0.1", f"HostKey {self.host_key}",
            f"PidFile {folder / 'sshd.pid'}",
            f"AuthorizedKeysFile {folder / 'authorized_keys'}", "StrictModes no",
            "PasswordAuthentication no", "KbdInteractiveAuthentication no",
            "PubkeyAuthentication yes", "PermitRootLogin yes", "UsePAM no",
            "AcceptEnv FAKENVML_* GPUMON_TEST_*", "PermitUserEnvironment yes",
            "ClientAliveInterval 0", "MaxStartups 100:30:200", "MaxSessions 100",
            "LogLevel ERROR", ""]))
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        Path("/run/sshd").mkdir(parents=True, exist_ok=True)  # privilege separation, as root
        with open(self.folder / "sshd.log", "ab") as log:
            self.proc = subprocess.Popen([SSHD, "-f", str(self.config), "-D", "-e"],
                                         stdout=subprocess.DEVNULL, stderr=log)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                log = (self.folder / "sshd.log").read_text(errors="replace")
                pytest.fail(f"sshd exited at once: {log[-2000:]}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1) as s:
                    if s.recv(4).startswith(b"SSH-"):
                        return
            except OSError:
                time.sleep(0.05)
        pytest.fail("sshd did not answer within 20 s")

    def stop(self) -> None:
        """Stop listening: the listener ends; sessions already open go on (as with a real
        server's restart), so a test that means a dead machine kills those too."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)
        self.proc = None

    def sessions(self) -> list[int]:
        """The PIDs of this sshd's session processes (children of the listener)."""
        if self.proc is None:
            return []
        out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(self.proc.pid)],
                             capture_output=True, text=True).stdout
        return [int(p) for p in out.split()]


def remote_script(path: Path, body: str) -> Path:
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(0o755)
    return path


class Lab:
    """An sshd, keys, known_hosts, an ssh_config with Host aliases, remote gpumon scripts."""

    def __init__(self, folder: Path, fake_lib: Path, machines: dict[str, dict[str, str]]) -> None:
        need_openssh()
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self.user_key = folder / "id_ed25519"
        public = keygen(self.user_key)
        # The remote PATH: a folder for tools a test puts there (a fake nvidia-smi), then the
        # system's; no gpumon on it (the tests name theirs with --ssh-command).
        self.remote_path = folder / "remote-path"
        self.remote_path.mkdir()
        self.sshd = Sshd(folder / "sshd", f'environment="PATH={self.remote_path}:/usr/bin:/bin" '
                         + public)
        self.known_hosts = folder / "known_hosts"
        self.write_known_hosts(self.sshd.host_key.with_suffix(".pub"))
        driver = folder / "fake-driver"
        driver.mkdir()
        (driver / "libnvidia-ml.so.1").symlink_to(fake_lib.resolve())
        self.bin = folder / "bin"
        self.bin.mkdir()
        # The remote gpumon: this checkout, the fake NVML; the scenario comes with SetEnv.
        # sshd passes no PYTHONPATH on: the lesson's timing step gets the tests' short budget
        # here too (tests/quick_benchmark; 1 s a case on both cores otherwise).
        self.gpumon = remote_script(self.bin / "gpumon", (
            f"export PYTHONPATH={ROOT}:{QUICK_BENCHMARK} LD_LIBRARY_PATH={driver} "
            f"GPUMON_TEST_LAB={folder}\n"
            f"exec {sys.executable} -m gpumon \"$@\""))
        self.machines = machines
        self.config = folder / "ssh_config"
        self.write_config()

    def write_known_hosts(self, public: Path) -> None:
        kind, key = public.read_text().split()[:2]
        self.known_hosts.write_text(f"[127.0.0.1]:{self.sshd.port} {kind} {key}\n")

    def write_config(self, port: int | None = None) -> None:
        lines = []
        for name, env in self.machines.items():
            lines += [f"Host {name}", "  HostName 127.0.0.1",
                      f"  Port {port or self.sshd.port}", "  User root",
                      f"  IdentityFile {self.user_key}", "  IdentitiesOnly yes",
                      "  IdentityAgent none", f"  UserKnownHostsFile {self.known_hosts}",
                      "  GlobalKnownHostsFile /dev/null", "  CheckHostIP no",
                      "  ControlMaster no", "  ControlPath none"]
            if env:
                lines.append("  SetEnv " + " ".join(f"{k}={v}" for k, v in env.items()))
        self.config.write_text("\n".join(lines) + "\n")

    def start(self) -> Lab:
        self.sshd.start()
        return self

    def stop(self) -> None:
        self.sshd.stop()
        kill_remote_streams(self)


def _processes(test: Callable[[bytes, bytes], bool]) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if (entry / "stat").read_text().rsplit(")", 1)[-1].split()[0] == "Z":
                continue  # a zombie holds no link and no GPU
            if test((entry / "cmdline").read_bytes(), (entry / "environ").read_bytes()):
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def ssh_clients(lab: Lab) -> list[int]:
    """The ssh client processes that use this lab's ssh_config (gpumon's children)."""
    config = str(lab.config).encode()
    return _processes(lambda cmd, _env: cmd.split(b"\0")[0].endswith(b"ssh") and config in cmd)


def remote_streams(lab: Lab) -> list[int]:
    """The remote gpumon processes sshd started for this lab."""
    mark = f"GPUMON_TEST_LAB={lab.folder}".encode()
    return _processes(lambda _cmd, env: mark in env.split(b"\0"))


def kill_remote_streams(lab: Lab) -> None:
    for pid in remote_streams(lab):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def replay_remote(lab: Lab, name: str, line: str, interval_s: float = 1.0) -> Path:
    """A remote "gpumon" that costs almost nothing there: it prints the stream's header, then
    ``line`` (one recorded snapshot) every ``interval_s`` (the reader restamps each on
    arrival). For many machines on one test host, where 30 real remote gpumons would compete
    with what is measured or tested."""
    from gpumon.text.json_in import header_line

    data = lab.folder / f"{name}.jsonl"
    data.write_text(line.strip() + "\n")
    header = lab.folder / f"{name}.header"
    header.write_text(header_line(interval_s) + "\n")
    return remote_script(lab.bin / name, (
        f"export GPUMON_TEST_LAB={lab.folder}\n"
        f"cat {header}\nwhile cat {data}; do sleep {interval_s:g}; done"))


def record_line(lab: Lab, gpus: int) -> str:
    """One snapshot line of ``gpus`` fake GPUs, as lab's remote gpumon streams it."""
    done = subprocess.run([str(lab.gpumon), "stream", "--count", "1"], capture_output=True,
                          text=True, timeout=60, env=dict(os.environ, FAKENVML_GPUS=str(gpus)),
                          check=True)
    return done.stdout.splitlines()[1]
