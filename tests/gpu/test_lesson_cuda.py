"""``gpumon lesson`` on a real GPU, held against what its steps say (gpucheck/lesson_claims.py):
the three memory numbers and what del and empty_cache() do to them, the products returning
before their work is done, .item() at every step the slower, one GPU running both loops of
the two-GPU exercise, and no heading that says what a GPU "would" show. Skipped, with the
reason, where there is no CUDA GPU. A passing run's transcript can be kept as the reference
(tests/gpu/lesson/README.md)."""

from __future__ import annotations

import subprocess
import sys

import pytest
import torch

from tests.gpu.gpucheck.lesson_claims import claim_problems, cuda_devices
from tests.gpu.gpucheck.runs import lesson_problems

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU and CUDA torch"),
]


def test_the_lesson_on_this_gpu_holds_what_its_steps_say() -> None:
    done = subprocess.run([sys.executable, "-m", "gpumon", "--lang", "en", "lesson"],
                          capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr
    gpus = cuda_devices(done.stdout)
    assert gpus == torch.cuda.device_count()
    assert lesson_problems(done.stdout, gpus) == []
    assert claim_problems(done.stdout, gpus, timed=True) == []
