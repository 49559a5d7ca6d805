"""Facts derived from a Snapshot that several views show (window, --once, exports), so
each is computed in one place: which GPUs give no process list."""

from __future__ import annotations

from gpumon.i18n import N_, tr
from gpumon.telemetry.types import Snapshot

PROCESS_LIST_UNSUPPORTED = N_("Process list not supported by this GPU/driver")


def unlisted_gpus(snap: Snapshot) -> list[int]:
    """Indices of the GPUs (not lost) whose driver gave no process list on this tick."""
    return [s.index for s in snap.samples if not s.lost and not s.processes_supported]


def process_list_note(snap: Snapshot) -> str:
    """The sentence to show where processes would be, or "" when every list was read.

    gpustat says the same ("Not Supported"): an empty table would claim that nothing runs.
    """
    unlisted = unlisted_gpus(snap)
    if not unlisted:
        return ""
    readable = [s for s in snap.samples if not s.lost]
    if len(unlisted) == len(readable) == 1:
        return tr(PROCESS_LIST_UNSUPPORTED) + "."
    which = ", ".join(str(i) for i in unlisted)
    return tr("{what} (GPU {which}).", what=tr(PROCESS_LIST_UNSUPPORTED), which=which)

