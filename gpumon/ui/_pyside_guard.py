"""A guard against a reference-count bug in PySide6 6.12 on Python 3.11.

PySide6-Essentials 6.12.0 returns ``None`` (and some ``True``/``False``) from QPainter's void
methods without taking a reference. Every repaint of a pyqtgraph plot then takes references
away from those singletons, and within seconds CPython aborts with "none_dealloc: deallocating
None". Python 3.12 made the singletons immortal, so the bug is harmless there, and 6.11 does
not have it. On an affected install we add 2**40 references to each singleton once, which
keeps them alive for years of repaints. The real fix is to avoid PySide6 6.12 on Python < 3.12.
"""

from __future__ import annotations

import ctypes
import sys

_EXTRA_REFS = 1 << 40
_applied = False


def affected(pyside_version: tuple[int, ...], python_version: tuple[int, ...]) -> bool:
    """True for the PySide6 releases with the bug on a Python without immortal singletons."""
    return tuple(pyside_version[:2]) == (6, 12) and tuple(python_version[:2]) < (3, 12)


def apply() -> bool:
    """Pin None, True and False when this install is affected; True if it did so."""
    global _applied
    import PySide6

    if _applied or not affected(tuple(PySide6.__version_info__[:2]), sys.version_info[:2]):
        return _applied
    for obj in (None, True, False):
        ctypes.c_ssize_t.from_address(id(obj)).value += _EXTRA_REFS
    _applied = True
    return True
