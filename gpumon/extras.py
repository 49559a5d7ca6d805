"""Which extra brings a missing package, said in one sentence.

A plain ``pip install gpumon`` serves the terminal outputs (``--once``, ``-l``) and the
exporter. The window, the playground and the exporter's web config come with extras
(pyproject.toml): ``gui`` (PySide6, pyqtgraph, numpy), ``playground`` (torch, and the window it
lives in) and ``exporter`` (bcrypt, PyYAML). Where one of them is missing, the part that needs
it says which extra to install instead of showing a traceback. Qt-free, torch-free.
"""

from __future__ import annotations

import importlib.util

from gpumon.i18n import tr

#: The window's packages, by the name they are imported as -> the name pip installs.
GUI_PACKAGES = {"PySide6": "PySide6", "shiboken6": "PySide6", "pyqtgraph": "pyqtgraph",
                "numpy": "numpy"}
#: ``--web.config.file``'s packages, the same way.
EXPORTER_PACKAGES = {"bcrypt": "bcrypt", "yaml": "PyYAML"}


def missing_package(err: ImportError, packages: dict[str, str]) -> str | None:
    """The package of ``packages`` (its pip name) whose absence raised ``err``, else None.

    Only a module that is not installed counts (ModuleNotFoundError): an installed one that
    fails to load (a missing system library) is another fault, with its own message."""
    if not isinstance(err, ModuleNotFoundError):
        return None
    return packages.get((err.name or "").partition(".")[0])


def window_needs(err: ImportError) -> str | None:
    """The sentence for a window that cannot open because a package of the gui extra is
    missing; None for any other import error."""
    package = missing_package(err, GUI_PACKAGES)
    return None if package is None else _window_sentence(package)


def _window_sentence(package: str) -> str:
    return tr("the window needs {package}, which comes with the gui extra: "
              "pip install 'gpumon[gui]'", package=package)


def gui_missing() -> str | None:
    """The sentence for the window when a package of the gui extra is not installed, else
    None. Looked up without importing anything, so it can be said before any other check."""
    for module, package in GUI_PACKAGES.items():
        if importlib.util.find_spec(module) is None:
            return _window_sentence(package)
    return None


def torch_missing(err: BaseException) -> bool:
    """True when ``err`` says that torch is not installed (not that it failed to load)."""
    return isinstance(err, ModuleNotFoundError) and err.name == "torch"


def playground_needs_torch() -> str:
    """The playground's sentence (the Playground and Lesson tabs) where torch is missing."""
    return tr("The playground needs PyTorch, which comes with the playground extra: "
              "pip install 'gpumon[playground]'")


def lesson_needs_torch() -> str:
    """``gpumon lesson``'s sentence where torch is missing."""
    return tr("the lesson needs PyTorch, which comes with the playground extra: "
              "pip install 'gpumon[playground]'")


def web_config_needs(err: ImportError) -> str | None:
    """``--web.config.file``'s sentence where bcrypt or PyYAML is missing, else None."""
    package = missing_package(err, EXPORTER_PACKAGES)
    if package is None:
        return None
    return tr("--web.config.file needs {package}, which comes with the exporter extra: "
              "pip install 'gpumon[exporter]'", package=package)
