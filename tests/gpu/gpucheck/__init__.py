"""The parts of ``tests/gpu/check.py``, the one prepared check of gpumon on a real GPU.

Qt-free and torch-free (torch runs only in child processes), so the check runs on a GPU
machine that has torch and NVML but no Qt, and its logic has plain unit tests
(``tests/gpu/test_gpucheck_*.py``).
"""
