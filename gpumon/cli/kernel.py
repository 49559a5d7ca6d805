"""``gpumon kernel --stdio``: a playground kernel for a window on another machine (issue 50).

The window runs ``ssh HOST gpumon kernel --stdio`` (``playground/client/ssh_kernel.py``)
and speaks the kernel's own length-capped frames on the connection's stdin and stdout, as it
does over a local kernel's pipes. This process only prepares and then becomes (``exec``)
the kernel's watchdog, ``watchdog.py --keep GRACE -1 --connection -- python -m
gpumon.playground.kernel.main``, so that on this machine too:

- the kernel is the watchdog's child, in a session of its own, below a child subreaper: what
  the user's code starts is swept when the kernel ends, however it ended;
- the connection's end ends the kernel and everything it started within the watchdog's
  grace (``--connection``: the far end of stdin hanging up, which happens when the window
  quits, is SIGKILLed, or its ``ssh`` is killed or given up by its keep-alive), also while
  the user's code holds the GIL in one long C call and the kernel's own threads cannot run;
- the window's bytes reach the kernel through the watchdog (``watchdog.Relay``), so its
  Stop is a SIGINT there, as a local window's is, and stops also code held in one C call
  that checks for signals (a regex backtracking, a power of a big integer); a link that goes
  silent without closing (a laptop asleep, a cut cable) ends the kernel after
  :data:`SILENCE_S` without a byte from the window (it beats every second), also where sshd's
  own keep-alive is off, as it is by default;
- the kernel's memory is capped at a fraction of *this* machine's memory
  (``client/keeper.py``'s setting, read here), and a kernel ended at its cap is reported on
  the connection's stderr, from which the window's card says so (``ssh_kernel.py``);
- imports are isolated as a local kernel's are (``lifeline.isolate_imports``): the kernel
  starts in gpumon's own folder, so nothing in the login folder shadows torch or gpumon; the
  login folder is the user's folder, importable after everything else.

No Qt, no torch here: a machine with the core install answers with a sentence from the
kernel (torch missing) rather than a failed start.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from gpumon.playground.client import keeper
from gpumon.playground.data.wire import FOLDER_ENV
from gpumon.playground.kernel.lifeline import GRACE_S, WATCHDOG
from gpumon.playground.kernel.watchdog import SILENCE_ENV

ROOT = Path(__file__).resolve().parents[2]  # the folder that holds gpumon/
KERNEL_MODULE = "gpumon.playground.kernel.main"
#: Seconds of a silent link (no beat from the window, which beats every second) after which
#: the kernel is ended: past ssh's own keep-alive on the window's side (5 s, 3 times), so a
#: link the window still trusts is never given up here first.
SILENCE_S = 20.0
USAGE = "usage: gpumon kernel --stdio\n"


def command(python: str = sys.executable) -> list[str]:
    """The watchdog's argument vector, with the kernel's after ``--``."""
    return [python, "-I", "-S", str(WATCHDOG), "--keep", str(GRACE_S), "-1", "--connection",
            "--", python, "-m", KERNEL_MODULE]


def environment(base: dict[str, str], folder: str) -> dict[str, str]:
    """The kernel's environment: ``base`` with gpumon's folder first on PYTHONPATH, the
    user's folder, and this machine's memory cap."""
    env = dict(base)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    env[FOLDER_ENV] = folder
    env[keeper.CAP_ENV] = str(keeper.memory_cap())
    env.setdefault(SILENCE_ENV, str(SILENCE_S))
    env.pop(keeper.IN_SCOPE_ENV, None)  # nothing of a window here
    env[keeper.REPORT_ENV] = "-"  # the watchdog's stderr: ssh's, read by the window
    return env


def main(argv: list[str]) -> int:
    """Become the kernel's watchdog (never returns on success); 2 for a wrong command line,
    1 when it cannot start."""
    if argv != ["--stdio"]:
        sys.stderr.write(USAGE)
        return 2
    if not keeper.usable():
        sys.stderr.write("gpumon kernel --stdio: needs Linux 5.3 or later (pidfds)\n")
        return 1
    try:
        folder = os.getcwd()
    except OSError:
        folder = os.path.expanduser("~")
    env = environment(dict(os.environ), folder)
    argv_out = command()
    try:
        os.chdir(ROOT)
        sys.stdout.flush()
        os.execve(argv_out[0], argv_out, env)
    except OSError as exc:
        sys.stderr.write(f"gpumon kernel --stdio: cannot start the kernel ({exc})\n")
    return 1
