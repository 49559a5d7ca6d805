"""Memory the kernel's control group still allows: the limit a container or systemd sets.

psutil's ``available`` is the whole machine's, so inside a container limited to 2 GiB it can
promise 60 GiB and the OOM killer ends the process instead of the guard refusing. cgroup v2
publishes ``memory.max`` and ``memory.current`` in the process's own group
(``/proc/self/cgroup`` gives its path); v1 has ``memory.limit_in_bytes`` and
``memory.usage_in_bytes``. A missing file or ``max`` means no limit.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

Reader = Callable[[str], "str | None"]

#: v1 reports "no limit" as a huge number (a page-rounded 2**63 - 1); above this is no limit.
NO_LIMIT_ABOVE = 1 << 60


def read_text(path: str) -> str | None:
    """The file's stripped text, or None if it cannot be read."""
    try:
        return Path(path).read_text().strip()
    except OSError:
        return None


def _number(text: str | None) -> int | None:
    if text is None or not text.isdigit():
        return None  # "max", missing or unreadable
    value = int(text)
    return value if value < NO_LIMIT_ABOVE else None


def _group_paths(own: str) -> tuple[str | None, str | None]:
    """(v1 memory controller's path, v2 unified path) from ``/proc/self/cgroup``."""
    v1 = v2 = None
    for line in own.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        if parts[0] == "0" and parts[1] == "":
            v2 = parts[2]
        elif "memory" in parts[1].split(","):
            v1 = parts[2]
    return v1, v2


def _under(root: str, path: str) -> str:
    return root if path in ("", "/") else f"{root}{path.rstrip('/')}"


def cgroup_headroom(read: Reader = read_text, root: str = "/sys/fs/cgroup") -> int | None:
    """Bytes this process's cgroup may still allocate; None when there is no limit.

    A hybrid host lists both kinds; the v1 memory controller, when listed, is the one that
    limits. Inside a container's cgroup namespace the group is mounted at the root, so the
    root is tried when the group's own folder has no file.
    """
    v1, v2 = _group_paths(read("/proc/self/cgroup") or "")
    if v1 is not None:
        names, bases = ("memory.limit_in_bytes", "memory.usage_in_bytes"), \
            [_under(f"{root}/memory", v1), f"{root}/memory"]
    elif v2 is not None:
        names, bases = ("memory.max", "memory.current"), [_under(root, v2), root]
    else:
        return None
    for base in bases:
        text = read(f"{base}/{names[0]}")
        if text is None:
            continue
        limit = _number(text)
        if limit is None:
            return None
        used = _number(read(f"{base}/{names[1]}")) or 0
        return max(0, limit - used)
    return None
