"""The exporter and the cluster view share one table of series: what one sends, the other reads."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families
from testkit import ExporterReading

from gpumon.telemetry.cluster.prometheus import FIELDS
from gpumon.telemetry.model import exported
from gpumon.telemetry.model.types import GpuSample
from gpumon.telemetry.sources.simulated import SimulatedSource


def test_every_exported_gauge_is_read_back_with_its_scale() -> None:
    for field in exported.DCGM_FIELDS + exported.GPUMON_FIELDS:
        assert FIELDS[field.name] == (field.key, field.scale)
        assert field.key in GpuSample.__dataclass_fields__


def test_what_the_exporter_sends_the_reader_knows() -> None:
    with ExporterReading(lambda: SimulatedSource(n_gpus=1)) as exporter:
        text = exporter.first().body().data.decode()
    sent = {f.name for f in text_string_to_metric_families(text)}
    # The last-read time is about the reading, not a value of the GPU: not read back.
    per_gpu = sent - {exported.NVML_UP, exported.PROCESS_MEMORY, exported.LAST_READ}
    assert per_gpu, text
    assert per_gpu <= set(FIELDS), per_gpu - set(FIELDS)


def test_the_pcie_help_says_where_gpm_gives_the_rates_at_every_reading() -> None:
    """On a GPU with GPM the rates come from it at every reading (nvml/activity.py), not from
    the throughput call every few seconds: the help said only the latter."""
    helps = {f.name: f.help for f in exported.GPUMON_FIELDS}
    for name in ("gpumon_pcie_rx_bytes_per_second", "gpumon_pcie_tx_bytes_per_second"):
        assert "GPM" in helps[name] and "every reading" in helps[name], helps[name]
        assert "every few seconds" in helps[name]  # the throughput call's, elsewhere
