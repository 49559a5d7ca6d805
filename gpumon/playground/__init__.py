"""The PyTorch playground, split by the process its code runs in.

- :mod:`gpumon.playground.data`: the values and the wire format both sides share (actions,
  outcomes, errors, device options, values); plain data, no torch, no Qt.
- :mod:`gpumon.playground.kernel`: what runs inside the kernel process (the engine, the
  executors, torch's side of devices and memory); the only code that imports torch. The
  window imports none of it (tests/test_layout.py).
- :mod:`gpumon.playground.client`: the window's side of the kernel: start, requests, Stop.
- :mod:`gpumon.playground.lesson`: the lesson's steps, its glossary and its runner.
"""
