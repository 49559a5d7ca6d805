"""Which machine to reach: ``[user@]host[:port]`` checked before anything runs.

A host or user name reaches ``ssh`` as an argument, after ``--``, so it can never become an
option; it is still refused when it could surprise anyone who reads it back: a name that
begins with ``-`` (``-oProxyCommand=...`` would be an option to a program without ``--``),
holds whitespace or a control character (a second word or a second line in a shell, a log,
a terminal), or characters no host name has. The sentence says what is wrong; nothing is
run. ``host`` may be an alias of the user's ``ssh_config`` (``lab1``): ssh resolves it.

    parse_target("alice@lab1:2222") -> Target(host="lab1", user="alice", port=2222)
    parse_targets("lab1,lab2")      -> two Targets; "@hosts.txt" reads one a line, # comments
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from gpumon.i18n import tr
from gpumon.untrusted import for_terminal

DEFAULT_REMOTE = "gpumon"  # how gpumon starts on the other machine (--ssh-command)
MAX_NAME = 253  # the longest DNS name; an alias or a user name is no longer in practice
MAX_HOSTS = 1000  # a host list longer than this is not a lab, it is a mistake
MAX_FILE_BYTES = 1 << 20
# Letters, digits, dot, dash, underscore: DNS names, ssh_config aliases, IPv4. An IPv6
# address goes in brackets ([::1]:22), and may carry a zone (%eth0).
_HOST = re.compile(r"[A-Za-z0-9_.\-]+")
_IPV6 = re.compile(r"\[([0-9A-Fa-f:.]+(%[A-Za-z0-9_.\-]+)?)\]")
_USER = re.compile(r"[A-Za-z0-9_.\-$]+")


class TargetError(ValueError):
    """A host string gpumon will not hand to ssh; ``str()`` is the sentence why."""


@dataclass(frozen=True, slots=True)
class Target:
    """One machine as ssh is asked to reach it; ``host`` may be an ssh_config alias."""

    host: str
    user: str | None = None
    port: int | None = None

    @property
    def destination(self) -> str:
        """What follows ``--`` on ssh's command line: ``user@host`` or ``host``."""
        return f"{self.user}@{self.host}" if self.user else self.host

    @property
    def name(self) -> str:
        """How the window names the machine: as the user wrote it."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        text = f"{self.user}@{host}" if self.user else host
        return f"{text}:{self.port}" if self.port is not None else text


def _refuse(text: str, why: str) -> TargetError:
    return TargetError(tr("'{host}' is not a machine gpumon will connect to: {why}",
                          host=for_terminal(text[:80]), why=why))


def _check_word(text: str, whole: str, what: str) -> None:
    if not text:
        raise _refuse(whole, tr("the {what} is empty", what=what))
    if text.startswith("-"):
        raise _refuse(whole, tr("a {what} cannot begin with '-' (it would read as an "
                                "option)", what=what))
    if any(ch.isspace() or not ch.isprintable() for ch in text):
        raise _refuse(whole, tr("a {what} cannot hold spaces or control characters",
                                what=what))


def parse_target(text: str) -> Target:
    """``[user@]host[:port]`` as a Target; TargetError with a sentence when refused."""
    whole = text
    if len(text) > MAX_NAME + 40:
        raise _refuse(text, tr("it is too long"))
    _check_word(text, whole, tr("machine name"))
    user: str | None = None
    if "@" in text:
        user, text = text.rsplit("@", 1)
        _check_word(user, whole, tr("user name"))
        if not _USER.fullmatch(user):
            raise _refuse(whole, tr("the user name holds characters a login has not"))
    port: int | None = None
    close = text.find("]")
    bracketed = _IPV6.fullmatch(text[:close + 1]) if text.startswith("[") else None
    if bracketed is not None:
        rest = text[close + 1:]
        host = bracketed.group(1)
        if rest:
            if not rest.startswith(":"):
                raise _refuse(whole, tr("an address in brackets is followed by :PORT only"))
            port = _port(rest[1:], whole)
    else:
        host, sep, port_text = text.partition(":")
        if sep:
            port = _port(port_text, whole)
        _check_word(host, whole, tr("machine name"))
        if not _HOST.fullmatch(host) or len(host) > MAX_NAME:
            raise _refuse(whole, tr("a machine name holds only letters, digits, '.', '-' "
                                    "and '_' (an IPv6 address goes in brackets)"))
    return Target(host=host, user=user, port=port)


def _port(text: str, whole: str) -> int:
    if not (text.isascii() and text.isdigit() and 1 <= int(text) <= 65535):
        raise _refuse(whole, tr("the port is a number from 1 to 65535"))
    return int(text)


def parse_targets(text: str) -> list[Target]:
    """``host1,host2,...`` or ``@FILE`` (one host a line; ``#`` starts a comment), each
    checked, duplicates dropped (the first kept). TargetError names the first refused one,
    or the file that cannot be read."""
    if text.startswith("@"):
        words = _read_host_file(Path(text[1:]))
    else:
        words = [w.strip() for w in text.split(",") if w.strip()]
    if not words:
        raise TargetError(tr("no machine named: give host1,host2 or @FILE"))
    if len(words) > MAX_HOSTS:
        raise TargetError(tr("{n} machines is more than gpumon watches at once ({most})",
                             n=len(words), most=MAX_HOSTS))
    seen: dict[str, Target] = {}
    for word in words:
        target = parse_target(word)
        seen.setdefault(target.name, target)
    return list(seen.values())


def _read_host_file(path: Path) -> list[str]:
    try:
        with path.open("rb") as f:
            data = f.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise TargetError(tr("cannot read the host list {path} ({error})",
                             path=for_terminal(str(path)), error=exc.strerror or exc)) from None
    if len(data) > MAX_FILE_BYTES:
        raise TargetError(tr("the host list {path} is over 1 MiB",
                             path=for_terminal(str(path))))
    words = []
    for line in data.decode("utf-8", "replace").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            words.append(line)
    return words
