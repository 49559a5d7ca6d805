"""A real Prometheus scraping gpumon's exporter on the fake NVML: the energy counter's rate is
the power the fake draws, and an XID error raised by the fake makes DCGM_FI_DEV_XID_ERRORS > 0,
as dashboards and alerts written for dcgm-exporter ask."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from cluster_helpers import Cluster, wait_for

DCGM_PAGES = Path(__file__).with_name("dcgm_pages")


@pytest.mark.slow
def test_energy_rate_is_the_power_and_an_xid_fires_the_alert(
        make_cluster: Callable[[], Cluster], fake_nvml_library: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    # GPU 0 draws 100 W, GPU 1 101 W (the fake's defaults); an XID 79 on GPU 1 after 3 s.
    monkeypatch.setenv("FAKE_XIDS", "1:79:3000")
    cluster = make_cluster()
    # The exporter reads every 0.1 s, so a counter is at most 0.1 s old when it is scraped.
    cluster.add_fake_nvml("node-fake", fake_nvml_library, 2, interval_s=0.1)
    cluster.start_server()
    cluster.wait_scraped(2)

    def xid_fired() -> bool:
        return len(cluster.query("DCGM_FI_DEV_XID_ERRORS > 0")) == 1

    wait_for(xid_fired, 30, "DCGM_FI_DEV_XID_ERRORS > 0")
    fired = cluster.query("DCGM_FI_DEV_XID_ERRORS > 0")[0]
    assert fired["metric"]["gpu"] == "1"  # type: ignore[index]
    assert fired["metric"]["err_code"] == "79"  # type: ignore[index]
    assert fired["value"][1] == "79"  # type: ignore[index]
    assert fired["metric"]["DCGM_FI_DRIVER_VERSION"] == "550.54.15"  # type: ignore[index]

    # rate() divides by the whole range, so a series younger than the range reads low: wait
    # (bounded) until the range is full. Scraped every 0.25 s, a 4 s range holds 16 readings
    # (a counter read at most 0.1 s late is then at most 2.5 % off); dashboards scraping
    # every 15 s take a minute for the same.
    def a_full_range() -> bool:
        got = cluster.query("min(timestamp(DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION) - "
                            "min_over_time(timestamp(DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION)"
                            "[2m:250ms]))")
        return bool(got) and float(got[0]["value"][1]) >= 5  # type: ignore[index]

    wait_for(a_full_range, 60, "4 s of energy readings")
    watts = {r["metric"]["gpu"]: float(r["value"][1])  # type: ignore[index]
             for r in cluster.query("rate(DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION[4s]) / 1000")}
    assert watts["0"] == pytest.approx(100.0, rel=0.05)
    assert watts["1"] == pytest.approx(101.0, rel=0.05)
    power = {r["metric"]["gpu"]: float(r["value"][1])  # type: ignore[index]
             for r in cluster.query("DCGM_FI_DEV_POWER_USAGE")}
    assert watts["0"] == pytest.approx(power["0"], rel=0.05)
    meta = cluster.query('count by (__name__) ({__name__=~"DCGM_FI_DEV_(TOTAL_ENERGY'
                         '_CONSUMPTION|ECC_DBE_VOL_TOTAL|CLOCKS_EVENT_REASONS)"})')
    assert {m["metric"]["__name__"] for m in meta} == {  # type: ignore[index]
        "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL",
        "DCGM_FI_DEV_CLOCKS_EVENT_REASONS"}


@pytest.mark.slow
def test_the_cluster_view_reads_health_from_gpumon_and_dcgm_exporter(
        make_cluster: Callable[[], Cluster], fake_nvml_library: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    from gpumon.telemetry.cluster.prometheus import PrometheusSource
    from gpumon.telemetry.model.health import Level, assess, held_down
    from gpumon.ui.monitor.cluster_overview import cell_text

    monkeypatch.setenv("FAKE_VALUES", "0:clock_events=68,0:remap_pending=1,1:ecc_dbe_vol=2")
    monkeypatch.setenv("FAKE_XIDS", "1:79:0")
    cluster = make_cluster()
    cluster.add_fake_nvml("node-fake", fake_nvml_library, 2)
    cluster.add_static("dcgm", DCGM_PAGES / "b200_node_a.prom")
    cluster.start_server()
    cluster.wait_scraped(3)
    wait_for(lambda: len(cluster.query("DCGM_FI_DEV_XID_ERRORS > 0")) == 1, 30, "the XID")
    snap = PrometheusSource(cluster.url).sample()
    views = {h.host: h for h in snap.hosts}
    fake = views["node-fake"]
    s0, s1 = fake.samples
    assert s0.clocks_event_reasons == 68 and isinstance(s0.clocks_event_reasons, int)
    assert held_down(s0.clocks_event_reasons) == "clocks held down: power cap, thermal"
    assert s0.remap_pending is True and assess(s0).level == Level.WARNING
    assert (s1.xid_last, s1.xid_count, s1.ecc_uncorrected_volatile) == (79, 1, 2)
    assert assess(s1).level == Level.ERROR
    assert s0.xid_last is None and s0.xid_count == 0  # 0 from the exporter: none yet
    tip = cell_text("node-fake", fake.gpus[0], s0)
    assert "clocks held down: power cap, thermal" in tip and "warning" in tip
    assert "GPU has fallen off the bus" in cell_text("node-fake", fake.gpus[1], s1)
    # dcgm-exporter's own page: its energy, replays and memory temperature, as it says them
    (b200,) = next(v for k, v in views.items() if k.startswith("node-a")).samples
    assert (b200.energy_mj, b200.pcie_replay_count, b200.mem_temperature_c) == (
        196764132, 0, 0)
    assert b200.xid_count is None and assess(b200).level == Level.OK
