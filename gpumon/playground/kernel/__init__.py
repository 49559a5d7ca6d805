"""Everything that runs inside the kernel process (``python -m gpumon.playground.kernel.main``).

Importing this package imports no torch; its modules import torch when they run an action.
The window never imports a module of this package.
"""
