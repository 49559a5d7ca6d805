"""The forms' field texts as values, without Qt: shapes and on-the-fly moves."""

from __future__ import annotations

import pytest

from gpumon.playground.data import actions as act
from gpumon.playground.data.form_text import AS_IS, parse_shape, ref_for


def test_shapes() -> None:
    assert parse_shape("2, 3") == (2, 3) and parse_shape("(4,)") == (4,) and parse_shape("") == ()
    with pytest.raises(ValueError, match="'two' at character 1 is not a whole number"):
        parse_shape("two")
    with pytest.raises(ValueError, match="'3.5' at character 5"):
        parse_shape("(2, 3.5)")


def test_modifiers() -> None:
    assert ref_for("x", AS_IS) == "x"
    assert ref_for("x", ".cuda(1)") == act.Ref("x", "cuda", index=1)
    assert ref_for("x", ".to('meta')") == act.Ref("x", "to", device="meta")
