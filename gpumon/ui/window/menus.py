"""The menu bar (File, View, Help), the keyboard shortcuts, and the remembered settings.

``Menus`` is given the controllers its actions call (presentation, file actions) and the
views it reads (the GPU grid, the toolbar); it builds the menus with their shortcuts and
saves each change to ``settings`` (and the geometry at close). Every action has an
objectName (``actionZoomIn`` …) for tests.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, Qt, Slot
from PySide6.QtGui import QAction, QActionGroup, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractButton,
    QApplication,
    QComboBox,
    QMainWindow,
    QMenu,
    QWidget,
)

from gpumon.i18n import tr
from gpumon.telemetry.history.store import History
from gpumon.telemetry.model.types import Snapshot
from gpumon.ui.monitor.grid import GpuGrid
from gpumon.ui.monitor.panel_options import ActivityViews, MemoryStacks
from gpumon.ui.monitor.topology_view import TopologyWindows
from gpumon.ui.window.about import TorchFacts, show_about, show_shortcuts
from gpumon.ui.window.controls import Controls
from gpumon.ui.window.file_actions import FileActions
from gpumon.ui.window.language import LanguageMenu
from gpumon.ui.window.presentation import Presentation
from gpumon.ui.window.settings import Settings
from gpumon.untrusted import for_terminal

# Widgets that need the space bar themselves (text fields take it anyway, via Qt's
# shortcut override; buttons and combo boxes would lose it to the pause shortcut).
_SPACE_USERS = (QAbstractButton, QComboBox)


class Menus(QObject):
    """Holds the actions and the controllers behind them; one per window."""

    def __init__(self, window: QMainWindow, settings: Settings, *,
                 presentation: Presentation, files: FileActions, grid: GpuGrid,
                 controls: Controls, toggle_pause: Callable[[], None],
                 latest_snapshot: Callable[[], Snapshot | None], history: History,
                 torch_facts: Callable[[], TorchFacts] = lambda: (None, ()),
                 topology: TopologyWindows | None = None) -> None:
        """Menus of ``window``; call ``rebuild_gpu_menu`` when the GPU panels change."""
        super().__init__(window)
        self.window = window
        self.settings = settings
        self.actions: dict[str, QAction] = {}
        self.presentation = presentation
        self.files = files
        self._grid = grid
        self._controls = controls
        self._toggle_pause = toggle_pause
        self._latest_snapshot = latest_snapshot
        self._torch_facts = torch_facts  # the kernel's load answer and devices (About box)
        self.memory_stacks = MemoryStacks(
            grid, history, lambda: float(controls.window_combo.currentData()), window,
            on=settings.memory_by_process,
            remember=lambda on: setattr(settings, "memory_by_process", on))
        self.activity_views = ActivityViews(
            grid, history, window, latest=latest_snapshot, restyle=presentation.restyle_plots,
            on=settings.activity_view, remember=lambda on: setattr(settings, "activity_view", on))
        self._topology = topology
        bar = window.menuBar()
        self.file_menu = bar.addMenu(tr("&File"))  # launch.py adds Open cluster… to it
        self._build_file(self.file_menu)
        self.view_menu = bar.addMenu(tr("&View"))
        self._build_view(self.view_menu)
        self._build_help(bar.addMenu(tr("&Help")))
        if topology is not None:  # its window zooms with the same keys
            topology.shared_actions = self.zoom_actions()
        # Space pauses, but only while the focus is not on a widget that uses the space bar.
        self.space = QShortcut(QKeySequence(Qt.Key.Key_Space), window)
        self.space.setObjectName("spaceShortcut")
        self.space.setContext(Qt.ShortcutContext.WindowShortcut)
        self.space.activated.connect(self.toggle_pause)
        app = QApplication.instance()
        if isinstance(app, QApplication):
            app.focusChanged.connect(self._on_focus)
        controls.intervalChanged.connect(self._save_interval)
        controls.windowChanged.connect(self._save_window)
        window.installEventFilter(self)
        if settings.geometry is not None:
            window.restoreGeometry(settings.geometry)

    def zoom_actions(self) -> list[QAction]:
        """Zoom in, out and back: added to a window of its own (a process's, the topology)
        so that its keys work there too (they are the window's shortcuts, not global)."""
        return [self.actions[n] for n in ("actionZoomIn", "actionZoomOut", "actionZoomReset")]

    # -- building --------------------------------------------------------------------------
    def _action(self, menu: QMenu, name: str, text: str, slot: Callable[[], object],
                keys: tuple[str, ...] = (), *,
                checkable: bool = False) -> QAction:
        action = QAction(text, self.window)
        action.setObjectName(name)
        if keys:
            action.setShortcuts([QKeySequence(k) for k in keys])
            action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
        action.setCheckable(checkable)
        action.triggered.connect(lambda *_: slot())
        menu.addAction(action)
        self.window.addAction(action)  # shortcuts work with the menu bar hidden (full screen)
        self.actions[name] = action
        return action

    def _build_file(self, menu: QMenu) -> None:
        f = self.files
        self._action(menu, "actionCopySnapshot", tr("&Copy snapshot as text"), f.copy_snapshot,
                     ("Ctrl+Shift+C",))
        self._action(menu, "actionSaveGraph", tr("&Save graph…"), f.save_graph_dialog, ("Ctrl+S",))
        menu.addSeparator()
        rec = self._action(menu, "actionRecord", tr("&Record…"), f.toggle_recording,
                           ("Ctrl+R",), checkable=True)
        f.recordingChanged.connect(rec.setChecked)
        self._action(menu, "actionExportWindow", tr("&Export visible window to CSV…"),
                     f.export_window_dialog, ("Ctrl+E",))
        menu.addSeparator()
        quit_action = self._action(menu, "actionQuit", tr("&Quit"), self.window.close, ("Ctrl+Q",))
        quit_action.setMenuRole(QAction.MenuRole.QuitRole)

    def _build_view(self, menu: QMenu) -> None:
        p = self.presentation
        pause = self._action(menu, "actionPause", tr("&Pause / resume") + "\tSpace",
                             self.toggle_pause, checkable=True)
        self._controls.pauseToggled.connect(pause.setChecked)
        menu.addSeparator()
        self._action(menu, "actionZoomIn", tr("Zoom &in"), p.zoom_in,
                     ("Ctrl++", "Ctrl+="))
        self._action(menu, "actionZoomOut", tr("Zoom &out"), p.zoom_out,
                     ("Ctrl+-",))
        self._action(menu, "actionZoomReset", tr("&Reset zoom"), p.reset_zoom, ("Ctrl+0",))
        self._action(menu, "actionFullScreen", tr("&Full screen"), p.toggle_full_screen, ("F11",),
                     checkable=True)
        theme_menu = menu.addMenu(tr("&Theme"))
        group = QActionGroup(self)
        for name, label in (("system", tr("System")), ("light", tr("Light")),
                            ("dark", tr("Dark"))):
            a = self._action(theme_menu, f"actionTheme{name.title()}", label,
                             lambda n=name: p.set_theme(n), checkable=True)  # type: ignore[misc]
            a.setChecked(p.choice == name)
            group.addAction(a)
        for extra in (self.memory_stacks.action, self.activity_views.action,
                      *([self._topology.action] if self._topology is not None else [])):
            menu.addAction(extra)
            self.window.addAction(extra)
            self.actions[extra.objectName()] = extra
        self.gpu_menu = menu.addMenu(tr("&GPUs"))
        self.gpu_menu.setObjectName("gpuMenu")
        self.rebuild_gpu_menu()
        self.language = LanguageMenu(self.window, menu.addMenu(tr("&Language")), self.settings)

    def add_view_action(self, action: QAction) -> None:
        """An entry at the end of the View menu (the event log's dock)."""
        self.view_menu.addSeparator()
        self.view_menu.addAction(action)

    def _build_help(self, menu: QMenu) -> None:
        self._action(menu, "actionShortcuts", tr("&Keyboard shortcuts"),
                     lambda: show_shortcuts(self.window))
        about = self._action(menu, "actionAbout", tr("&About gpumon"),
                             lambda: show_about(self.window, self._latest_snapshot(),
                                                self._torch_facts()), ("F1",))
        about.setMenuRole(QAction.MenuRole.AboutRole)

    # -- GPUs submenu ------------------------------------------------------------------------
    @Slot()
    def rebuild_gpu_menu(self) -> None:
        """One checkable action per GPU; hidden GPUs are remembered by UUID."""
        self.gpu_menu.clear()
        hidden = self.settings.hidden_gpus
        panels = self._grid.panels
        for panel in panels:
            info = panel.info
            a = QAction(tr("GPU {index} · {name}", index=info.index, name=for_terminal(info.name)),
                        self.gpu_menu)
            a.setObjectName(f"actionShowGpu{info.index}")
            a.setCheckable(True)
            a.setChecked(info.uuid not in hidden)
            a.toggled.connect(lambda on, u=info.uuid: self.set_gpu_shown(u, on))
            self.gpu_menu.addAction(a)
        if not panels:
            self.gpu_menu.addAction(tr("No GPUs yet")).setEnabled(False)
        self._apply_hidden()
        self.memory_stacks.attach()
        self.activity_views.attach()

    def set_gpu_shown(self, uuid: str, shown: bool) -> None:
        hidden = self.settings.hidden_gpus
        hidden = hidden - {uuid} if shown else hidden | {uuid}
        self.settings.hidden_gpus = hidden
        self._apply_hidden()

    def _apply_hidden(self) -> None:
        hidden = self.settings.hidden_gpus
        grid = self._grid
        grid.set_hidden({p.index for p in grid.panels if p.info.uuid in hidden})

    # -- slots -------------------------------------------------------------------------------
    @Slot()
    def toggle_pause(self) -> None:
        self._toggle_pause()

    @Slot(object, object)
    def _on_focus(self, _old: QWidget | None, new: QWidget | None) -> None:
        self.space.setEnabled(not isinstance(new, _SPACE_USERS))

    @Slot(float)
    def _save_interval(self, value: float) -> None:
        self.settings.interval_s = value

    @Slot(int)
    def _save_window(self, value: int) -> None:
        self.settings.window_s = value

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if obj is self.window:
            if event.type() == QEvent.Type.Close:
                self.files.stop_recording()
                if not self.window.isFullScreen():
                    self.settings.geometry = self.window.saveGeometry()
                self.settings.sync()
            elif event.type() == QEvent.Type.WindowStateChange:
                fs = self.actions.get("actionFullScreen")
                if fs is not None:
                    fs.setChecked(self.window.isFullScreen())
        return False

