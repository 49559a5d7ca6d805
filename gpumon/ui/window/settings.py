"""What gpumon remembers between runs: interval, time window, theme, zoom, geometry, GPUs,
language.

``Settings`` is a thin typed layer over a ``QSettings`` (organisation "gpumon", application
"gpumon" in ``Settings.user()``). Tests pass a QSettings on an INI file in a temporary
folder; a window built without settings gets ``Settings.memory()``, which remembers nothing
on disk, so creating a window never touches the user's real settings by accident.

A file is looked at before QSettings reads it (``settings_file.py``): one it must not read is
moved aside, and ``notice`` says so. Every value read back is checked: one out of its range or
of another type is the default (``window_s=1e300`` reached a Qt call as an int and raised
OverflowError).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterable
from pathlib import Path

from PySide6.QtCore import QByteArray, QSettings, QStandardPaths

from gpumon.i18n import LANGUAGES
from gpumon.interval import SAMPLING
from gpumon.telemetry.history.store import WINDOW_CHOICES_S
from gpumon.ui.window import settings_file

ORGANISATION = "gpumon"
APPLICATION = "gpumon"
THEMES = ("system", "light", "dark")
DEFAULT_THEME = "system"  # light or dark as the desktop is (presentation.py)
MIN_ZOOM, MAX_ZOOM = 0.5, 3.0
MAX_GEOMETRY_BYTES = 4096
MAX_LIST = 1024  # hidden GPUs or columns: more are not gpumon's


class Settings:
    """Typed get/set of the remembered values; every setter writes through at once."""

    def __init__(self, store: QSettings | None = None, notice: str = "") -> None:
        self._store = store
        self._memory: dict[str, object] = {}
        self.notice = notice  # the settings file was unusable: what was done about it

    # -- constructors ----------------------------------------------------------------------
    @classmethod
    def user(cls) -> Settings:
        """The user's real settings (only ``launch.run()`` uses this). Where they are a file
        (Linux and other Unix systems: ``~/.config/gpumon/gpumon.conf``) it is checked first,
        and it alone is read: QSettings' fallbacks (``~/.config/gpumon.conf``,
        ``/etc/xdg/gpumon/gpumon.conf``) would be read unchecked, and gpumon never writes
        them."""
        if sys.platform in ("win32", "darwin"):  # the registry, a property list
            return cls(QSettings(ORGANISATION, APPLICATION))
        config = QStandardPaths.writableLocation(
            QStandardPaths.StandardLocation.GenericConfigLocation)
        return cls.ini(Path(config) / ORGANISATION / f"{APPLICATION}.conf")

    @classmethod
    def ini(cls, path: str | Path) -> Settings:
        """Settings kept in one INI file (the user's, or one in a test's tmp_path), moved
        aside first when QSettings must not read it."""
        why = settings_file.problem(Path(path))
        if why is not None:
            moved, notice = settings_file.move_aside(Path(path), why)
            if not moved:
                return cls(None, notice)
            return cls(QSettings(str(path), QSettings.Format.IniFormat), notice)
        return cls(QSettings(str(path), QSettings.Format.IniFormat))

    @classmethod
    def memory(cls) -> Settings:
        """Settings that live only as long as this object."""
        return cls(None)

    # -- raw access ------------------------------------------------------------------------
    def _get(self, key: str) -> object:
        if self._store is None:
            return self._memory.get(key)
        return self._store.value(key)

    def _set(self, key: str, value: object) -> None:
        if self._store is None:
            self._memory[key] = value
        else:
            self._store.setValue(key, value)

    def sync(self) -> None:
        """Write pending changes to disk (QSettings also does this on its own)."""
        if self._store is not None:
            self._store.sync()

    @property
    def file_name(self) -> str:
        return "" if self._store is None else self._store.fileName()

    # -- typed values ----------------------------------------------------------------------
    @property
    def interval_s(self) -> float | None:
        v = _float(self._get("sampling/interval_s"))
        return None if v is None else SAMPLING.clamp(v)

    @interval_s.setter
    def interval_s(self, value: float) -> None:
        self._set("sampling/interval_s", float(value))

    @property
    def window_s(self) -> int | None:
        """One of the window's choices (``WINDOW_CHOICES_S``), or None."""
        v = _float(self._get("sampling/window_s"))
        return int(v) if v is not None and v in WINDOW_CHOICES_S else None

    @window_s.setter
    def window_s(self, value: int) -> None:
        self._set("sampling/window_s", int(value))

    @property
    def theme(self) -> str:
        v = self._get("view/theme")
        return v if isinstance(v, str) and v in THEMES else DEFAULT_THEME

    @theme.setter
    def theme(self, value: str) -> None:
        if value not in THEMES:
            raise ValueError(f"unknown theme {value!r}; expected one of {THEMES}")
        self._set("view/theme", value)

    @property
    def zoom(self) -> float:
        v = _float(self._get("view/zoom"))
        return 1.0 if v is None else min(MAX_ZOOM, max(MIN_ZOOM, v))

    @zoom.setter
    def zoom(self, value: float) -> None:
        self._set("view/zoom", float(value))

    @property
    def geometry(self) -> QByteArray | None:
        v = self._get("window/geometry")
        # Qt's own geometry is some 66 bytes; a larger blob is not one
        return v if isinstance(v, QByteArray) and 0 < v.size() <= MAX_GEOMETRY_BYTES else None

    @geometry.setter
    def geometry(self, value: QByteArray) -> None:
        self._set("window/geometry", value)

    @property
    def language(self) -> str | None:
        """The language chosen in View > Language (None: follow the system's)."""
        v = self._get("view/language")
        return v if isinstance(v, str) and v in LANGUAGES else None

    @language.setter
    def language(self, value: str | None) -> None:
        if value is not None and value not in LANGUAGES:
            raise ValueError(f"unknown language {value!r}; expected one of {tuple(LANGUAGES)}")
        self._set("view/language", value or "")

    @property
    def playground_used(self) -> bool:
        """Whether a session showed the Playground or Lesson tab (its kernel then starts
        with the next window, warm for the first action)."""
        v = self._get("playground/used")
        return v is True or (isinstance(v, str) and v.lower() == "true")

    @playground_used.setter
    def playground_used(self, value: bool) -> None:
        self._set("playground/used", bool(value))

    @property
    def hidden_gpus(self) -> set[str]:
        """UUIDs of the GPUs whose panels the user hid."""
        v = self._get("view/hidden_gpus")
        return set(_strings(v) or ())

    @hidden_gpus.setter
    def hidden_gpus(self, uuids: Iterable[str]) -> None:
        self._set("view/hidden_gpus", sorted(uuids))

    @property
    def memory_by_process(self) -> bool:
        """Whether the GPU panels draw used memory as bands, one per process."""
        v = self._get("view/memory_by_process")
        return v is True or (isinstance(v, str) and v.lower() == "true")

    @memory_by_process.setter
    def memory_by_process(self, value: bool) -> None:
        self._set("view/memory_by_process", bool(value))

    @property
    def activity_view(self) -> bool:
        """Whether the GPU panels show their activity view (SM, tensor, DRAM)."""
        v = self._get("view/activity")
        return v is True or (isinstance(v, str) and v.lower() == "true")

    @activity_view.setter
    def activity_view(self, value: bool) -> None:
        self._set("view/activity", bool(value))

    @property
    def hidden_process_columns(self) -> list[str] | None:
        """English titles of the process table's hidden columns; None: never chosen."""
        return _strings(self._get("view/hidden_process_columns"))

    @hidden_process_columns.setter
    def hidden_process_columns(self, titles: Iterable[str]) -> None:
        self._set("view/hidden_process_columns", list(titles))

    @property
    def ssh_machines(self) -> list[str]:
        """The machines added with File ▸ Add machine…, as the user wrote them (checked
        again with ``ssh.target.parse_target`` wherever they are used)."""
        return _strings(self._get("remote/ssh_machines")) or []

    @ssh_machines.setter
    def ssh_machines(self, names: Iterable[str]) -> None:
        self._set("remote/ssh_machines", list(names))


def _strings(v: object) -> list[str] | None:
    """A list of strings as QSettings gives it back (a one-element list as a plain string);
    None where absent, for anything else, or for more than ``MAX_LIST``."""
    if isinstance(v, str):
        v = [v] if v else []
    if not isinstance(v, list | tuple) or len(v) > MAX_LIST:
        return None
    return [t for t in v if isinstance(t, str)]


def _float(v: object) -> float | None:
    """QSettings INI files give numbers back as strings; None for absent or nonsense."""
    if v is None:
        return None
    try:
        f = float(v)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None
