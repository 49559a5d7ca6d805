"""The header's badge for where the Playground's code runs (issue 50): shown only for a
kernel on another machine, the host escaped and cut as any outside text is."""

from __future__ import annotations

from gpumon.ui.monitor.header import CODE_HOST_CHARS, HeaderBar


def test_the_badge_names_the_host_only_when_code_runs_elsewhere(qtbot) -> None:
    header = HeaderBar()
    qtbot.addWidget(header)
    header.show()
    assert not header.code_badge.isVisible()  # a local kernel: nothing to say
    header.show_code_host("lab1")
    assert header.code_badge.isVisible() and header.code_badge.text() == "Code runs on lab1"
    header.show_code_host(None)
    assert not header.code_badge.isVisible()


def test_a_long_or_hostile_host_is_escaped_and_cut(qtbot) -> None:
    header = HeaderBar()
    qtbot.addWidget(header)
    header.show_code_host("\x1b[31m" + "h" * 200)
    text = header.code_badge.text()
    assert "\x1b" not in text and "\\x1b" in text
    assert text.endswith("…") and len(text) == len("Code runs on ") + CODE_HOST_CHARS
    assert "h" * 150 in header.code_badge.toolTip()  # the whole name on hovering
