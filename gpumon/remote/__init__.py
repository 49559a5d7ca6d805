"""Other machines' GPUs read over SSH: one machine's snapshot stream (feed.py), as a Source
(source.py), and many machines as one overview (fleet.py). Qt-free; above ``ssh/``,
``telemetry/`` and ``text/``, below the CLI and the window."""
