"""GPU activity where it is shown, on the fake NVML through the real binding: ``--once --json``
(against the schema) and ``-q``, ``gpumon dmon``, ``gpumon topo``, the exporter's DCP series as
dcgm-exporter names them (ratios 0-1, bytes/s; none for a GPU without GPM), the cluster view
reading them back, the History and the CSV recorder."""

from __future__ import annotations

import json
import math
import time
from pathlib import Path

import pynvml
import pytest
from fakenvml import FakeNvml
from prometheus_client.parser import text_string_to_metric_families
from testkit import ExporterReading

from gpumon.cli.main import main
from gpumon.telemetry.cluster.prometheus import FIELDS as READ_BACK
from gpumon.telemetry.history.csv_rows import record_header, record_rows
from gpumon.telemetry.model.metrics import ACTIVITY_PCT_KEYS
from gpumon.telemetry.nvml.source import NvmlSource
from gpumon.units import MIB

jsonschema = pytest.importorskip("jsonschema", reason="not installed (the test extra)")
SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "docs" / "snapshot.schema.json")
                    .read_text(encoding="utf-8"))


def one_with_gpm(fake: FakeNvml) -> None:
    """GPU 0 an H200 under a bf16 matmul (the issue's figures), GPU 1 without GPM."""
    fake.set_gpu_count(2)
    fake.set_gpm(0)
    for metric, value in ((pynvml.NVML_GPM_METRIC_GRAPHICS_UTIL, 100.0),
                          (pynvml.NVML_GPM_METRIC_SM_UTIL, 96.4),
                          (pynvml.NVML_GPM_METRIC_SM_OCCUPANCY, 14.3),
                          (pynvml.NVML_GPM_METRIC_ANY_TENSOR_UTIL, 93.6),
                          (pynvml.NVML_GPM_METRIC_HMMA_TENSOR_UTIL, 93.6),
                          (pynvml.NVML_GPM_METRIC_DRAM_BW_UTIL, 16.6),
                          (pynvml.NVML_GPM_METRIC_PCIE_TX_PER_SEC, 4.6),
                          (pynvml.NVML_GPM_METRIC_PCIE_RX_PER_SEC, 12.8)):
        fake.set_gpm_metric(0, metric, value)


def test_once_json_has_the_activity_and_null_without_gpm(
        fake_nvml: FakeNvml, capsys: pytest.CaptureFixture[str]) -> None:
    one_with_gpm(fake_nvml)
    assert main(["--once", "--json"]) == 0  # waits for GPM's second sample
    doc = json.loads(capsys.readouterr().out)
    jsonschema.validate(doc, SCHEMA)
    g0, g1 = doc["gpus"]
    assert g0["activity_state"] == "reading"
    assert (g0["sm_active_pct"], g0["sm_occupancy_pct"], g0["tensor_active_pct"],
            g0["dram_active_pct"], g0["graphics_active_pct"]) == (96.4, 14.3, 93.6, 16.6, 100.0)
    assert g0["pcie_rx_bytes_per_s"] == pytest.approx(12.8 * MIB)
    assert g1["activity_state"] == "unsupported"
    for key in (*ACTIVITY_PCT_KEYS, "nvlink_rx_bytes_per_s", "nvlink_tx_bytes_per_s"):
        assert key in g1 and g1[key] is None, key
    topo = doc["topology"]
    assert topo["paths"] == [["X", "SYS"], ["SYS", "X"]]
    assert topo["gpus"][0]["cpu_affinity"] == "0-15" and topo["gpus"][1]["numa_affinity"] == "1"


def test_once_json_of_an_hgx_board_and_its_mig_devices_fits_the_schema(
        fake_nvml: FakeNvml, capsys: pytest.CaptureFixture[str]) -> None:
    fake_nvml.use_scenario("hgx")
    fake_nvml.set_mig_mode(7, 1)
    fake_nvml.add_mig(7, 0, 1, 0, "3g.71gb", 71 << 30, 1 << 30)
    assert main(["--once", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    jsonschema.validate(doc, SCHEMA)
    assert doc["topology"]["paths"][0][1:] == ["NV18"] * 7
    assert len(doc["gpus"][0]["nvlink_links"]) == 18
    g7 = doc["gpus"][7]
    assert g7["activity_state"] == "mig" and g7["sm_active_pct"] is None
    (mig,) = g7["mig_devices"]
    assert mig["activity_state"] == "reading" and mig["sm_active_pct"] == 89.7


def test_once_q_lists_the_activity_or_why_there_is_none(
        fake_nvml: FakeNvml, capsys: pytest.CaptureFixture[str]) -> None:
    one_with_gpm(fake_nvml)
    assert main(["--once", "-q"]) == 0
    out = capsys.readouterr().out
    gpu0, gpu1 = out.split("\nGPU 0")[1:]
    assert "    GPU Activity (GPM)\n" in gpu0
    for row in ("SM                            : 96.4 %", "SM Occupancy                  : 14.3 %",
                "Tensor                        : 93.6 %", "DRAM                          : 16.6 %"):
        assert row in gpu0
    assert "GPU Activity (GPM)                : This GPU has no GPM counters" in gpu1


def test_dmon_prints_rows_with_the_gpm_columns(fake_nvml: FakeNvml,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    one_with_gpm(fake_nvml)
    assert main(["dmon", "-c", "2", "-d", "0.2"]) == 0
    lines = capsys.readouterr().out.splitlines()
    names = lines[0].split()
    assert names[:6] == ["#", "gpu", "pwr", "gtemp", "sm", "gract"]
    assert names[6:9] == ["smact", "smocc", "tensor"] and lines[1].startswith("# Idx")
    rows = [line.split() for line in lines[2:]]
    assert len(rows) == 4  # two readings of two GPUs
    col = {name: k - 1 for k, name in enumerate(names)}
    first = rows[0]
    assert (first[col["smact"]], first[col["smocc"]], first[col["tensor"]],
            first[col["dram"]], first[col["pcirx"]]) == ("96", "14", "94", "17", "13")
    assert rows[1][col["smact"]] == "-" and rows[1][col["sm"]] == "11"  # no GPM: "-", not 0


def test_topo_prints_nv18_for_nvlink_peers(fake_nvml: FakeNvml,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    fake_nvml.use_scenario("hgx")
    assert main(["topo"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].split() == [*(f"GPU{i}" for i in range(8)), "CPU", "Affinity", "NUMA",
                                "Affinity", "GPU", "NUMA", "ID"]
    assert lines[1].split() == ["GPU0", "X", *["NV18"] * 7, "0-47,96-143", "0", "N/A"]
    assert lines[8].split() == ["GPU7", *["NV18"] * 7, "X", "48-95,144-191", "1", "N/A"]
    assert "  NV#  = Connection traversing a bonded set of # NVLinks" in out
    assert "SIMULATED" not in out
    assert main(["topo", "--p2p"]) == 0
    assert capsys.readouterr().out.splitlines()[1].split() == ["GPU0", "X", *["OK"] * 7]


def test_dmon_and_topo_refuse_bad_options_in_one_line(
        capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (["dmon", "-c", "0"], ["dmon", "-d", "soon"], ["topo", "--bogus"],
                 ["topo", "-m", "--p2p"], ["dmon", "--simulate", "99"]):
        with pytest.raises(SystemExit) as exit_info:
            main(argv)
        assert exit_info.value.code == 2
        err = capsys.readouterr().err.splitlines()
        assert err[0].startswith(f"gpumon {argv[0]}: error: ") and len(err) == 2, err


def test_simulated_dmon_and_topo_say_so(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["dmon", "--simulate", "2", "-c", "1", "-d", "0.1"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# SIMULATED")
    assert main(["topo", "--simulate", "2"]) == 0
    assert "SIMULATED" in capsys.readouterr().out


def scrape_twice() -> dict[str, dict[str, float]]:
    """The page of a reading after the first (GPM's first values come with the second),
    from the exporter's own reader over the fake NVML, parsed: name -> {gpu: value}."""
    with ExporterReading(NvmlSource, interval_s=0.15) as exporter:
        exporter.first()
        text = exporter.fresh().body("text/plain").data.decode()
    return {f.name: {s.labels.get("gpu", ""): s.value for s in f.samples}
            for f in text_string_to_metric_families(text)}  # gpumon_nvml_up has no gpu


def test_exporter_serves_dcp_ratios_and_no_series_without_gpm(fake_nvml: FakeNvml) -> None:
    one_with_gpm(fake_nvml)
    families = scrape_twice()
    assert families["DCGM_FI_PROF_SM_ACTIVE"] == {"0": pytest.approx(0.964)}
    assert families["DCGM_FI_PROF_PIPE_TENSOR_ACTIVE"] == {"0": pytest.approx(0.936)}
    assert families["DCGM_FI_PROF_DRAM_ACTIVE"] == {"0": pytest.approx(0.166)}
    assert families["DCGM_FI_PROF_SM_OCCUPANCY"] == {"0": pytest.approx(0.143)}
    assert families["DCGM_FI_PROF_GR_ENGINE_ACTIVE"] == {"0": 1.0}
    assert families["DCGM_FI_PROF_PCIE_RX_BYTES"] == {"0": pytest.approx(12.8 * MIB)}
    assert families["DCGM_FI_PROF_PIPE_TENSOR_HMMA_ACTIVE"] == {"0": pytest.approx(0.936)}
    for name, per_gpu in families.items():
        if name.startswith("DCGM_FI_PROF_"):
            assert "1" not in per_gpu, name  # GPU 1 has no GPM: no series, not 0
            assert all(0 <= v <= 1 for v in per_gpu.values()) or name.endswith("_BYTES")
    assert "DCGM_FI_PROF_NVLINK_TX_BYTES" not in families  # no NVLink on this machine
    assert "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL" not in families


def test_exporter_serves_nvlink_bandwidth_in_dcgms_unit(fake_nvml: FakeNvml) -> None:
    fake_nvml.use_scenario("hgx")
    families = scrape_twice()
    # 18 links x 2e6 KiB/s each way: DCGM's field 449 is (tx + rx KiB/s) / 1000
    total = families["DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL"]
    assert set(total) == {str(i) for i in range(8)}
    assert total["0"] == pytest.approx(2 * 18 * 2.0e6 / 1000, rel=0.05)
    assert total["5"] == 0.0  # the idle GPU: links up, no traffic
    assert families["DCGM_FI_PROF_NVLINK_RX_BYTES"]["0"] == pytest.approx(18 * 2.0e6 * 1024)
    assert families["gpumon_nvlink_tx_bytes_per_second"]["0"] == pytest.approx(
        18 * 2.0e6 * 1024)


def test_the_cluster_view_reads_the_dcp_series_back_as_percent() -> None:
    assert READ_BACK["DCGM_FI_PROF_SM_ACTIVE"] == ("sm_active_pct", 100.0)
    assert READ_BACK["DCGM_FI_PROF_PIPE_TENSOR_ACTIVE"] == ("tensor_active_pct", 100.0)
    assert READ_BACK["DCGM_FI_PROF_PCIE_TX_BYTES"] == ("pcie_tx_bytes_per_s", 1.0)
    assert "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL" not in READ_BACK  # a sum of two: not read back


def test_history_and_csv_record_the_activity(fake_nvml: FakeNvml) -> None:
    pytest.importorskip("numpy", reason="numpy is not installed (the window's History needs it)")
    from gpumon.telemetry.history.store import History

    one_with_gpm(fake_nvml)
    source = NvmlSource()
    try:
        source.open()
        first = source.sample()
        time.sleep(0.15)
        second = source.sample()
    finally:
        source.close()
    history = History(10)
    history.append(first)
    history.append(second)
    _, sm = history.series(0, "sm_active_pct")
    assert math.isnan(sm[0]) and sm[1] == 96.4  # warming: a gap, then the value
    assert all(math.isnan(v) for v in history.series(1, "sm_active_pct")[1])
    header = record_header()
    assert "sm_active_pct [%]" in header and "nvlink_rx_bytes_per_s [B/s]" in header
    rows = record_rows(second)
    column = header.index("sm_occupancy_pct [%]")
    assert (rows[0][column], rows[1][column]) == ("14.3", "")  # empty where not known


def test_topo_and_dmon_without_a_driver_say_why_and_exit_1(
        fake_nvml: FakeNvml, capsys: pytest.CaptureFixture[str]) -> None:
    fake_nvml.set_init_error(pynvml.NVML_ERROR_DRIVER_NOT_LOADED)
    for command in ("topo", "dmon"):
        assert main([command, *(["-c", "1"] if command == "dmon" else [])]) == 1
        captured = capsys.readouterr()
        assert captured.out == "" and "Traceback" not in captured.err
        assert captured.err.startswith(f"gpumon {command}: ") and "driver" in captured.err
