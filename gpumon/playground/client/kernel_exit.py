"""How a playground kernel ended, and what went with it: the data of the log's card."""

from __future__ import annotations

import signal
from dataclasses import dataclass

from gpumon.i18n import ntr, tr

#: How many of a lost workspace's names its card lists.
LOST_NAMES_SHOWN = 20


@dataclass(frozen=True)
class KernelExit:
    """How a kernel ended and what went with it, for the card in the log."""

    pid: int
    returncode: int | None  # negative: killed by that signal (POSIX)
    lost_names: tuple[str, ...] = ()  # the workspace as last reported (its first names)
    lost_requests: tuple[int, ...] = ()  # request ids that never got their answer
    reason: str = "died"  # "died", "killed after interrupt", "killed during start-up",
    # "restarted", "protocol" (it sent what the window cannot read), "closed its output"
    detail: str = ""  # for "protocol": what was wrong with the message, a sentence
    lost_total: int | None = None  # how many names the workspace had (None: len(lost_names))
    memory: tuple[int, int] | None = None  # (used, cap) bytes: its watchdog ended it for that
    watchdog_lost: bool = False  # its watchdog was killed, so the window killed it
    problem: str = ""  # over ssh: why the link or the remote command failed, a sentence

    def signal_name(self) -> str | None:
        """``SIGKILL`` when a signal ended it (POSIX), else None."""
        code = self.returncode
        if code is None or code >= 0:
            return None
        try:
            return signal.Signals(-code).name
        except ValueError:
            return f"signal {-code}"

    def how(self) -> str:
        """``killed by SIGKILL`` / ``exited with code 3``: the cause in a person's words (in
        the chosen language), to follow "was" in a sentence."""
        name = self.signal_name()
        if name is not None:
            return tr("killed by {signal}", signal=name)
        if self.returncode is None:
            return tr("ended")
        return tr("exited with code {code}", code=self.returncode)

    def sentence(self) -> str:
        """``The playground kernel (pid 12) was killed by SIGKILL.``"""
        if self.problem:
            return self.problem
        if self.memory is not None:
            used, cap = self.memory
            return tr("The playground kernel (pid {pid}) ran out of its {cap} GB of memory "
                      "(it held {used} GB), so it was stopped.", pid=self.pid,
                      cap=f"{cap / 1e9:.1f}", used=f"{used / 1e9:.1f}")
        if self.watchdog_lost:
            return tr("The playground kernel's watchdog was ended, so the kernel (pid {pid}) "
                      "was stopped: it may not run unwatched.", pid=self.pid)
        name = self.signal_name()
        if name is not None:
            return tr("The playground kernel (pid {pid}) was killed by {signal}.",
                      pid=self.pid, signal=name)
        if self.returncode is None:
            return tr("The playground kernel (pid {pid}) ended.", pid=self.pid)
        return tr("The playground kernel (pid {pid}) exited with code {code}.",
                  pid=self.pid, code=self.returncode)

    def lost_text(self) -> str:
        """``the workspace (x, y) is gone`` or ``the workspace was empty``; at most
        :data:`LOST_NAMES_SHOWN` names, then how many more."""
        total = len(self.lost_names) if self.lost_total is None else self.lost_total
        if not total:
            return tr("The workspace was empty, so nothing was lost.")
        names = ", ".join(self.lost_names[:LOST_NAMES_SHOWN])
        if total > LOST_NAMES_SHOWN:
            names += ntr(" and {count} more", " and {count} more", total - LOST_NAMES_SHOWN,
                         count=f"{total - LOST_NAMES_SHOWN:,}")
        return tr("The workspace ({names}) is gone.", names=names)
