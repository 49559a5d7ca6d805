"""The window's frame: the main window that wires the parts, menus, presentation, file
actions and exports, settings, the sampling worker and the launch."""
