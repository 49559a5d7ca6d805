"""The ``ssh`` command line: the user's own OpenSSH, never asked to weaken anything.

``ssh`` is the one on PATH, so the user's ``~/.ssh/config``, agent, keys, certificates,
ProxyJump, ControlMaster and known_hosts all apply. gpumon adds only:

- ``BatchMode=yes``: ssh never asks for a password, a passphrase or a host-key decision
  (gpumon has no terminal to ask in); it fails, and ``diagnose.py`` says what to do;
- ``ServerAliveInterval``/``ServerAliveCountMax``: a dead link ends ssh instead of hanging;
- ``ConnectTimeout``: a machine that does not answer fails in seconds;
- ``-T``: no terminal on the far side (the stream is bytes, not a screen);
- ``-F FILE`` when given (a lab's own host list; the tests' config);
- ``--`` before the destination, which ``target.py`` has checked already.

Host-key checking is never touched: an unknown key fails under BatchMode, a changed one
always fails. The remote command is one string that the remote shell splits: gpumon's own
arguments are quoted with :func:`shlex.quote`; the prefix (``--ssh-command``) is the user's
own shell text (``~/venv/bin/gpumon``, ``conda run -n x gpumon``) and is passed as written.
"""

from __future__ import annotations

import shlex
import shutil
from collections.abc import Sequence
from dataclasses import dataclass

from gpumon.ssh.target import DEFAULT_REMOTE, Target


@dataclass(frozen=True, slots=True)
class SshOptions:
    """How every ssh child of one window is started."""

    config_file: str | None = None  # -F FILE
    alive_interval_s: int = 5  # ServerAliveInterval: a dead link ends after interval * count
    alive_count: int = 3
    connect_timeout_s: int = 10
    program: str = "ssh"  # looked up on PATH
    remote_command: str = DEFAULT_REMOTE  # how gpumon starts there (--ssh-command)


def ssh_program(options: SshOptions) -> str | None:
    """The ssh executable's path, or None when it is not on PATH."""
    return shutil.which(options.program)


def remote_command(prefix: str, args: Sequence[str]) -> str:
    """The one string the remote shell runs: ``prefix`` as the user wrote it, then each
    argument quoted so that the remote shell sees it as one word, whatever it holds."""
    quoted = " ".join(shlex.quote(a) for a in args)
    return f"{prefix.strip()} {quoted}".strip()


def ssh_argv(target: Target, command: str, options: SshOptions,
             program: str | None = None) -> list[str]:
    """The argument vector of the ssh child that runs ``command`` on ``target``."""
    argv = [program or options.program, "-T",
            "-o", "BatchMode=yes",
            "-o", f"ServerAliveInterval={max(1, int(options.alive_interval_s))}",
            "-o", f"ServerAliveCountMax={max(1, int(options.alive_count))}",
            "-o", f"ConnectTimeout={max(1, int(options.connect_timeout_s))}"]
    if options.config_file:
        argv += ["-F", options.config_file]
    if target.port is not None:
        argv += ["-p", str(target.port)]
    return [*argv, "--", target.destination, command]
