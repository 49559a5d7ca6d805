"""Shared test setup. No Qt here: telemetry and playground tests run without it."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from collections.abc import Iterator  # noqa: E402

import pytest  # noqa: E402

from gpumon import i18n  # noqa: E402


@pytest.fixture(autouse=True)
def _english_unless_a_test_says_otherwise() -> Iterator[None]:
    """Every test starts in English, whatever the machine's locale, and a test that switches
    to another language (``main(["--lang", "zh_CN", ...])``) does not leak it to the next."""
    i18n.set_language(i18n.ENGLISH)
    yield
    i18n.set_language(i18n.ENGLISH)
