"""Shared test setup. No Qt here: telemetry and playground tests run without it."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
