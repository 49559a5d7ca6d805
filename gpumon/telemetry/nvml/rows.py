"""Arrays of NVML structures read in one pass: a row format built from the binding's own ctypes
layout, unpacked from one copy of the array's bytes.

pynvml's structures answer each field through a Python ``__getattribute__``: reading the 38
metrics of one GPM query field by field cost ~0.3 ms per GPU (a profile on the fake NVML),
most of a tick; unpacked here it costs a few microseconds. The offsets come from the
binding's ``_fields_``, so a binding that changes a layout changes the format with it.
"""

from __future__ import annotations

import ctypes
import struct
from collections.abc import Iterator, Sequence
from typing import Any

_CODES = {4: "I", 8: "Q"}  # unsigned integers by size; "d" is asked for by name


def row_format(ctype: Any, fields: Sequence[tuple[str, str]]) -> struct.Struct:
    """A ``struct`` row of ``ctype`` giving ``fields`` ((name, code): code "d" for a double,
    "u" for an unsigned integer of the field's size), in the order given, which must be the
    order of their offsets."""
    fmt, at = "=", 0
    for name, code in fields:
        member = getattr(ctype, name)
        if member.offset > at:
            fmt += f"{member.offset - at}x"
        fmt += code if code != "u" else _CODES[member.size]
        at = member.offset + member.size
    size = ctypes.sizeof(ctype)
    if size > at:
        fmt += f"{size - at}x"
    return struct.Struct(fmt)


def rows(row: struct.Struct, address: int, count: int) -> Iterator[tuple[Any, ...]]:
    """The ``count`` rows of an array at ``address``, unpacked from one copy of its bytes."""
    return row.iter_unpack(ctypes.string_at(address, row.size * count))
