"""What the playground's form fields mean, as plain functions (no Qt): a typed shape, and a
name with an on-the-fly move such as ``.cuda(1)``. ``ui/playground/forms.py`` uses them."""

from __future__ import annotations

import re

from gpumon.i18n import N_, tr
from gpumon.playground.data import actions as act

#: The modifier that leaves an operand where it is; a form shows ``tr(AS_IS)``.
AS_IS = N_("(as is)")


def parse_shape(text: str) -> tuple[int, ...]:
    """``"2, 3"``, ``"(2, 3)"``, ``"[4]"`` → a tuple of ints; ValueError with a sentence."""
    body = text.strip().strip("()[]").strip()
    if not body:
        return ()
    parts = [p.strip() for p in body.split(",") if p.strip()]
    for part in parts:
        if not re.fullmatch(r"-?\d+", part):
            at = text.find(part) + 1
            raise ValueError(tr("A shape is whole numbers separated by commas, such as 2, 3: "
                                "{part} at character {at} is not a whole number.",
                                part=repr(part), at=at))
    return tuple(int(p) for p in parts)


def ref_for(name: str, modifier: str) -> str | act.Ref:
    """The operand for a name and a modifier such as ``.cpu()``, ``.cuda(1)``, ``.to('meta')``;
    :data:`AS_IS`, in English or in the chosen language, leaves the name as it is."""
    if modifier in ("", AS_IS, tr(AS_IS)):
        return name
    if modifier == ".cpu()":
        return act.Ref(name, "cpu")
    m = re.fullmatch(r"\.cuda\((\d*)\)", modifier)
    if m:
        return act.Ref(name, "cuda", index=int(m.group(1)) if m.group(1) else None)
    m = re.fullmatch(r"\.to\('(.*)'\)", modifier)
    if m:
        return act.Ref(name, "to", device=m.group(1))
    return name
