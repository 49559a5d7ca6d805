"""The playground page follows the theme: log, workspace table, forms and status line."""

from __future__ import annotations

from PySide6.QtGui import QPalette

from gpumon.playground.data import actions as act
from gpumon.ui.playground.style import DARK_TONES, LIGHT_TONES, device_color, on_background
from gpumon.ui.window.presentation import Presentation


def window_colour(widget) -> int:
    return widget.palette().color(QPalette.ColorRole.Window).lightness()


def test_page_follows_a_theme_switch_both_ways(qtbot, make_window) -> None:
    w = make_window()
    presentation = w.findChild(Presentation)
    presentation.set_theme("dark")
    panel = w.playground
    w.tabs.setCurrentWidget(panel)
    qtbot.waitUntil(lambda: bool(w.kernel_link.device_options), timeout=30000)
    panel.submit(act.CreateFilled("m", "ones", (3,), device="meta"))
    panel.submit(act.CreateFilled("g", "zeros", (2,), device="mps"))
    qtbot.waitUntil(lambda: panel.log.count() == 2 and not w.kernel_link.busy, timeout=20000)
    error, meta = panel.log.entries()
    assert error.tones is DARK_TONES and DARK_TONES.error in error.body.text()
    assert "mps is Apple" in error.body.text() and "not built with it" in error.body.text()
    assert panel.workspace_table.device_color(0) == on_background(device_color("meta"), True)
    assert window_colour(panel.forms) < 128

    presentation.set_theme("light")
    qtbot.waitUntil(lambda: window_colour(panel.forms) > 128, timeout=5000)
    assert error.tones is LIGHT_TONES and meta.tones is LIGHT_TONES
    assert LIGHT_TONES.error in error.body.text()
    assert panel.workspace_table.device_color(0) == device_color("meta")
    assert panel.status_label.palette().color(QPalette.ColorRole.WindowText).lightness() < 128

    presentation.set_theme("dark")
    qtbot.waitUntil(lambda: window_colour(panel.forms) < 128, timeout=5000)
    assert error.tones is DARK_TONES


def test_long_error_messages_are_cut_in_the_log_not_in_the_copy(qtbot, make_window) -> None:
    w = make_window()
    panel = w.playground
    w.tabs.setCurrentWidget(panel)
    qtbot.waitUntil(lambda: bool(w.kernel_link.device_options), timeout=30000)
    panel.submit(act.CreateModel("net", 3, 1, device="mps"))  # a long dispatcher message
    qtbot.waitUntil(lambda: panel.log.count() == 1, timeout=20000)
    entry = panel.log.entries()[0]
    message = entry.outcome.error.message
    assert message and message in entry.plain_text()  # torch's real message, whole in the copy


def test_a_long_message_is_cut_in_the_log_but_whole_in_the_copy(qtbot) -> None:
    from gpumon.playground.data.errors import ErrorInfo
    from gpumon.playground.data.outcome import Outcome
    from gpumon.ui.playground.log import OutcomeLog

    message = "\n".join(f"line {i} of what the dispatcher printed" for i in range(20))
    log = OutcomeLog()
    qtbot.addWidget(log)
    log.add(Outcome(act.CreateModel("net", 3, 1, device="mps"), "net = nn.Linear(3, 1)",
                    False, 0.0, 0.0, error=ErrorInfo("NotImplementedError", message, "why")))
    entry = log.entries()[0]
    shown = entry.body.text()
    assert "more lines" in shown and "line 19 of" not in shown and "line 0 of" in shown
    assert message in entry.plain_text()


def test_markers_follow_the_theme_old_and_new(qtbot, make_window) -> None:
    from gpumon.ui.widgets.theme import DARK, LIGHT

    w = make_window()
    qtbot.waitUntil(lambda: w.gpu_panel(0) is not None, timeout=5000)
    presentation = w.findChild(Presentation)
    panel = w.gpu_panel(0)
    cuda0 = device_color("cuda:0")
    dark0 = on_background(cuda0, True)
    assert dark0 != cuda0
    old = panel.add_marker(1.0, "x = x.cuda(0)", cuda0, dark_color=dark0)
    panel.add_memory_series("torch_allocated_bytes", "torch allocated", "#d62728")
    legend_labels = [label for _, label in panel.memory_plot.legend.items]

    def look(line):
        return (line.pen.color().name(), line.label.color.name(),
                line.label.fill.color().name(), line.label.fill.color().alpha())

    assert look(old)[:3] == (cuda0, cuda0, LIGHT.plot_bg)
    presentation.set_theme("dark")
    qtbot.waitUntil(lambda: window_colour(w) < 128, timeout=5000)
    assert look(old)[:3] == (dark0, dark0, DARK.plot_bg) and look(old)[3] < 255
    assert all(DARK.plot_fg in label.item.toHtml() for label in legend_labels)  # readable
    new = panel.add_marker(2.0, "y = x + 1", cuda0, dark_color=dark0)  # made while dark
    assert look(new)[:3] == (dark0, dark0, DARK.plot_bg)
    presentation.set_theme("light")
    qtbot.waitUntil(lambda: window_colour(w) > 128, timeout=5000)
    assert look(old)[:3] == look(new)[:3] == (cuda0, cuda0, LIGHT.plot_bg)
