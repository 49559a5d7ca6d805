"""NVLink, the topology matrix, P2P and the affinities through the real nvidia-ml-py against
the fake NVML: an HGX board (NV18 everywhere), GPUs joined directly, GPUs without NVLink (as
the H200 without NVLink: NOT_SUPPORTED), and each link's rate from its counters."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pynvml
import pytest
from fakenvml import FakeNvml

from gpumon.telemetry.model.topology import Topology, bits_of, cpu_list, nvlink_path
from gpumon.telemetry.nvml.links import P2P_READ, TOPOLOGY_EVERY_S, LinkReader, bus_key
from gpumon.telemetry.nvml.source import NvmlSource
from gpumon.units import KIB


@pytest.fixture
def source() -> Iterator[NvmlSource]:
    s = NvmlSource()
    yield s
    s.close()


def topology_of(source: NvmlSource) -> Topology:
    source.open()
    topology = source.sample().topology
    assert topology is not None
    return topology


def test_an_hgx_board_is_nv18_between_every_pair(fake_nvml: FakeNvml,
                                                 source: NvmlSource) -> None:
    fake_nvml.use_scenario("hgx")
    t = topology_of(source)
    assert [p.index for p in t.places] == list(range(8))
    for i in range(8):
        assert t.paths[i][i] == "X" and t.p2p_read[i][i] == "X"
        assert all(t.paths[i][j] == "NV18" for j in range(8) if j != i)
        assert all(t.p2p_read[i][j] == "OK" for j in range(8) if j != i)
    p0, p4 = t.places[0], t.places[4]
    assert (p0.cpu_affinity, p0.numa_affinity, p0.numa_id) == ("0-47,96-143", "0", None)
    assert (p4.cpu_affinity, p4.numa_affinity) == ("48-95,144-191", "1")
    assert p0.links_total == 18 and len(p0.nvlinks) == 18
    assert {link.remote for link in p0.nvlinks} == {"switch"}
    assert {link.remote_bus_id for link in p0.nvlinks} == {
        f"00000000:0{k}:00.0" for k in (5, 6, 7, 8)}
    assert t.nvlinks_between(3, 6) == 18 and t.path(3, 6) == "NV18"


def test_gpus_joined_directly_count_their_links(fake_nvml: FakeNvml,
                                                source: NvmlSource) -> None:
    fake_nvml.set_gpu_count(4)
    gpu = pynvml.NVML_NVLINK_DEVICE_TYPE_GPU
    for link in range(4):  # GPUs 0 and 1: an NVLink bridge of four links
        fake_nvml.set_nvlink(0, link, "00000000:11:00.0", gpu)
        fake_nvml.set_nvlink(1, link, "0000:10:00.0", gpu)  # the legacy spelling
    fake_nvml.set_nvlink(0, 4, "00000000:11:00.0", gpu, active=False)  # down: not counted
    t = topology_of(source)
    assert t.path(0, 1) == t.path(1, 0) == "NV4"
    assert [link.remote_gpu for link in t.places[0].nvlinks] == [1, 1, 1, 1]
    assert t.places[0].links_total == 5
    assert t.path(2, 3) == "NODE" and t.path(1, 2) == "SYS"  # the fake's two NUMA nodes
    assert t.places[2].nvlinks == () and t.places[2].links_total is None


def test_gpus_without_nvlink_have_pcie_paths_and_no_rates(fake_nvml: FakeNvml,
                                                          source: NvmlSource) -> None:
    fake_nvml.set_gpu_count(4)
    fake_nvml.set_topology(0, 1, pynvml.NVML_TOPOLOGY_SINGLE)
    fake_nvml.set_topology(0, 2, pynvml.NVML_TOPOLOGY_MULTIPLE,
                           pynvml.NVML_P2P_STATUS_IOH_TOPOLOGY_NOT_SUPPORTED)
    fake_nvml.set_topology(0, 3, pynvml.NVML_TOPOLOGY_HOSTBRIDGE,
                           pynvml.NVML_P2P_STATUS_DISABLED_BY_REGKEY)
    fake_nvml.set_affinity(3, 1, "8,10-11", numa_id=5)
    t = topology_of(source)
    assert t.paths[0] == ("X", "PIX", "PXB", "PHB")
    assert t.p2p_read[0] == ("X", "OK", "TNS", "DIS")
    assert t.paths[1][2] == "SYS" and t.p2p_read[1][2] == "NS"  # unscripted pairs
    assert (t.places[3].cpu_affinity, t.places[3].numa_affinity, t.places[3].numa_id) == (
        "8,10-11", "1", 5)
    s = source.sample().samples[0]
    assert s.nvlink_links == () and s.nvlink_rx_bytes_per_s is None


def test_link_rates_come_from_the_counters(fake_nvml: FakeNvml, source: NvmlSource) -> None:
    fake_nvml.set_gpu_count(2)
    fake_nvml.set_nvlink(0, 0, "00000000:11:00.0", pynvml.NVML_NVLINK_DEVICE_TYPE_GPU,
                         rx_kib_s=1000.0, tx_kib_s=3000.0)
    fake_nvml.set_nvlink(0, 1, "00000000:11:00.0", pynvml.NVML_NVLINK_DEVICE_TYPE_GPU,
                         rx_kib_s=500.0, tx_kib_s=0.0)
    source.open()
    first = source.sample().samples[0]
    assert [(r.link, r.rx_bytes_per_s) for r in first.nvlink_links] == [(0, None), (1, None)]
    time.sleep(0.2)
    s = source.sample().samples[0]
    (l0, l1) = s.nvlink_links
    assert l0.rx_bytes_per_s == pytest.approx(1000.0 * KIB, rel=0.05)
    assert l0.tx_bytes_per_s == pytest.approx(3000.0 * KIB, rel=0.05)
    assert l1.rx_bytes_per_s == pytest.approx(500.0 * KIB, rel=0.05)
    assert l1.tx_bytes_per_s == 0.0
    # no GPM on this GPU: the totals are the links' sum
    assert s.nvlink_rx_bytes_per_s == pytest.approx(1500.0 * KIB, rel=0.05)
    assert s.nvlink_tx_bytes_per_s == pytest.approx(3000.0 * KIB, rel=0.05)


def test_the_topology_is_read_again_only_when_due(fake_nvml: FakeNvml,
                                                  source: NvmlSource) -> None:
    fake_nvml.set_gpu_count(2)
    source.open()
    clock = [0.0]
    reader = LinkReader(clock=lambda: clock[0])
    gpus = [(i, pynvml.nvmlDeviceGetHandleByIndex(i), f"00000000:{0x10 + i:02X}:00.0")
            for i in (0, 1)]
    assert reader.due()
    assert reader.read_topology(source, gpus).path(0, 1) == "SYS"
    clock[0] = TOPOLOGY_EVERY_S - 1
    assert not reader.due()
    clock[0] = TOPOLOGY_EVERY_S
    assert reader.due()


def test_a_lost_gpu_has_an_unknown_row(fake_nvml: FakeNvml, source: NvmlSource) -> None:
    fake_nvml.set_gpu_count(2)
    source.open()
    reader = LinkReader()
    gpus = [(0, pynvml.nvmlDeviceGetHandleByIndex(0), "00000000:10:00.0"),
            (1, None, "00000000:11:00.0")]  # lost: no handle
    t = reader.read_topology(source, gpus)
    assert t.paths == (("X", ""), ("", "X")) and t.p2p_read[0][1] == ""
    assert t.places[1].cpu_affinity is None


def test_p2p_is_asked_with_index_0_not_the_bindings_tuple() -> None:
    assert pynvml.NVML_P2P_CAPS_INDEX_READ == (0,)  # "= 0," in the binding: a tuple
    assert P2P_READ == 0


def test_helpers() -> None:
    assert cpu_list([0, 1, 2, 3, 5, 96, 97]) == "0-3,5,96-97"
    assert cpu_list([]) == ""
    assert bits_of([0b1011, 1]) == [0, 1, 3, 64]
    assert nvlink_path(4, 0, 18) == 4 and nvlink_path(0, 18, 12) == 12
    assert bus_key("00000000:1A:00.0") == bus_key("0000:1a:00.0") != bus_key("0001:1a:00.0")
