"""The workspace's names and dtypes as a user types them: checked before torch runs, each
refusal a sentence in the chosen language. torch is imported only when a value is looked at.
"""

from __future__ import annotations

import keyword
from itertools import islice
from typing import TYPE_CHECKING, Any

from gpumon.i18n import ntr, tr
from gpumon.playground.data import actions as act
from gpumon.playground.data.errors import Refusal

if TYPE_CHECKING:
    import torch

Values = dict[str, Any]
RESERVED_NAMES = frozenset({"torch", "nn"})
#: Names a refusal lists ("There is no value named ..."); the rest are counted.
LISTED = 20


def _torch() -> Any:
    import torch

    return torch


def check_name(name: str) -> str:
    """A workspace name must be a Python identifier, so the shown code is real Python."""
    if not isinstance(name, str) or not name.isidentifier() or keyword.iskeyword(name):
        raise Refusal(tr("{name} is not a usable name: use letters, digits and _, such as x "
                         "or y2, not starting with a digit.", name=repr(name)))
    if name in RESERVED_NAMES:
        raise Refusal(tr("{name} would hide the module of that name in the shown code; "
                         "choose another name.", name=repr(name)))
    return name


def lookup(values: Values, name: str) -> Any:
    if name not in values:
        have = ", ".join(islice(values, LISTED)) or tr("none yet")
        if len(values) > LISTED:  # a loop can make 200,000 names: the refusal stays short
            rest = len(values) - LISTED
            have += ", " + ntr("… and {count} more name", "… and {count} more names", rest,
                               count=f"{rest:,}")
        raise Refusal(tr("There is no value named {name}. Names in the workspace: {have}.",
                         name=repr(name), have=have))
    return values[name]


def lookup_tensor(values: Values, name: str) -> torch.Tensor:
    value = lookup(values, name)
    if not isinstance(value, _torch().Tensor):
        raise Refusal(tr("{name} is a model, not a tensor.", name=repr(name)))
    return value


def check_dtype(dtype: str | None) -> torch.dtype | None:
    if dtype is None:
        return None
    key = act.dtype_key(dtype) if isinstance(dtype, str) else dtype
    if key not in act.DTYPES:
        raise Refusal(tr("Unknown dtype {dtype}; choose one of: {choices}.",
                         dtype=repr(dtype), choices=", ".join(act.DTYPES)))
    result: torch.dtype = getattr(_torch(), key)
    return result
