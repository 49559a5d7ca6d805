"""The window's language: chosen once at start (``--lang``, else View ▸ Language as saved,
else the system's), Qt's own dialogs translated to match, and the View ▸ Language menu.

A new choice is saved and applies at the next start: the window's texts are built once, and
rebuilding them in place would restart the playground's kernel and lose its workspace.
"""

from __future__ import annotations

from PySide6.QtCore import QLibraryInfo, QLocale, QObject, QTranslator
from PySide6.QtGui import QAction, QActionGroup
from PySide6.QtWidgets import QApplication, QMainWindow, QMenu

from gpumon import i18n
from gpumon.i18n import N_, tr
from gpumon.ui.window.settings import Settings

SYSTEM = "system"
RESTART_NOTE = N_("The language changes when gpumon next starts.")


def choose(settings: Settings, requested: str | None) -> str:
    """Speak ``requested`` (``--lang``), else the saved choice, else the system's locale
    (``LANG`` and friends, then Qt's view of the system). Returns the language chosen."""
    code = requested or settings.language
    if code is None:
        env = i18n.detect()
        if env == i18n.ENGLISH and not _env_says_english():
            env = i18n.normalize(QLocale.system().name()) or i18n.ENGLISH
        code = env
    return i18n.set_language(code)


def _env_says_english() -> bool:
    import os

    return any(os.environ.get(name) for name in i18n.ENV_ORDER)


def install_qt_translations(app: QApplication, language: str) -> bool:
    """Translate Qt's own texts (the colour and file dialogs' buttons) where PySide6 ships
    them for ``language``. True when a catalogue was installed."""
    if language == i18n.ENGLISH:
        return False
    folder = QLibraryInfo.path(QLibraryInfo.LibraryPath.TranslationsPath)
    installed = False
    for name in ("qtbase", "qt"):
        translator = QTranslator(app)
        if translator.load(f"{name}_{language}", folder):
            app.installTranslator(translator)
            installed = True
    return installed


class LanguageMenu(QObject):
    """View ▸ Language: System, English, 简体中文 (each named in itself); the choice is saved
    and the status bar says, in the chosen language, that it applies at the next start."""

    def __init__(self, window: QMainWindow, menu: QMenu, settings: Settings) -> None:
        super().__init__(window)
        self.window, self.settings = window, settings
        self.menu = menu
        self.menu.setObjectName("languageMenu")
        group = QActionGroup(self)
        self.actions: dict[str, QAction] = {}
        saved = settings.language or SYSTEM
        choices = [(SYSTEM, tr("System language"))] + list(i18n.LANGUAGES.items())
        for code, label in choices:
            action = QAction(label, menu)
            action.setObjectName(f"actionLanguage_{code}")
            action.setCheckable(True)
            action.setChecked(code == saved)
            action.triggered.connect(lambda _=False, c=code: self.choose(c))
            group.addAction(action)
            menu.addAction(action)
            self.actions[code] = action

    def choose(self, code: str) -> str:
        """Save ``code`` (or follow the system) and say when it applies; returns the sentence."""
        self.settings.language = None if code == SYSTEM else code
        self.settings.sync()
        target = i18n.detect() if code == SYSTEM else code
        words = i18n.load(target).gettext(RESTART_NOTE)
        bar = self.window.statusBar()
        bar.showMessage(words, 10_000)
        self.actions[code].setChecked(True)
        return words
