"""Without a working torch the engine answers every action with a sentence, never raises:
where torch is not installed, the sentence names the extra that brings it."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

BLOCK_TORCH = 'import sys\nsys.modules["torch"] = None  # any "import torch" now fails\n'


def _run(code: str, block: str = BLOCK_TORCH,
         env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", block + textwrap.dedent(code)],
                          capture_output=True, text=True, timeout=120, env=env)


ACTION = """
    from gpumon.playground.data import actions as act
    from gpumon.playground.kernel.engine import Engine
    e = Engine()
    o = e.run(act.CreateTensor("x", "[1, 2]"))
    assert not o.ok and o.error is not None
    print(o.error.message)
    print(o.error.explanation)
    print([d.name for d in e.devices()])
    print(e.ensure_loaded().torch_missing)
"""


def test_engine_without_torch_returns_an_outcome_with_a_sentence() -> None:
    proc = _run(ACTION)
    assert proc.returncode == 0, proc.stderr
    message, explanation, devices, missing = proc.stdout.splitlines()
    assert missing == "True"
    assert message == ("The playground needs PyTorch, which comes with the playground extra: "
                       "pip install 'gpumon[playground]'")
    assert "not installed" in explanation
    assert devices == "['cpu']"
    assert "Traceback" not in proc.stderr


def test_a_torch_that_fails_to_load_is_named_with_its_error(tmp_path: Path) -> None:
    """An installed torch that cannot load (a missing CUDA library) is not a missing extra."""
    (tmp_path / "torch").mkdir()
    (tmp_path / "torch" / "__init__.py").write_text(
        "raise OSError('libcudart.so.12: cannot open shared object file')\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        p for p in (str(tmp_path), os.environ.get("PYTHONPATH")) if p)}
    proc = _run(ACTION, block="", env=env)
    assert proc.returncode == 0, proc.stderr
    message, explanation, devices, missing = proc.stdout.splitlines()
    assert missing == "False"
    assert message == ("PyTorch could not be imported: OSError: libcudart.so.12: cannot open "
                       "shared object file")
    assert "failed to load" in explanation
    assert devices == "['cpu']"
