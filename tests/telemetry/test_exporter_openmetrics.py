"""The OpenMetrics form of /metrics passes a strict parser (prometheus_client's OpenMetrics
parser refused it: "Clashing name: DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"), with every series
under the same name as in the text format, which keeps dcgm-exporter's counter types."""

from __future__ import annotations

from functools import partial

from exporter_helpers import running
from prometheus_client.openmetrics.parser import text_string_to_metric_families as strict
from prometheus_client.parser import text_string_to_metric_families as text_format
from testkit import wait_until

from gpumon.telemetry.model.exported import DCGM_FIELDS
from gpumon.telemetry.sources.simulated import SimulatedSource

OPENMETRICS = "application/openmetrics-text;version=1.0.0"
COUNTERS = {f.name for f in DCGM_FIELDS if f.kind == "counter"}


def _series(families: list) -> set[tuple[str, str]]:  # type: ignore[type-arg]
    return {(s.name, f.type) for f in families for s in f.samples}


def test_the_openmetrics_page_passes_a_strict_parser_with_dcgm_names() -> None:
    with running(partial(SimulatedSource, n_gpus=2, seed=1)) as exporter:
        wait_until(lambda: b"DCGM_FI_DEV_GPU_UTIL" in exporter.get("/metrics")[1], 10,
                   "a reading")
        status, body = exporter.get("/metrics", headers={"Accept": OPENMETRICS})
        assert status == 200 and body.endswith(b"# EOF\n")
        families = list(strict(body.decode()))  # raised ValueError: Clashing name
        status, plain = exporter.get("/metrics")
    list(text_format(plain.decode()))  # parses too
    names = {name for name, _ in _series(families)}
    sent = COUNTERS & names
    assert "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION" in sent
    # the same series names in both formats: what dashboards query does not change
    assert names == {line.split("{")[0].split(" ")[0]
                     for line in plain.decode().splitlines() if not line.startswith("#")}
    kinds = {f.name: f.type for f in families}
    assert all(kinds[name] == "unknown" for name in sent)
    for name in sent:  # the text format keeps dcgm-exporter's TYPE line
        assert f"# TYPE {name} counter\n" in plain.decode()
