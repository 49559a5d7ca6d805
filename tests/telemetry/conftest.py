"""Fixtures for the telemetry tests: the fake NVML library, built once per session."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fakenvml import FakeNvml, FakeNvmlUnavailable, build_fake_nvml, use_fake_nvml


def _build(tmp_path_factory: pytest.TempPathFactory, old_driver: bool) -> Path:
    try:
        return build_fake_nvml(tmp_path_factory.mktemp("fakenvml"), old_driver=old_driver)
    except FakeNvmlUnavailable as err:
        pytest.skip(f"fake NVML library not available: {err}")


@pytest.fixture(scope="session")
def fake_nvml_lib(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Path of the compiled fake NVML (current driver API)."""
    return _build(tmp_path_factory, old_driver=False)


@pytest.fixture(scope="session")
def fake_nvml_old_lib(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Path of the fake NVML built without the newer entry points."""
    return _build(tmp_path_factory, old_driver=True)


@pytest.fixture
def fake_nvml(fake_nvml_lib: Path) -> Iterator[FakeNvml]:
    """pynvml talks to the fake for this test; one GPU by default."""
    with use_fake_nvml(fake_nvml_lib) as fake:
        yield fake


@pytest.fixture
def fake_nvml_old(fake_nvml_old_lib: Path) -> Iterator[FakeNvml]:
    with use_fake_nvml(fake_nvml_old_lib) as fake:
        yield fake
