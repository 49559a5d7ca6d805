"""PrometheusSource on scripted answers: grouping without a Hostname label (dcgm-exporter on
Kubernetes), an exporter without NVML, a GPU an exporter reports lost, and what the
cluster commands import."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from scripted_prometheus import scripted

from gpumon.cli.cluster import render_cluster
from gpumon.telemetry.cluster.prometheus import PrometheusSource


def test_grouped_by_instance_without_hostname_and_dcgm_names_only() -> None:
    a = {"gpu": "0", "UUID": "GPU-a", "modelName": "Tesla T4", "instance": "10.0.0.7:9400"}
    b = {"gpu": "1", "UUID": "GPU-b", "modelName": "Tesla T4", "instance": "10.0.0.7:9400"}
    series = {"DCGM_FI_DEV_GPU_UTIL": [(a, 10.0), (b, 20.0)],
              "DCGM_FI_DEV_FB_USED": [(a, 1024.0), (b, 2048.0)],
              "DCGM_FI_DEV_FB_FREE": [(a, 3072.0), (b, 2048.0)],
              "up": [({"instance": "10.0.0.7:9400"}, 1.0)]}
    with scripted(series) as server:
        snap = PrometheusSource(server.url).sample()
    (host,) = snap.hosts
    assert host.host == "10.0.0.7:9400" and [g.index for g in host.gpus] == [0, 1]
    assert host.gpus[0].mem_total_bytes == 4096 * 2**20  # used + free, as dcgm-exporter has
    assert [s.gpu_util_pct for s in host.samples] == [10.0, 20.0]
    assert [s.mem_used_bytes for s in host.samples] == [2**30, 2 * 2**30]
    assert not snap.simulated and snap.gpus[0].host == "10.0.0.7:9400"


def test_exporter_without_nvml_and_a_lost_gpu() -> None:
    g = {"Hostname": "ok-host", "gpu": "0", "instance": "a:9401"}
    series = {"DCGM_FI_DEV_GPU_UTIL": [(g, 5.0)],
              "gpumon_gpu_lost": [(g, 0.0), ({**g, "gpu": "1"}, 1.0)],
              "gpumon_nvml_up": [({"Hostname": "ok-host", "instance": "a:9401"}, 1.0),
                                 ({"Hostname": "no-driver", "instance": "b:9401"}, 0.0)],
              "up": [({"instance": "a:9401"}, 1.0), ({"instance": "b:9401"}, 1.0)]}
    with scripted(series) as server:
        snap = PrometheusSource(server.url).sample()
    nodriver, okhost = snap.hosts
    assert nodriver.host == "no-driver" and nodriver.gpus == () and nodriver.up
    assert "cannot read its GPUs (gpumon_nvml_up is 0)" in nodriver.message
    assert [s.lost for s in okhost.samples] == [False, True]
    assert "gpumon_gpu_lost 1" in okhost.samples[1].message
    text = render_cluster(snap)
    assert "no-driver: 0 GPUs" in text and "cannot read its GPUs" in text
    assert "  GPU 1  GPU" in text and "LOST: The exporter reports this GPU as lost" in text


def test_cluster_commands_import_no_qt_or_torch() -> None:
    script = textwrap.dedent("""
        import sys
        import gpumon.cli.exporter, gpumon.cli.cluster
        from gpumon.cli.main import main
        assert main(["--prometheus", "http://127.0.0.1:9", "--once"]) == 1
        print("\\n".join(sys.modules))
        """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    loaded = {name.split(".")[0] for name in done.stdout.split()}
    assert "gpumon" in loaded
    for name in ("PySide6", "pyqtgraph", "torch", "pynvml"):
        assert name not in loaded, name
    assert done.stderr.strip() == ("gpumon: The Prometheus server at http://127.0.0.1:9 "
                                   "cannot be reached (Connection refused).")


def test_a_machine_whose_driver_goes_away_shows_its_gpus_lost_with_why() -> None:
    g = {"Hostname": "h", "gpu": "0", "instance": "a:9401", "modelName": "Tesla T4"}
    series = {"DCGM_FI_DEV_GPU_UTIL": [(g, 5.0)],
              "gpumon_nvml_up": [({"Hostname": "h", "instance": "a:9401"}, 1.0)],
              "up": [({"instance": "a:9401"}, 1.0)]}
    with scripted(series) as server:
        source = PrometheusSource(server.url)
        assert not source.sample().hosts[0].samples[0].lost
        series["DCGM_FI_DEV_GPU_UTIL"] = []
        series["gpumon_nvml_up"] = [({"Hostname": "h", "instance": "a:9401"}, 0.0)]
        (host,) = source.sample().hosts
        assert host.gpus[0].name == "Tesla T4" and host.samples[0].lost
        assert "cannot read its GPUs (gpumon_nvml_up is 0)" in host.samples[0].message
        series["up"] = []  # the target left the server's configuration: the machine goes
        series["gpumon_nvml_up"] = []
        assert source.sample().hosts == ()
