"""Why an ssh child ended, in one sentence with what to do.

OpenSSH says what went wrong on stderr, in English, in words that have not changed in
years ("Permission denied (publickey)", "Host key verification failed.", "Connection
refused"); its exit status is 255 for its own failures, else the remote command's (127:
the shell did not find it). :func:`diagnose` turns the two into a :class:`Problem`: a kind a
program can test and a sentence a person reads. Nothing here runs anything.
"""

from __future__ import annotations

import enum
import signal
from dataclasses import dataclass

from gpumon.i18n import tr
from gpumon.untrusted import for_terminal

SSH_FAILED = 255  # ssh's own exit status on any failure of its own
NOT_FOUND = 127  # a POSIX shell's status for a command it did not find
NOT_EXECUTABLE = 126
MAX_SHOWN = 200  # characters of an unrecognised stderr line shown in a sentence


class Kind(enum.Enum):
    AUTH = "auth"  # needs a password, a passphrase, or a key the server takes
    HOST_UNKNOWN = "host_unknown"
    HOST_CHANGED = "host_changed"
    REFUSED = "refused"
    NO_ROUTE = "no_route"
    DNS = "dns"
    TIMEOUT = "timeout"  # connecting timed out
    DEAD_LINK = "dead_link"  # ServerAlive* ended a link that stopped answering
    CLOSED = "closed"  # the server closed or reset the connection
    REMOTE_MISSING = "remote_missing"  # the remote command is not there
    NO_SSH = "no_ssh"  # no ssh client on this machine
    KILLED = "killed"  # the ssh child was ended by a signal
    OTHER = "other"


@dataclass(frozen=True, slots=True)
class Problem:
    kind: Kind
    sentence: str


# (kind, any of these in stderr), tried in order: the most specific first (a changed key's
# warning also says "Host key verification failed").
_PATTERNS: tuple[tuple[Kind, tuple[str, ...]], ...] = (
    (Kind.HOST_CHANGED, ("REMOTE HOST IDENTIFICATION HAS CHANGED",
                         "POSSIBLE DNS SPOOFING DETECTED")),
    (Kind.HOST_UNKNOWN, ("Host key verification failed", "No ED25519 host key is known",
                         "host key is known for", "authenticity of host")),
    (Kind.AUTH, ("Permission denied", "Too many authentication failures",
                 "no more authentication methods", "Authentication failed")),
    (Kind.DNS, ("Could not resolve hostname", "Name or service not known",
                "Temporary failure in name resolution", "nodename nor servname")),
    (Kind.REFUSED, ("Connection refused",)),
    (Kind.NO_ROUTE, ("No route to host", "Network is unreachable")),
    (Kind.DEAD_LINK, ("not responding", "Broken pipe")),
    (Kind.TIMEOUT, ("Connection timed out", "Operation timed out")),
    (Kind.CLOSED, ("Connection closed by", "Connection reset by", "closed by remote host",
                   "Connection to ")),
)


def _sentence(kind: Kind, host: str, detail: str) -> str:
    if kind is Kind.AUTH:
        return tr("{host} refused the login: ssh needs a key it can use without asking. "
                  "Copy your key there (ssh-copy-id {host}) or load it into your agent "
                  "(ssh-add).", host=host)
    if kind is Kind.HOST_UNKNOWN:
        return tr("{host}'s host key is not known yet: run `ssh {host}` once in a terminal, "
                  "check the fingerprint and accept it; gpumon never accepts a key "
                  "itself.", host=host)
    if kind is Kind.HOST_CHANGED:
        return tr("{host}'s host key has CHANGED since you last connected: this can be an "
                  "attack. gpumon never accepts a changed key; ask the machine's "
                  "administrator, then remove the old key (ssh-keygen -R {host}).", host=host)
    if kind is Kind.REFUSED:
        return tr("{host} refused the connection: no SSH server answers on that port.",
                  host=host)
    if kind is Kind.NO_ROUTE:
        return tr("{host} cannot be reached from here (no route to it).", host=host)
    if kind is Kind.DNS:
        return tr("The name {host} is not known: check its spelling, your ssh_config or "
                  "DNS.", host=host)
    if kind is Kind.TIMEOUT:
        return tr("{host} did not answer in time: it may be off or behind a firewall.",
                  host=host)
    if kind is Kind.DEAD_LINK:
        return tr("The link to {host} stopped answering, and ssh gave it up.", host=host)
    if kind is Kind.CLOSED:
        return tr("{host} closed the connection.", host=host)
    if kind is Kind.REMOTE_MISSING:
        return tr("gpumon is not installed on {host}, or not on its PATH: install it there "
                  "(pip install gpumon) or say how to start it with --ssh-command.",
                  host=host)
    if kind is Kind.KILLED:
        return tr("The ssh process for {host} was ended by a signal ({detail}).", host=host,
                  detail=detail)
    if kind is Kind.NO_SSH:
        return tr("No ssh client was found on this machine: install OpenSSH's client.")
    if detail:
        return tr("The ssh connection to {host} ended: {detail}", host=host, detail=detail)
    return tr("The ssh connection to {host} ended.", host=host)


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)


def diagnose(stderr: str, returncode: int | None, host: str) -> Problem:
    """The Problem that ssh's stderr and exit status tell; ``host`` as the user named it."""
    kind = Kind.OTHER
    for candidate, needles in _PATTERNS:
        if any(n in stderr for n in needles):
            kind = candidate
            break
    if kind in (Kind.OTHER, Kind.CLOSED) and returncode in (NOT_FOUND, NOT_EXECUTABLE):
        kind = Kind.REMOTE_MISSING
    elif kind is Kind.OTHER and ("command not found" in stderr or "not found" in stderr):
        kind = Kind.REMOTE_MISSING
    elif kind is Kind.OTHER and returncode is not None and returncode < 0:
        kind = Kind.KILLED
    detail = ""
    if kind is Kind.KILLED and returncode is not None:
        detail = _signal_name(-returncode)
    if kind is Kind.OTHER:
        lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
        detail = for_terminal(lines[-1][:MAX_SHOWN]) if lines else (
            tr("exit status {code}", code=returncode) if returncode is not None else "")
    return Problem(kind, _sentence(kind, for_terminal(host), detail))
