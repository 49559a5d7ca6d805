"""PrometheusSource on scripted answers: a GPU is its UUID, a machine its host label, each scrape
target its own liveness; MIG devices and the driver label; malformed labels skipped."""

from __future__ import annotations

from scripted_prometheus import scripted

from gpumon.cli.cluster import render_cluster
from gpumon.telemetry.cluster.prometheus import TICK_QUERY, PrometheusSource


def gpu(host: str, index: int, uuid: str, instance: str, model: str, label: str = "Hostname",
        job: str = "gpu") -> dict[str, str]:
    return {label: host, "gpu": str(index), "UUID": uuid, "instance": instance, "job": job,
            "modelName": model}


def up(instance: str, value: float = 1.0, job: str = "gpu") -> tuple[dict[str, str], float]:
    return {"instance": instance, "job": job}, value


def test_two_exporters_with_one_host_name_and_one_index_never_mix() -> None:
    """The issue's case: an H200 exporter and a simulated one, both Hostname="vm", both with
    a GPU 0. Each GPU keeps its own name and numbers; the host name is split by target."""
    h200 = gpu("vm", 0, "GPU-h200-0", "10.0.0.1:9401", "NVIDIA H200")
    sim = gpu("vm", 0, "GPU-sim-0", "10.0.0.1:9402", "NVIDIA GeForce RTX 4090")
    series = {"DCGM_FI_DEV_GPU_TEMP": [(h200, 54.0), (sim, 31.0)],
              "DCGM_FI_DEV_FB_USED": [(h200, 40960.0), (sim, 1024.0)],
              "DCGM_FI_DEV_FB_FREE": [(h200, 102809.6), (sim, 23552.0)],
              "up": [up("10.0.0.1:9401"), up("10.0.0.1:9402")]}
    with scripted(series) as server:
        snap = PrometheusSource(server.url).sample()
    assert [h.host for h in snap.hosts] == ["vm (10.0.0.1:9401)", "vm (10.0.0.1:9402)"]
    a, b = snap.hosts
    assert [(g.name, g.uuid) for g in a.gpus] == [("NVIDIA H200", "GPU-h200-0")]
    assert [(g.name, g.uuid) for g in b.gpus] == [("NVIDIA GeForce RTX 4090", "GPU-sim-0")]
    assert a.samples[0].temperature_c == 54.0 and a.samples[0].mem_used_bytes == 40 * 2**30
    assert b.samples[0].temperature_c == 31.0 and b.samples[0].mem_used_bytes == 2**30
    assert [g.host for g in a.gpus] == ["vm (10.0.0.1:9401)"]


def test_one_uuid_from_two_targets_is_one_gpu_and_names_the_duplicate() -> None:
    first = gpu("vm", 0, "GPU-1", "10.0.0.1:9400", "NVIDIA H200", job="dcgm")
    second = gpu("vm", 0, "GPU-1", "10.0.0.1:9401", "NVIDIA H200", job="gpumon")
    series = {"DCGM_FI_DEV_GPU_UTIL": [(first, 30.0), (second, 31.0)],
              "up": [up("10.0.0.1:9400", job="dcgm"), up("10.0.0.1:9401", job="gpumon")]}
    with scripted(series) as server:
        source = PrometheusSource(server.url)
        snap = source.sample()
        (host,) = snap.hosts
        assert host.host == "vm" and len(host.gpus) == 1
        (info,) = host.gpus
        assert info.source == "10.0.0.1:9400 (dcgm)"
        assert info.duplicates == ("10.0.0.1:9401 (gpumon)",)
        assert host.samples[0].gpu_util_pct == 30.0  # from one source, not a mix
        text = render_cluster(snap)
        assert text.count("  GPU 0  ") == 1
        assert ("also reported by 10.0.0.1:9401 (gpumon) (same UUID GPU-1): shown once, from "
                "10.0.0.1:9400 (dcgm)") in text
        # The source shown goes down: the GPU is read from the other one, not lost.
        series["up"] = [up("10.0.0.1:9400", 0.0, job="dcgm"), up("10.0.0.1:9401", job="gpumon")]
        series["DCGM_FI_DEV_GPU_UTIL"] = [(second, 35.0)]
        (host,) = source.sample().hosts
        assert host.gpus[0].source == "10.0.0.1:9401 (gpumon)"
        assert not host.samples[0].lost and host.samples[0].gpu_util_pct == 35.0


def test_one_of_two_exporters_of_a_machine_down_loses_only_its_gpus() -> None:
    a0 = gpu("vm", 0, "GPU-a0", "10.0.0.1:9400", "NVIDIA H200", job="dcgm")
    a1 = gpu("vm", 1, "GPU-a1", "10.0.0.1:9400", "NVIDIA H200", job="dcgm")
    b2 = gpu("vm", 2, "GPU-b2", "10.0.0.1:9401", "NVIDIA L40S", job="gpumon")
    series = {"DCGM_FI_DEV_GPU_UTIL": [(a0, 1.0), (a1, 2.0), (b2, 3.0)],
              "up": [up("10.0.0.1:9400", job="dcgm"), up("10.0.0.1:9401", job="gpumon")]}
    targets = [{"labels": {"job": "dcgm", "instance": "10.0.0.1:9400"}, "health": "down",
                "lastError": "connection refused"}]
    with scripted(series, targets) as server:
        source = PrometheusSource(server.url)
        assert [len(h.gpus) for h in source.sample().hosts] == [3]
        series["DCGM_FI_DEV_GPU_UTIL"] = [(b2, 4.0)]
        series["up"][0] = up("10.0.0.1:9400", 0.0, job="dcgm")
        snap = source.sample()
    (host,) = snap.hosts
    assert host.up  # one of its exporters still answers
    assert [(s.index, s.lost) for s in host.samples] == [(0, True), (1, True), (2, False)]
    assert host.samples[0].message == ("Prometheus cannot scrape vm (10.0.0.1:9400): "
                                       "connection refused.")
    assert host.samples[2].gpu_util_pct == 4.0
    assert host.message == host.samples[0].message
    lines = render_cluster(snap).splitlines()
    assert "vm: 3 GPUs" in lines
    assert any(line.startswith("  GPU 0") and line.endswith("LOST: " + host.message)
               for line in lines)


def test_hostname_and_Hostname_are_one_machine_and_instance_is_the_fallback() -> None:
    old = gpu("node-a", 0, "GPU-0", "10.0.0.1:9400", "NVIDIA B200", label="Hostname")
    new = gpu("node-a", 1, "GPU-1", "10.0.0.1:9401", "NVIDIA B200", label="hostname")
    bare = {"gpu": "0", "UUID": "GPU-2", "instance": "10.0.0.9:9400", "job": "gpu"}
    series = {"DCGM_FI_DEV_GPU_TEMP": [(old, 40.0), (new, 41.0), (bare, 42.0)],
              "up": [up("10.0.0.1:9400"), up("10.0.0.1:9401"), up("10.0.0.9:9400")]}
    with scripted(series) as server:
        snap = PrometheusSource(server.url).sample()
    assert [(h.host, [g.uuid for g in h.gpus]) for h in snap.hosts] == [
        ("10.0.0.9:9400", ["GPU-2"]), ("node-a", ["GPU-0", "GPU-1"])]


def test_mig_instances_sit_under_their_gpu_and_the_driver_label_fills_the_header() -> None:
    """dcgm-exporter's MIG series carry the parent's gpu and UUID plus GPU_I_ID and
    GPU_I_PROFILE: they must not overwrite the parent's values."""
    parent = {**gpu("a100", 0, "GPU-34319582", "10.0.0.1:9400", "NVIDIA A100-SXM4-40GB"),
              "DCGM_FI_DRIVER_VERSION": "535.129.03"}
    mig13 = {**parent, "GPU_I_ID": "13", "GPU_I_PROFILE": "1g.5gb"}
    mig2 = {**parent, "GPU_I_ID": "2", "GPU_I_PROFILE": "3g.20gb"}
    series = {"DCGM_FI_DEV_FB_USED": [(parent, 4845.0), (mig13, 312.0), (mig2, 0.0)],
              "DCGM_FI_DEV_FB_FREE": [(parent, 35690.0), (mig13, 4552.0), (mig2, 19968.0)],
              "DCGM_FI_DEV_GPU_TEMP": [(parent, 61.0)],
              "up": [up("10.0.0.1:9400")]}
    with scripted(series) as server:
        snap = PrometheusSource(server.url).sample()
    (host,) = snap.hosts
    assert host.samples[0].mem_used_bytes == 4845 * 2**20 and host.samples[0].temperature_c == 61
    assert [(m.gpu_index, m.gpu_instance_id, m.name, m.mem_used_bytes, m.mem_total_bytes)
            for m in host.migs] == [
        (0, 2, "NVIDIA A100-SXM4-40GB MIG 3g.20gb", 0, 19968 * 2**20),
        (0, 13, "NVIDIA A100-SXM4-40GB MIG 1g.5gb", 312 * 2**20, 4864 * 2**20)]
    assert snap.migs == host.migs  # the machine in focus
    assert snap.machine.driver_version == "535.129.03" == host.driver_version
    text = render_cluster(snap)
    assert "  Driver 535.129.03" in text
    assert "      MIG 13  NVIDIA A100-SXM4-40GB MIG 1g.5gb" in text


def test_labels_that_are_not_strings_and_odd_gpus_are_skipped() -> None:
    good = gpu("h", 0, "GPU-0", "i:1", "T4")
    series: dict = {"DCGM_FI_DEV_GPU_TEMP": [
        (good, 50.0),
        ({**good, "gpu": None, "UUID": "GPU-x"}, 1.0),  # null gpu label
        ({**good, "Hostname": 17, "UUID": "GPU-y", "gpu": "1"}, 2.0),  # numeric Hostname
        ({**good, "gpu": "9" * 5000, "UUID": "GPU-z"}, 3.0),  # an index int() refuses
        ({**good, "gpu": "²", "UUID": "GPU-w"}, 4.0)],  # a digit int() refuses
        "up": [up("i:1")]}
    with scripted(series) as server:
        snap = PrometheusSource(server.url).sample()
    assert snap.status.usable
    assert [(h.host, [(g.index, g.uuid) for g in h.gpus]) for h in snap.hosts] == [
        ("h", [(0, "GPU-0")]), ("i:1", [(1, "GPU-y")])]  # no Hostname string: the instance


def test_one_query_per_tick_and_one_for_the_focus() -> None:
    g = gpu("h", 0, "GPU-0", "i:1", "T4")
    series = {"DCGM_FI_DEV_GPU_UTIL": [(g, 5.0)], "up": [up("i:1")]}
    with scripted(series) as server:
        source = PrometheusSource(server.url, backfill_s=60)
        source.sample()  # first tick: the query, then the focus's processes and history
        first = [p for p, _ in server.requests]
        source.sample()
        second = [p for p, _ in server.requests][len(first):]
    assert len(first) == 3 and sum("query_range" in p for p in first) == 1
    assert len(second) == 2  # the tick's query and the focus's processes, side by side
    assert any("__name__" in p for p in second) and TICK_QUERY.startswith('{__name__=~"')


def test_a_fleet_too_large_for_one_answer_is_read_one_metric_per_query() -> None:
    """Past the size cap of one answer the tick asks per metric (each answer smaller) and
    stays so; a metric's answer still over the cap is the sentence."""
    gpus = [gpu(f"n{i}", 0, f"GPU-{i}", f"10.0.0.{i}:9400", "T4") for i in range(6)]
    series = {"DCGM_FI_DEV_GPU_UTIL": [(g, 10.0 + i) for i, g in enumerate(gpus)],
              "DCGM_FI_DEV_GPU_TEMP": [(g, 40.0 + i) for i, g in enumerate(gpus)],
              "up": [up(g["instance"]) for g in gpus]}
    with scripted(series) as server:
        source = PrometheusSource(server.url, backfill_s=3)  # a short history: a small answer
        source.client.fetcher.max_bytes = 2048  # the whole answer is larger, each metric's not
        snap = source.sample()
        assert snap.status.usable, snap.status
        assert [h.samples[0].gpu_util_pct for h in snap.hosts] == [10, 11, 12, 13, 14, 15]
        assert [h.samples[0].temperature_c for h in snap.hosts] == [40, 41, 42, 43, 44, 45]
        def whole() -> int:  # instant queries over every metric at once
            return sum(p.startswith("/api/v1/query?query=%7B__name__%3D~")
                       for p, _ in server.requests)
        assert whole() == 1  # tried once, then one query per metric
        source.sample()
        assert whole() == 1
        source.client.fetcher.max_bytes = 500
        assert source.sample().status.message == (
            f"The Prometheus server at {server.url} sent more than 0.000476837 MiB for one "
            "query.")


def test_of_two_targets_reporting_one_gpu_the_one_with_more_values_is_shown() -> None:
    full = gpu("vm", 0, "GPU-1", "10.0.0.1:9401", "NVIDIA B200", job="z-full")
    partial = gpu("vm", 0, "GPU-1", "10.0.0.1:9400", "NVIDIA B200", job="a-partial")
    series = {"DCGM_FI_DEV_GPU_TEMP": [(full, 41.0), (partial, 41.0)],
              "DCGM_FI_DEV_POWER_USAGE": [(full, 77.0)],
              "up": [up("10.0.0.1:9401", job="z-full"), up("10.0.0.1:9400", job="a-partial")]}
    with scripted(series) as server:
        (host,) = PrometheusSource(server.url).sample().hosts
    assert host.gpus[0].source == "10.0.0.1:9401 (z-full)"
    assert host.samples[0].power_w == 77.0
