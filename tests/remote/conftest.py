"""Fixtures of the remote tests: the fake NVML library, and a lab of machines behind a real
sshd on 127.0.0.1 (``sshd.py``)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "telemetry"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from fakenvml import FakeNvmlUnavailable, build_fake_nvml
from sshd import Lab, need_openssh

# Each machine's scenario (FAKENVML_* variables, sent with SetEnv): exact, known values.
MACHINES = {"lab1": {"FAKENVML_GPUS": "2"}, "lab2": {"FAKENVML_GPUS": "3"}}


@pytest.fixture(scope="session")
def fake_nvml_library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    try:
        return build_fake_nvml(tmp_path_factory.mktemp("fakenvml"))
    except FakeNvmlUnavailable as err:
        pytest.skip(f"fake NVML library not available: {err}")


@pytest.fixture
def lab(tmp_path: Path, fake_nvml_library: Path) -> Iterator[Lab]:
    """A running sshd with lab1 (2 fake GPUs) and lab2 (3), stopped afterwards."""
    need_openssh()
    made = Lab(tmp_path / "lab", fake_nvml_library, dict(MACHINES)).start()
    try:
        yield made
    finally:
        made.stop()


@pytest.fixture(scope="module")
def module_lab(tmp_path_factory: pytest.TempPathFactory,
               fake_nvml_library: Path) -> Iterator[Lab]:
    """``lab``, one for a whole module: for a module whose tests share what runs behind it (a
    remote kernel kept from test to test), and change nothing of the lab itself."""
    need_openssh()
    made = Lab(tmp_path_factory.mktemp("lab"), fake_nvml_library, dict(MACHINES)).start()
    try:
        yield made
    finally:
        made.stop()
