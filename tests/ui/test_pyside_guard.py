"""The PySide6 6.12 reference-count guard applies only where the bug bites."""

from gpumon.ui._pyside_guard import affected


def test_affected_only_6_12_on_python_before_3_12():
    assert affected((6, 12), (3, 11))
    assert not affected((6, 11), (3, 11))
    assert not affected((6, 12), (3, 12))
    assert not affected((6, 13), (3, 13))
