"""A pair of GPUs' own NVLink rate (``model/topology.py: pair_rates``), as the Topology window
puts it in the pair's cell: the sum of the links that join them directly; None through
NVSwitches, where a pair's share of the traffic is not known, and for GPUs not joined."""

from __future__ import annotations

from gpumon.telemetry.model.activity import LinkRate
from gpumon.telemetry.model.topology import GpuPlace, NvLink, pair_rates

# GPU 0: links 0-1 to GPU 1, link 2 to GPU 2, link 3 to an NVSwitch
PLACE = GpuPlace(0, "00000000:10:00.0", nvlinks=(
    NvLink(0, "00000000:11:00.0", "gpu", 1), NvLink(1, "00000000:11:00.0", "gpu", 1),
    NvLink(2, "00000000:12:00.0", "gpu", 2), NvLink(3, "00000000:05:00.0", "switch")),
    links_total=4)


def test_the_links_joining_a_pair_are_summed() -> None:
    links = (LinkRate(0, 100.0, 300.0), LinkRate(1, 50.0, 0.0), LinkRate(2, 7.0, 9.0),
             LinkRate(3, 1e9, 1e9))
    assert pair_rates(PLACE, links, 1) == (150.0, 300.0)
    assert pair_rates(PLACE, links, 2) == (7.0, 9.0)


def test_no_direct_link_is_no_figure_not_zero() -> None:
    links = (LinkRate(3, 1e9, 1e9),)
    assert pair_rates(PLACE, links, 3) is None  # only through the switch
    assert pair_rates(GpuPlace(5, "x"), links, 0) is None  # no NVLink at all


def test_a_first_reading_has_no_rates_yet() -> None:
    first = (LinkRate(0), LinkRate(1, 10.0, None))
    assert pair_rates(PLACE, first, 1) == (10.0, None)
    assert pair_rates(PLACE, (), 1) == (None, None)  # joined, rates not read
