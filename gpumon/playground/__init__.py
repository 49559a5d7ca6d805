"""The PyTorch playground engine, Qt-free. Importing this package never imports torch.

Use :class:`gpumon.playground.engine.Engine` with actions from
:mod:`gpumon.playground.actions`; torch is imported on the first action.
"""
