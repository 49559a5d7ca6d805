"""Shared test setup. No Qt here: telemetry and playground tests run without it."""

import os

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

#: ini keys in pyproject.toml that belong to plugins a machine may lack (a GPU machine with
#: torch and NVML but no Qt has neither pytest-qt nor pytest-timeout), by plugin name.
_PLUGIN_INI_KEYS = {"pytest-qt": ("qt_api",), "timeout": ("timeout", "timeout_method")}


def pytest_addoption(parser: pytest.Parser, pluginmanager: pytest.PytestPluginManager) -> None:
    """Declare a missing plugin's ini keys, so they are ignored instead of stopping pytest
    ("Unknown config option", an error under filterwarnings=error) before any test runs."""
    for plugin, keys in _PLUGIN_INI_KEYS.items():
        if not pluginmanager.has_plugin(plugin):
            for key in keys:
                parser.addini(key, f"used by {plugin}, which is not installed here")
