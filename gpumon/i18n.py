"""One translation function for every layer: the window, the CLI and the lesson (no Qt here).

Every user-facing sentence goes through :func:`tr` (or :func:`ntr` for plurals). The
catalogues are GNU gettext ``.po`` files in ``gpumon/resources/locale/<lang>/LC_MESSAGES``;
their ``.mo``, which :mod:`gettext` reads, is compiled from the ``.po`` by Babel
(``python tools/catalogue.py`` in a checkout) and committed beside it (a test checks it is
current).

Placeholders are ``str.format`` names, filled *after* translation so that a translator may
move them::

    tr("GPU {index} is lost", index=2)

What stays English by design: torch's and NVML's own messages (a learner searches for them),
code, identifiers, units and nvidia-smi's column names.

The language is chosen once at start: ``--lang`` on the command line, else the window's saved
choice, else the system locale (``LANGUAGE``, ``LC_ALL``, ``LC_MESSAGES``, ``LANG``, in
gettext's order). Changing it in the window applies at the next start.
"""

from __future__ import annotations

import gettext
import io
import os
import threading
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any

DOMAIN = "gpumon"
ENGLISH = "en"
CHINESE = "zh_CN"
#: The languages gpumon speaks, each named in itself (as a language menu shows them).
LANGUAGES: dict[str, str] = {ENGLISH: "English", CHINESE: "简体中文"}
ENV_ORDER = ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG")

_lock = threading.Lock()
_language = ENGLISH
_translations: gettext.NullTranslations = gettext.NullTranslations()


def normalize(code: str | None) -> str | None:
    """``zh_CN.UTF-8``, ``zh-Hans``, ``zh_SG``, ``zh`` → ``zh_CN``; ``en_GB`` → ``en``;
    ``C``/``POSIX`` → ``en``; anything gpumon does not speak → None."""
    if not code:
        return None
    base = code.split(".")[0].split("@")[0].replace("-", "_").strip()
    lang, _, region = base.partition("_")
    lang = lang.lower()
    if lang in ("c", "posix", "en"):
        return ENGLISH
    if lang == "zh":
        # Traditional Chinese (TW, HK, MO, Hant) is a different script: not offered as zh_CN.
        if region.upper() in ("TW", "HK", "MO") or region.lower() == "hant":
            return None
        return CHINESE
    return None


def detect(env: Mapping[str, str] | None = None) -> str:
    """The language from the environment, as gettext reads it; English where it is unset or
    one gpumon does not speak. ``LANGUAGE`` may list several (``zh_CN:en``): the first
    spoken one wins."""
    env = os.environ if env is None else env
    for name in ENV_ORDER:
        value = env.get(name, "")
        if not value:
            continue
        for part in value.split(":") if name == "LANGUAGE" else [value]:
            found = normalize(part)
            if found is not None:
                return found
        if name != "LANGUAGE":  # LC_ALL / LC_MESSAGES / LANG: the first one set decides
            return ENGLISH
    return ENGLISH


def catalogue_path(language: str) -> Any:
    """The ``.mo`` of ``language``: in the source tree when gpumon runs from a checkout
    (``PYTHONPATH=.``), else inside the installed package (``gpumon.resources``)."""
    tail = ("locale", language, "LC_MESSAGES")
    source = Path(__file__).resolve().parent.parent / "resources"
    folder: Any
    # A checkout has pyproject.toml beside resources/; site-packages has neither, even where
    # some other package installed a folder called "resources" there.
    if (source.parent / "pyproject.toml").is_file() and (source / "locale").is_dir():
        folder = source.joinpath(*tail)
    else:
        try:
            folder = resources.files("gpumon.resources")
            for part in tail:  # one name a call: Python 3.10's Traversable takes no more
                folder = folder.joinpath(part)
        except ModuleNotFoundError:
            folder = source.joinpath(*tail)
    return folder / f"{DOMAIN}.mo"


def load(language: str) -> gettext.NullTranslations:
    """The translations of ``language``, from its ``.mo``; English (no translation) for ``en``
    or where the ``.mo`` is missing."""
    if language == ENGLISH:
        return gettext.NullTranslations()
    mo = catalogue_path(language)
    if not mo.is_file():
        return gettext.NullTranslations()
    return gettext.GNUTranslations(io.BytesIO(mo.read_bytes()))


def set_language(language: str | None) -> str:
    """Speak ``language`` from now on (normalised; English when it is not spoken). Returns
    the language chosen."""
    global _language, _translations
    chosen = normalize(language) or ENGLISH
    translations = load(chosen)
    with _lock:
        _language, _translations = chosen, translations
    return chosen


def language() -> str:
    """The language in use now."""
    return _language


def tr(message: str, /, **fields: object) -> str:
    """``message`` in the chosen language, with its ``{name}`` placeholders filled."""
    text = _translations.gettext(message)
    return text.format(**fields) if fields else text


def ntr(singular: str, plural: str, n: int, /, **fields: object) -> str:
    """The singular or plural of a message for ``n`` (``{n}`` is filled too)."""
    text = _translations.ngettext(singular, plural, n)
    return text.format(n=n, **fields)


#: Sentence ends after which Chinese puts no space before the next sentence.
_FULL_WIDTH_ENDS = ("。", "！", "？", "；", "：", "）", "」", "』")


def sentences(*parts: str | None) -> str:
    """Sentences joined as the language writes them: a space after English ones, none after
    a full-width Chinese full stop ("已丢失。请检查…", not "已丢失。 请检查…"). Empty parts are
    left out."""
    text = ""
    for part in parts:
        if not part:
            continue
        if text and not text.endswith(_FULL_WIDTH_ENDS):
            text += " "
        text += part
    return text


def N_(message: str) -> str:
    """Marks a message for the catalogue without translating it yet (module constants that
    are translated where they are shown, with :func:`tr`)."""
    return message
