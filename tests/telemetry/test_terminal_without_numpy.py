"""The terminal outputs (``--once`` as text, ``-q``, ``--json``, ``--csv``) and the exporter
load no numpy: a GPU machine may have torch, NVML and prometheus-client but no numpy (torch
does not require it), and the prepared GPU check (tests/gpu/check.py) compares these outputs
there. Only the window's History and graphs use numpy."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest


def _loads_numpy(code: str) -> bool:
    script = textwrap.dedent(code) + "\nimport sys\nprint('numpy' in sys.modules)\n"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1] == "True"


@pytest.mark.parametrize("args", [["--once"], ["--once", "-q"], ["--once", "--json"],
                                  ["--once", "--csv"]])
def test_once_loads_no_numpy(args: list[str]) -> None:
    assert not _loads_numpy(f"""
        import contextlib, io
        from gpumon.cli.main import main
        with contextlib.redirect_stdout(io.StringIO()):
            assert main(["--simulate", "2", *{args!r}]) == 0
        """)


def test_an_exporter_scrape_loads_no_numpy() -> None:
    assert not _loads_numpy("""
        import time
        from gpumon.telemetry.exporter.page import Pages
        from gpumon.telemetry.exporter.reader import GpuReader
        from gpumon.telemetry.sources.simulated import SimulatedSource
        pages = Pages("h")
        reader = GpuReader(lambda: SimulatedSource(n_gpus=2), pages.publish, 3600.0)
        reader.start()
        deadline = time.monotonic() + 60
        while pages.published < 2 and time.monotonic() < deadline:  # the first reading's
            time.sleep(0.01)
        assert reader.stop(5.0)
        assert b"DCGM_FI_DEV_FB_USED" in pages.current.body().data
        """)
