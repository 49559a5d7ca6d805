"""Identity against a real Prometheus: a GPU is its UUID, a machine its host label, each scrape
target its own liveness. Exporters: ``gpumon exporter`` (simulated and on the fake NVML
library) and static exporters serving real dcgm-exporter pages (tests/cluster/dcgm_pages,
each file says where in dcgm-exporter's repository it comes from)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from cluster_helpers import DCGM_PAGES, ROOT, Cluster, wait_for

from gpumon.telemetry.cluster.prometheus import PrometheusSource
from gpumon.telemetry.model.types import HostView

pytestmark = pytest.mark.slow  # real servers and subprocesses: seconds each (docs/development.md)
MIB = 2**20


def once(url: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gpumon", "--prometheus", url, "--once"],
                          capture_output=True, text=True, timeout=60, cwd=ROOT, check=False)


def by_gpu(cluster: Cluster, metric: str, instance: str) -> dict[int, tuple[str, float]]:
    """gpu index -> (UUID, value) of ``metric`` as the server holds it for one target."""
    return {int(s["metric"]["gpu"]): (s["metric"]["UUID"], float(s["value"][1]))  # type: ignore
            for s in cluster.query(f'{metric}{{instance="{instance}"}}')}


@pytest.fixture
def vm_cluster(make_cluster: Callable[[], Cluster], fake_nvml_library: Path) -> Cluster:
    """Two exporters that both say ``Hostname="vm"``: the fake NVML one (3 GPUs) and a
    simulated one (4 GPUs)."""
    c = make_cluster()
    c.add_fake_nvml("vm", fake_nvml_library, 3)
    nvml = c.exporters.pop("vm")
    c.add_simulated("vm", 4, seed=3)
    c.exporters = {"nvml": nvml, "sim": c.exporters["vm"]}
    c.start_server()
    c.wait_scraped(7)
    return c


def _check_against_server(c: Cluster, host: HostView, instance: str) -> None:
    """Every GPU of ``host``: the UUID and model the server has for that target and GPU
    index, and numbers the server held for that very GPU (never another's)."""
    temps = by_gpu(c, "DCGM_FI_DEV_GPU_TEMP", instance)
    model = {int(s["metric"]["gpu"]): s["metric"]["modelName"]  # type: ignore[index]
             for s in c.query(f'DCGM_FI_DEV_GPU_TEMP{{instance="{instance}"}}')}
    assert [g.index for g in host.gpus] == sorted(temps)
    for info, sample in zip(host.gpus, host.samples, strict=True):
        assert info.uuid == temps[info.index][0]
        assert info.name == model[info.index]
        history = c.query(f'DCGM_FI_DEV_GPU_TEMP{{UUID="{info.uuid}"}}[30s]')
        assert len(history) == 1  # one target reports this UUID
        seen = {float(v) for _, v in history[0]["values"]}  # type: ignore[index,misc]
        assert sample.temperature_c in seen, (info, sample.temperature_c, seen)


def test_same_host_name_and_indexes_are_two_machines_never_mixed(vm_cluster: Cluster) -> None:
    c = vm_cluster
    nvml, sim = c.instance("nvml"), c.instance("sim")
    snap = PrometheusSource(c.url).sample()
    assert [(h.host, len(h.gpus)) for h in snap.hosts] == sorted(
        [(f"vm ({nvml})", 3), (f"vm ({sim})", 4)])
    views = {h.host: h for h in snap.hosts}
    _check_against_server(c, views[f"vm ({nvml})"], nvml)
    _check_against_server(c, views[f"vm ({sim})"], sim)
    assert not any(g.simulated for g in views[f"vm ({nvml})"].gpus)
    assert all(g.simulated for g in views[f"vm ({sim})"].gpus)
    out = once(c.url)
    assert out.returncode == 0, out.stderr
    assert f"vm ({nvml}): 3 GPUs" in out.stdout and f"vm ({sim}) (simulated): 4 GPUs" in out.stdout


def test_one_of_two_exporters_of_a_host_name_dies_only_its_gpus_are_lost(
        vm_cluster: Cluster) -> None:
    c = vm_cluster
    nvml, sim = c.instance("nvml"), c.instance("sim")
    source = PrometheusSource(c.url)
    assert all(h.up for h in source.sample().hosts)
    c.kill_exporter("nvml")
    def dead_seen() -> bool:
        return not {h.host: h for h in source.sample().hosts}[f"vm ({nvml})"].up
    wait_for(dead_seen, 15, "the dead exporter to be seen down")
    snap = source.sample()
    views = {h.host: h for h in snap.hosts}
    dead, alive = views[f"vm ({nvml})"], views[f"vm ({sim})"]
    assert not dead.up and all(s.lost for s in dead.samples) and len(dead.samples) == 3
    assert dead.message.startswith(f"Prometheus cannot scrape vm ({nvml}) ({nvml}): ")
    # Prometheus's own reason: refused, or reset when the kill cut a scrape in progress
    assert "refused" in dead.message or "reset by peer" in dead.message, dead.message
    assert alive.up and len(alive.samples) == 4 and not any(s.lost for s in alive.samples)
    out = once(c.url)
    assert out.returncode == 0, out.stderr
    assert f"vm ({nvml}): 3 GPUs, down: Prometheus cannot scrape" in out.stdout
    assert out.stdout.count("LOST") == 3


def test_a_dcgm_exporter_page_beside_gpumon_every_field_as_the_page_says(
        make_cluster: Callable[[], Cluster]) -> None:
    """gpumon's exporter and dcgm-exporter's real page, both ``Hostname="node-a"``, both with
    a GPU 0 (different UUIDs): two machines, and the dcgm GPU's every field is the page's."""
    c = make_cluster()
    c.add_simulated("node-a", 2, seed=1)
    c.add_static("dcgm", DCGM_PAGES / "b200_node_a.prom")
    c.start_server()
    c.wait_scraped(3)
    dcgm, gpumon = c.instance("dcgm"), c.instance("node-a")
    snap = PrometheusSource(c.url).sample()
    views = {h.host: h for h in snap.hosts}
    assert set(views) == {f"node-a ({dcgm})", f"node-a ({gpumon})"}
    b200 = views[f"node-a ({dcgm})"]
    (info,), (s,) = b200.gpus, b200.samples
    assert (info.index, info.name, info.uuid, info.simulated) == (0, "NVIDIA B200", "GPU-0",
                                                                  False)
    assert info.mem_total_bytes == (6604 + 1024) * MIB  # FB_FREE + FB_USED
    assert (s.sm_clock_mhz, s.mem_clock_mhz, s.temperature_c, s.power_w) == (210, 405, 41, 77)
    assert (s.gpu_util_pct, s.mem_util_pct, s.encoder_util_pct, s.decoder_util_pct) == (
        0, 37, 0, 0)
    assert (s.mem_used_bytes, s.mem_free_bytes) == (1024 * MIB, 6604 * MIB)
    assert s.power_limit_w is None and s.fan_pct is None and s.pstate is None  # not on the page
    assert [g.name for g in views[f"node-a ({gpumon})"].gpus] != ["NVIDIA B200"] * 2
    out = once(c.url)
    assert out.returncode == 0, out.stderr
    line = next(x for x in out.stdout.splitlines() if "NVIDIA B200" in x)
    assert line.split() == ["GPU", "0", "NVIDIA", "B200", "util", "0%", "mem", "1.00", "GiB",
                            "/", "7.45", "GiB", "41°C", "77", "W"]


def test_one_uuid_behind_two_targets_and_both_host_labels(
        make_cluster: Callable[[], Cluster]) -> None:
    """dcgm-exporter before 4.x (``Hostname``, with the driver label) and from 4.x
    (``hostname``) scraping one GPU: one machine, one GPU, the other target named."""
    c = make_cluster()
    c.add_static("new", DCGM_PAGES / "b200_lowercase_hostname.prom")
    c.add_static("old", DCGM_PAGES / "b200_driver_version.prom")
    c.start_server()
    c.wait_scraped(2, metric="DCGM_FI_DEV_GPU_TEMP")
    snap = PrometheusSource(c.url).sample()
    (host,) = snap.hosts
    (info,) = host.gpus
    assert host.host == "node-a" and info.uuid == "GPU-0" and info.name == "NVIDIA B200"
    targets = sorted([c.instance("new"), c.instance("old")])
    assert info.source == f"{targets[0]} (gpumon)"
    assert info.duplicates == (f"{targets[1]} (gpumon)",)
    assert host.samples[0].temperature_c == 41
    assert host.driver_version == "595.58"
    out = once(c.url)
    assert out.returncode == 0, out.stderr
    assert "node-a: 1 GPU" in out.stdout and out.stdout.count("  GPU 0  ") == 1
    assert f"also reported by {targets[1]} (gpumon) (same UUID GPU-0)" in out.stdout
