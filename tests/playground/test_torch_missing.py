"""Without a working torch the engine answers every action with a sentence, never raises."""

from __future__ import annotations

import subprocess
import sys
import textwrap

BLOCK_TORCH = 'import sys\nsys.modules["torch"] = None  # any "import torch" now fails\n'


def _run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", BLOCK_TORCH + textwrap.dedent(code)],
                          capture_output=True, text=True, timeout=120)


def test_engine_without_torch_returns_an_outcome_with_a_sentence() -> None:
    proc = _run("""
        from gpumon.playground.data import actions as act
        from gpumon.playground.kernel.engine import Engine
        e = Engine()
        o = e.run(act.CreateTensor("x", "[1, 2]"))
        assert not o.ok and o.error is not None
        print(o.error.message)
        print(o.error.explanation)
        print([d.name for d in e.devices()])
    """)
    assert proc.returncode == 0, proc.stderr
    message, explanation, devices = proc.stdout.splitlines()
    assert message.startswith("PyTorch could not be imported")
    assert "not installed" in explanation
    assert devices == "['cpu']"
    assert "Traceback" not in proc.stderr
