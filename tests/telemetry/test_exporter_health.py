"""The health series of the exporter with dcgm-exporter's exact names, types, help texts and
units (NVIDIA/dcgm-exporter etc/default-counters.csv and etc/dcp-metrics-included.csv), read
from the fake NVML through the real nvidia-ml-py and parsed by prometheus_client's parser."""

from __future__ import annotations

import time

from fakenvml import FakeNvml
from prometheus_client.parser import text_string_to_metric_families
from testkit import ExporterReading

from gpumon.telemetry.nvml.source import NvmlSource

# name -> (type, help), as dcgm-exporter's CSV files have them (the clock event reasons and
# ROW_REMAP_PENDING: DCGM's field descriptions)
EXPECTED = {
    "DCGM_FI_DEV_CLOCKS_EVENT_REASONS": (
        "gauge", "Current clock event reasons (bitmask of DCGM_CLOCKS_EVENT_REASON_*)"),
    "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS": (
        "gauge", "Current clock throttle reasons (bitmask of DCGM_CLOCKS_THROTTLE_REASON_*)"),
    "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL": (
        "counter", "Total number of single-bit volatile ECC errors."),
    "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL": (
        "counter", "Total number of double-bit volatile ECC errors."),
    "DCGM_FI_DEV_ECC_SBE_AGG_TOTAL": (
        "counter", "Total number of single-bit persistent ECC errors."),
    "DCGM_FI_DEV_ECC_DBE_AGG_TOTAL": (
        "counter", "Total number of double-bit persistent ECC errors."),
    "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS": (
        "counter", "Number of remapped rows for correctable errors"),
    "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS": (
        "counter", "Number of remapped rows for uncorrectable errors"),
    "DCGM_FI_DEV_ROW_REMAP_FAILURE": ("gauge", "Whether remapping of rows has failed"),
    "DCGM_FI_DEV_ROW_REMAP_PENDING": ("gauge", "Whether remapping of rows is pending"),
    "DCGM_FI_DEV_RETIRED_SBE": (
        "counter", "Total number of retired pages due to single-bit errors."),
    "DCGM_FI_DEV_RETIRED_DBE": (
        "counter", "Total number of retired pages due to double-bit errors."),
    "DCGM_FI_DEV_RETIRED_PENDING": ("counter", "Total number of pages pending retirement."),
    "DCGM_FI_DEV_PCIE_REPLAY_COUNTER": ("counter", "Total number of PCIe retries."),
    "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION": (  # dcgm-exporter's, then why it may be older
        "counter", "Total energy consumption since boot (in mJ). Read less often than the "
        "other values where the driver's call is costly (3.3 ms of CPU on an H200: every ~14 "
        "s, at most every 30 s); the last value read is sent in between."),
    "DCGM_FI_DEV_MEMORY_TEMP": ("gauge", "Memory temperature (in C)."),
    "DCGM_FI_DEV_FB_RESERVED": ("gauge", "Framebuffer memory reserved (in MiB)."),
    "DCGM_FI_DEV_XID_ERRORS": ("gauge", "Value of the last XID error encountered."),
}


def page_text(accept: str = "text/plain") -> str:
    """The exporter's page after its first reading of the fake NVML, in ``accept``'s format."""
    with ExporterReading(NvmlSource, host="lab-1") as exporter:
        return exporter.first().body(accept).data.decode()


def by_gpu(text: str, name: str) -> dict[str, float]:
    """The samples of ``name`` in the exposition, exactly that name (no _total), by GPU."""
    out = {}
    for f in text_string_to_metric_families(text):
        for s in f.samples:
            if s.name in (name, name + "_total") and f.name == name:
                out[s.labels["gpu"]] = s.value
    return out


def test_health_series_with_dcgm_names_types_help_and_values(fake_nvml: FakeNvml) -> None:
    fake_nvml.set_gpu_count(2)
    for key, value in (("clock_events", 0x44), ("ecc_sbe_vol", 7), ("ecc_dbe_vol", 2),
                       ("ecc_sbe_agg", 70), ("ecc_dbe_agg", 3), ("remap_corr", 5),
                       ("remap_unc", 1), ("remap_pending", 1), ("retired_sbe", 4),
                       ("retired_dbe", 2), ("retired_pending", 1), ("pcie_replay", 9),
                       ("mem_temp", 71), ("mem_reserved", 512 * 2**20)):
        fake_nvml.set_value(0, key, value)
    fake_nvml.set_energy(0, 7_000_000)
    fake_nvml.add_xid(0, 48)
    with ExporterReading(NvmlSource, host="lab-1", interval_s=0.05) as exporter:
        deadline = time.monotonic() + 10
        while fake_nvml.xids_delivered() == 0:
            assert time.monotonic() < deadline, "the XID was never delivered"
            time.sleep(0.02)
        text = exporter.fresh().body("text/plain").data.decode()  # read with the XID in
    parsed = {f.name: f for f in text_string_to_metric_families(text)}
    for name, (kind, help_text) in EXPECTED.items():
        assert parsed[name].type == kind, name
        assert parsed[name].documentation == help_text, name
        if kind == "counter":  # under exactly that name, as dcgm-exporter sends it
            assert f"# TYPE {name} counter\n" in text
            assert f"\n{name}{{" in text
            assert f"{name}_total" not in text
    assert by_gpu(text, "DCGM_FI_DEV_CLOCKS_EVENT_REASONS") == {"0": 0x44, "1": 0}
    assert by_gpu(text, "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS")["0"] == 0x44
    assert by_gpu(text, "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL")["0"] == 7
    assert by_gpu(text, "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL")["0"] == 2
    assert by_gpu(text, "DCGM_FI_DEV_ECC_SBE_AGG_TOTAL")["0"] == 70
    assert by_gpu(text, "DCGM_FI_DEV_ECC_DBE_AGG_TOTAL")["0"] == 3
    assert by_gpu(text, "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS")["0"] == 5
    assert by_gpu(text, "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS")["0"] == 1
    assert by_gpu(text, "DCGM_FI_DEV_ROW_REMAP_PENDING") == {"0": 1, "1": 0}
    assert by_gpu(text, "DCGM_FI_DEV_ROW_REMAP_FAILURE")["0"] == 0
    assert by_gpu(text, "DCGM_FI_DEV_RETIRED_SBE")["0"] == 4
    assert by_gpu(text, "DCGM_FI_DEV_RETIRED_DBE")["0"] == 2
    assert by_gpu(text, "DCGM_FI_DEV_RETIRED_PENDING")["0"] == 1
    assert by_gpu(text, "DCGM_FI_DEV_PCIE_REPLAY_COUNTER")["0"] == 9
    assert by_gpu(text, "DCGM_FI_DEV_MEMORY_TEMP")["0"] == 71
    assert by_gpu(text, "DCGM_FI_DEV_FB_RESERVED")["0"] == 512  # MiB
    assert 7_000_000 <= by_gpu(text, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION")["0"] < 8_000_000
    xids = [s for f in text_string_to_metric_families(text) if f.name == "DCGM_FI_DEV_XID_ERRORS"
            for s in f.samples]
    x0 = next(s for s in xids if s.labels["gpu"] == "0")
    assert x0.value == 48
    assert (x0.labels["err_code"], x0.labels["err_msg"]) == ("48", "double-bit ECC error")
    assert next(s for s in xids if s.labels["gpu"] == "1").value == 0
    for f in text_string_to_metric_families(text):
        if f.name.startswith("DCGM_FI_DEV"):
            for s in f.samples:
                assert s.labels["DCGM_FI_DRIVER_VERSION"] == "550.54.15", f.name


def test_unsupported_health_fields_are_left_out_never_zero(fake_nvml: FakeNvml) -> None:
    fake_nvml.set_gpu_count(2)
    for func in ("nvmlDeviceGetRemappedRows", "nvmlDeviceGetRetiredPages",
                 "nvmlDeviceGetRetiredPagesPendingStatus",
                 "nvmlDeviceGetTotalEnergyConsumption", "nvmlDeviceGetEccMode",
                 "nvmlDeviceGetPcieReplayCounter", "nvmlDeviceGetCurrentClocksEventReasons",
                 "nvmlDeviceGetCurrentClocksThrottleReasons", "nvmlDeviceRegisterEvents"):
        fake_nvml.set_unsupported(func, gpu=1)
    fake_nvml.set_error("NVML_FI_DEV_MEMORY_TEMP", 3, gpu=1)  # NVML_ERROR_NOT_SUPPORTED
    text = page_text()
    for name in EXPECTED:
        if name == "DCGM_FI_DEV_FB_RESERVED":
            continue
        assert list(by_gpu(text, name)) in (["0"], []), name
        assert "1" not in by_gpu(text, name), name


def test_openmetrics_keeps_the_counter_names_too(fake_nvml: FakeNvml) -> None:
    text = page_text("application/openmetrics-text; version=1.0.0")
    # OpenMetrics wants a counter's samples named <name>_total: dcgm-exporter's name goes
    # out as type unknown (test_exporter_openmetrics.py), under the same series name
    assert "# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION unknown\n" in text
    assert "\nDCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{" in text
