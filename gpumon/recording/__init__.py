"""Recordings: a snapshot stream in a file, with the window's marks (lines.py), indexed for
seeking (reader.py), played back through the Source protocol (source.py) and written from
the window (writer.py). Qt-free; above ``telemetry/`` and ``text/``, below the CLI and the
window."""
