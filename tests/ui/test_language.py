"""The window's language: the menus in Chinese, View ▸ Language saved, Qt's own texts
translated, and no literal text given to a widget anywhere in the window's modules."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QCoreApplication
from PySide6.QtWidgets import QApplication

from gpumon import i18n
from gpumon.telemetry.sources.simulated import SimulatedSource
from gpumon.ui.window.language import RESTART_NOTE, choose, install_qt_translations
from gpumon.ui.window.main_window import MainWindow
from gpumon.ui.window.settings import Settings

PACKAGE = Path(__file__).resolve().parents[2] / "gpumon"
# Every module of the window: each widget text goes through the catalogue.
TRANSLATED_MODULES = tuple(sorted(
    p.relative_to(PACKAGE).as_posix() for p in (PACKAGE / "ui").rglob("*.py")))
# Calls that put text on screen, and which argument is the text.
TEXT_CALLS = {"QAction": 0, "addMenu": 0, "addAction": 0, "setText": 0, "setToolTip": 0,
              "setWindowTitle": 0, "showMessage": 0, "setPlaceholderText": 0, "QLabel": 0,
              "QPushButton": 0, "setStatusTip": 0, "_action": 2, "QCheckBox": 0,
              "addTab": 1, "_page": 0}


@pytest.fixture
def english_after() -> Iterator[None]:
    yield
    i18n.set_language("en")


def _window(qtbot, settings: Settings) -> MainWindow:
    w = MainWindow(lambda: SimulatedSource(2, seed=1), 0.1, window_s=60, settings=settings)
    qtbot.addWidget(w)
    return w


def _menu_titles(w: MainWindow) -> list[str]:
    return [a.text() for a in w.menuBar().actions()]


def test_menus_follow_the_language_chosen_at_start(qtbot, tmp_path, english_after) -> None:
    i18n.set_language("zh_CN")
    w = _window(qtbot, Settings.ini(tmp_path / "s.ini"))
    assert _menu_titles(w)[:3] == ["文件(&F)", "视图(&V)", "帮助(&H)"]
    assert w.findChild(type(w.menus.actions["actionQuit"]), "actionQuit").text() == "退出(&Q)"
    # The shortcut is the same in every language.
    assert w.menus.actions["actionQuit"].shortcut().toString() == "Ctrl+Q"
    w.close()


def test_language_menu_saves_the_choice_and_says_so_in_that_language(
        qtbot, tmp_path, monkeypatch, english_after) -> None:
    monkeypatch.setenv("LANGUAGE", "en")
    settings = Settings.ini(tmp_path / "s.ini")
    w = _window(qtbot, settings)
    menu = w.menus.language
    assert [a.text() for a in menu.menu.actions()] == ["System language", "English", "简体中文"]
    assert menu.actions["system"].isChecked()
    said = menu.choose("zh_CN")
    assert said == "语言将在下次启动 gpumon 时生效。"
    assert w.statusBar().currentMessage() == said
    assert Settings.ini(tmp_path / "s.ini").language == "zh_CN"
    assert menu.actions["zh_CN"].isChecked()
    assert menu.choose("system") == RESTART_NOTE  # the system (here English) will speak
    assert Settings.ini(tmp_path / "s.ini").language is None
    w.close()


def test_start_language_option_then_saved_then_system(tmp_path, monkeypatch,
                                                      english_after) -> None:
    settings = Settings.ini(tmp_path / "s.ini")
    monkeypatch.setenv("LANG", "zh_CN.UTF-8")
    for name in ("LANGUAGE", "LC_ALL", "LC_MESSAGES"):
        monkeypatch.delenv(name, raising=False)
    assert choose(settings, None) == "zh_CN"  # the system's
    settings.language = "en"
    assert choose(settings, None) == "en"  # the saved choice wins over the system
    assert choose(settings, "zh_CN") == "zh_CN"  # --lang wins over both
    assert i18n.language() == "zh_CN"


def test_qt_own_dialog_texts_are_translated_too(qapp: QApplication) -> None:
    before = QCoreApplication.translate("QPlatformTheme", "Cancel")
    translators_before = qapp.findChildren(object)
    assert install_qt_translations(qapp, "zh_CN")
    try:
        assert QCoreApplication.translate("QPlatformTheme", "Cancel") == "取消"
    finally:
        from PySide6.QtCore import QTranslator

        for t in qapp.findChildren(QTranslator):
            if t not in translators_before:
                qapp.removeTranslator(t)
                t.deleteLater()
    assert QCoreApplication.translate("QPlatformTheme", "Cancel") == before
    assert not install_qt_translations(qapp, "en")


def _literal_texts(path: Path) -> list[str]:
    """Places where a string literal (not a tr() call) is given as a widget's text."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        index = TEXT_CALLS.get(name or "")
        if index is None or len(node.args) <= index:
            continue
        arg = node.args[index]
        if isinstance(arg, ast.BinOp):  # tr("&Pause") + "\tSpace": the left part is checked
            arg = arg.left
        parts = arg.values if isinstance(arg, ast.JoinedStr) else [arg]
        words = "".join(p.value for p in parts
                        if isinstance(p, ast.Constant) and isinstance(p.value, str))
        if re.search("[A-Za-z]", words):  # "…", "● ", "" and units-free symbols are fine
            found.append(f"{path.name}:{node.lineno}")
    return found


def test_translated_modules_give_widgets_no_literal_text() -> None:
    assert len(TRANSLATED_MODULES) > 40 and "ui/playground/forms.py" in TRANSLATED_MODULES
    offenders = [hit for rel in TRANSLATED_MODULES for hit in _literal_texts(PACKAGE / rel)]
    assert not offenders


def test_the_scan_finds_a_literal_text(tmp_path: Path) -> None:
    """The scan itself can fail: a module with setText("Run") is caught."""
    sample = tmp_path / "sample.py"
    sample.write_text('label.setText("Run")\nbutton.setText(tr("Run"))\nx.setText("…")\n'
                      'y.setToolTip(f"GPU {i}")\n', encoding="utf-8")
    assert _literal_texts(sample) == ["sample.py:1", "sample.py:4"]
