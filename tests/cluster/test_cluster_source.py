"""PrometheusSource and ``gpumon --prometheus … --once`` against a real Prometheus server
scraping real ``gpumon exporter`` processes (simulated and on the fake NVML library)."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from cluster_helpers import ROOT, Cluster, wait_for

from gpumon.telemetry.cluster.prometheus import PrometheusSource
from gpumon.telemetry.model.types import SourceState

pytestmark = [
    pytest.mark.slow,  # real servers or subprocesses: seconds each (docs/development.md)
    pytest.mark.xdist_group("test_cluster_source"),  # its module fixture: made once
]


def _exported(cluster: Cluster, metric: str) -> dict[tuple[str, int], float]:
    return {(s["metric"]["hostname"], int(s["metric"]["gpu"])): float(s["value"][1])
            for s in cluster.query(metric)}  # type: ignore[index]


def _served_during(cluster: Cluster, metric: str, start: float, end: float
                   ) -> dict[tuple[str, int], set[float]]:
    """Each GPU's values of ``metric`` that a query between ``start`` and ``end`` (wall
    clock) may have been answered with: those scraped then, and the ones scraped up to a
    scrape timeout before (a scrape is stored when it ends, stamped when it began)."""
    out: dict[tuple[str, int], set[float]] = {}
    for s in cluster.query(f"{metric}[60s]"):
        labels, values = s["metric"], s["values"]  # type: ignore[index]
        stamped = [(float(t), float(v)) for t, v in values]  # type: ignore[union-attr]
        before = [v for t, v in stamped if t <= start - 1.0]
        out[(labels["hostname"], int(labels["gpu"]))] = set(  # type: ignore[index]
            before[-1:] + [v for t, v in stamped if start - 1.0 < t <= end])
    return out


def test_source_shows_every_host_and_gpu_with_the_exporters_values(cluster: Cluster) -> None:
    source = PrometheusSource(cluster.url)
    source.open()
    snap = source.sample()
    end = time.time()
    assert snap.status.state is SourceState.OK, snap.status
    assert [h.host for h in snap.hosts] == ["node-a", "node-b", "node-fake"]
    assert [len(h.gpus) for h in snap.hosts] == [2, 3, 2]
    assert all(h.up for h in snap.hosts)
    # What the server held while the source read it, GPU by GPU: the simulated values move
    # every half second, so the source's value is one of the few scraped in that time.
    util = _served_during(cluster, "DCGM_FI_DEV_GPU_UTIL", snap.timestamp_s, end)
    used = _served_during(cluster, "DCGM_FI_DEV_FB_USED", snap.timestamp_s, end)
    assert len(util) == len(used) == 7
    for host in snap.hosts:
        for s in host.samples:
            key = (host.host, s.index)
            assert s.gpu_util_pct in util[key], (key, s.gpu_util_pct, util[key])
            assert s.mem_used_bytes is not None and s.mem_used_bytes > 0
            assert s.mem_used_bytes / 2**20 in used[key], (key, s.mem_used_bytes, used[key])
        assert all(g.host == host.host for g in host.gpus)
    simulated = {h.host: all(g.simulated for g in h.gpus) for h in snap.hosts}
    assert simulated == {"node-a": True, "node-b": True, "node-fake": False}
    # The focus (first machine by default) is the snapshot's own GPUs, with its processes.
    assert [g.host for g in snap.gpus] == ["node-a", "node-a"]
    source.set_focus("node-fake")
    snap = source.sample()
    assert [g.host for g in snap.gpus] == ["node-fake", "node-fake"]
    # Each process with its type as the exporter read it (every one was "C" before).
    assert [(p.gpu_index, p.pid, p.type.value, p.gpu_mem_bytes) for p in snap.processes] == [
        (0, 4242, "C", 512 * 1024**2), (1, 4343, "G", 128 * 1024**2),
        (1, 4444, "C+G", 64 * 1024**2)]


def test_values_match_the_fake_nvml_exactly(cluster: Cluster) -> None:
    """The fake NVML's numbers are fixed: what the window shows is what the driver said."""
    source = PrometheusSource(cluster.url)
    snap = source.sample()
    fake = next(h for h in snap.hosts if h.host == "node-fake")
    exported = {m: _exported(cluster, m) for m in
                ("DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_FB_USED")}
    for s in fake.samples:
        assert s.temperature_c == exported["DCGM_FI_DEV_GPU_TEMP"][("node-fake", s.index)]
        assert s.power_w == exported["DCGM_FI_DEV_POWER_USAGE"][("node-fake", s.index)]
        assert s.mem_used_bytes == round(
            exported["DCGM_FI_DEV_FB_USED"][("node-fake", s.index)] * 2**20)


def test_backfill_fills_the_history_of_the_focused_host(cluster: Cluster) -> None:
    def filled() -> bool:  # once the server holds a few seconds of scrapes
        return len(PrometheusSource(cluster.url, backfill_s=60).sample().backfill) >= 3
    wait_for(filled, 15, "three seconds of history on the server")
    source = PrometheusSource(cluster.url, backfill_s=60)
    snap = source.sample()
    assert len(snap.backfill) >= 3
    assert all(b.timestamp_s < snap.timestamp_s for b in snap.backfill)
    assert all(len(b.samples) == 2 for b in snap.backfill)
    assert [b.timestamp_s for b in snap.backfill] == sorted(b.timestamp_s for b in snap.backfill)
    assert source.sample().backfill == ()  # once per focus
    source.set_focus("node-b")
    assert {len(b.samples) for b in source.sample().backfill} == {3}


def test_once_prints_every_host(cluster: Cluster) -> None:
    out = subprocess.run([sys.executable, "-m", "gpumon", "--prometheus", cluster.url, "--once"],
                         capture_output=True, text=True, timeout=60, cwd=ROOT, check=False)
    assert out.returncode == 0, out.stderr
    text = out.stdout
    for host, n in (("node-a (simulated)", 2), ("node-b (simulated)", 3), ("node-fake", 2)):
        assert f"{host}: {n} GPUs" in text
    assert text.count("  GPU ") == 7
    assert "Traceback" not in out.stderr


def test_killed_exporter_turns_its_gpus_lost_while_others_go_on(
        make_cluster: Callable[[], Cluster], fake_nvml_library: Path) -> None:
    c = make_cluster()
    c.add_simulated("node-a", 2)
    c.add_fake_nvml("node-fake", fake_nvml_library, 1)
    c.start_server()
    c.wait_scraped(3)
    source = PrometheusSource(c.url)
    assert all(h.up for h in source.sample().hosts)
    c.kill_exporter("node-a")
    wait_for(lambda: not source.sample().hosts[0].up, 15, "node-a to be seen down")
    snap = source.sample()
    down, alive = snap.hosts
    assert down.host == "node-a" and len(down.samples) == 2
    assert all(s.lost for s in down.samples)
    assert "Prometheus cannot scrape node-a" in down.message
    assert "refused" in down.message  # the server's scrape error, as it said it
    assert alive.up and not any(s.lost for s in alive.samples)
    t0 = alive.samples[0].timestamp_s
    wait_for(lambda: source.sample().hosts[1].samples[0].timestamp_s > t0, 15,
             "a newer reading of node-fake")
    later = source.sample().hosts[1]
    assert later.samples[0].timestamp_s > t0 and not later.samples[0].lost
    # A source that starts after the exporter died still shows its GPUs, lost.
    fresh = PrometheusSource(c.url).sample()
    assert [(h.host, h.up, len(h.gpus)) for h in fresh.hosts] == [
        ("node-a", False, 2), ("node-fake", True, 1)]
    assert all(s.lost for s in fresh.hosts[0].samples)
    assert fresh.hosts[0].gpus[0].name == down.gpus[0].name
    out = subprocess.run([sys.executable, "-m", "gpumon", "--prometheus", c.url, "--once"],
                         capture_output=True, text=True, timeout=60, cwd=ROOT, check=False)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    head = lines.index(next(x for x in lines if x.startswith("node-a")))
    assert lines[head].startswith("node-a (simulated): 2 GPUs, down: Prometheus cannot "
                                  "scrape node-a (127.0.0.1:")
    # gpumon's exporter labels its series with the driver (DCGM_FI_DRIVER_VERSION)
    assert lines[head + 1].split() == ["Driver", "550.54.15"]
    assert [x.split()[:2] + x.split()[-1:] for x in lines[head + 2:head + 4]] == [
        ["GPU", "0", "LOST"], ["GPU", "1", "LOST"]]


def test_stopped_server_gives_the_sentence_and_recovers(
        make_cluster: Callable[[], Cluster]) -> None:
    c = make_cluster()
    c.add_simulated("node-a", 1)
    c.start_server()
    c.wait_scraped(1)
    source = PrometheusSource(c.url, timeout_s=2)
    assert source.sample().status.usable
    c.stop_server()
    snap = source.sample()
    assert snap.status.state is SourceState.ERROR
    assert snap.status.message == (f"The Prometheus server at {c.url} cannot be reached "
                                   "(Connection refused).")
    assert snap.hosts == ()
    out = subprocess.run([sys.executable, "-m", "gpumon", "--prometheus", c.url, "--once"],
                         capture_output=True, text=True, timeout=60, cwd=ROOT, check=False)
    assert out.returncode == 1 and out.stdout == ""
    assert out.stderr.strip().splitlines() == [f"gpumon: {snap.status.message}"]
    c.start_server()
    c.wait_scraped(1)
    recovered = source.sample()
    assert recovered.status.usable and [h.host for h in recovered.hosts] == ["node-a"]


def test_host_names_with_quotes_and_newlines_round_trip(
        make_cluster: Callable[[], Cluster]) -> None:
    """A Hostname label with quotes, a backslash and a newline: the real server's PromQL
    parser accepts the source's selectors (processes, history) for it."""
    weird = 'lab "A"\\\nrack 2'
    c = make_cluster()
    c.add_simulated(weird, 1)
    c.start_server()
    c.wait_scraped(1)
    def seconds_scraped() -> float:  # the backfill's steps are 1 s at least
        values = c.query("DCGM_FI_DEV_GPU_UTIL[10s]")[0]["values"]
        return float(values[-1][0]) - float(values[0][0])  # type: ignore[index]

    wait_for(lambda: seconds_scraped() >= 2.5, 15, "3 s of scrapes")
    snap = PrometheusSource(c.url, backfill_s=60).sample()
    assert snap.status.usable, snap.status
    (host,) = snap.hosts
    assert host.host == weird and snap.gpus[0].host == weird
    assert snap.processes and len(snap.backfill) >= 2
