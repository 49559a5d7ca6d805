"""``python -m gpumon``.

``python -m`` puts the current folder first on ``sys.path``, so a ``random.py`` (or
``json.py``, ``socket.py``...) there stood in for the standard library's as soon as gpumon
imported it; the ``gpumon`` script has no such entry. It is taken off before anything else is
imported: ``os`` and ``sys`` are loaded before any folder of the user's is searched, and
gpumon's own modules are found through its package, wherever it was found.
"""

import os
import sys

if not getattr(sys.flags, "safe_path", False) and sys.path and sys.path[0] in ("", os.getcwd()):
    del sys.path[0]  # must happen before the imports below

from gpumon.cli.main import main

sys.exit(main())
