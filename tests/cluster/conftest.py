"""Fixtures of the cluster tests: the fake NVML library and a running Prometheus cluster."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "telemetry"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from cluster_helpers import Cluster, prometheus_binary
from fakenvml import FakeNvmlUnavailable, build_fake_nvml


@pytest.fixture(scope="session")
def fake_nvml_library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    try:
        return build_fake_nvml(tmp_path_factory.mktemp("fakenvml"))
    except FakeNvmlUnavailable as err:
        pytest.skip(f"fake NVML library not available: {err}")


@pytest.fixture
def make_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[[], Cluster]]:
    """``make_cluster()`` -> a new Cluster in a fresh directory; all stopped afterwards."""
    made: list[Cluster] = []

    def make() -> Cluster:
        prometheus_binary()
        cluster = Cluster(tmp_path_factory.mktemp("cluster"))
        made.append(cluster)
        return cluster

    yield make
    for cluster in made:
        cluster.stop()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory, fake_nvml_library: Path
            ) -> Iterator[Cluster]:
    """Three machines scraped every SCRAPE_S: two simulated (2 and 3 GPUs), one on fake NVML
    (2 GPUs, one process)."""
    prometheus_binary()
    c = Cluster(tmp_path_factory.mktemp("cluster"))
    try:
        c.add_simulated("node-a", 2, seed=1)
        c.add_simulated("node-b", 3, seed=2)
        c.add_fake_nvml("node-fake", fake_nvml_library, 2)
        c.start_server()
        c.wait_scraped(7)
        yield c
    finally:
        c.stop()
