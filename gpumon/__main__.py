"""``python -m gpumon``."""

import sys

from gpumon.cli.main import main

sys.exit(main())
