"""How a device is named, read one way everywhere: a GPU's UUID and torch's ``cuda:N``.

NVML (the monitor), torch (the playground's kernel) and the window, which matches the two,
all read names here. No Qt, torch or NVML.
"""

from __future__ import annotations

import re

_HEX32 = re.compile(r"[0-9a-f]{32}")
_CUDA_N = re.compile(r"cuda:(0|[1-9][0-9]*)", re.ASCII)


def normalize_uuid(text: str | bytes | None) -> str | None:
    """The 32 lowercase hex digits of a GPU's or MIG instance's UUID; None when there are none.

    The same UUID comes spelled several ways: NVML writes ``GPU-5f3c1a2b-...-...``, torch's
    ``get_device_properties(i).uuid`` prints the same digits, without the prefix in most
    versions; older pynvml returns bytes (``b"GPU-..."``, decoded as ASCII); case, braces
    (``{5f3c...}``) and dashes do not count. Two spellings name the same device when their
    digits are equal.

    MIG instances: a UUID of the form ``MIG-xxxxxxxx-xxxx-...`` (drivers from R470) is the
    instance's own, distinct from its GPU's, so it gives its digits like a GPU's UUID and
    never matches its parent GPU. The older form ``MIG-GPU-<parent uuid>/<gi>/<ci>`` names the
    instance by its parent's UUID: it gives None rather than the parent's digits, because an
    instance read as its whole GPU would be shown the GPU's free memory and graphs. None
    matches nothing.
    """
    if text is None:
        return None
    if isinstance(text, bytes):
        try:
            text = text.decode("ascii")
        except UnicodeDecodeError:
            return None
    s = text.strip().lower()
    for prefix in ("gpu-", "mig-"):
        if s.startswith(prefix):
            s = s[len(prefix):]
            break
    s = s.strip("{}").replace("-", "")
    return s if _HEX32.fullmatch(s) else None


def cuda_index(device: str | None) -> int | None:
    """``3`` for ``"cuda:3"``; None for any other name.

    Exactly the ``cuda:N`` that ``torch.device`` accepts: ASCII digits without a sign, space or
    leading zero. ``"cuda"`` without an index, ``"cpu"``, ``"cuda:-1"``, ``"cuda:01"`` and
    ``"cuda:x"`` give None.
    """
    if not device:
        return None
    found = _CUDA_N.fullmatch(device)
    return None if found is None else int(found.group(1))
