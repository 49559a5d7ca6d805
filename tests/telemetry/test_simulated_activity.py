"""The simulated GPUs' activity and topology: a Hopper GPU reads like one (a training phase
like the H200 under a matmul), another model says it has no GPM, --no-gpm turns it off, and
every Snapshot is still labelled simulated."""

from __future__ import annotations

from gpumon.telemetry.model.activity import ActivityState
from gpumon.telemetry.model.metrics import ACTIVITY_KEYS
from gpumon.telemetry.sources.simulated import SimulatedSource
from gpumon.telemetry.sources.simulated_activity import activity, has_gpm


def snapshot(n: int = 2, **kw: object):
    clock = [1000.0]
    source = SimulatedSource(n_gpus=n, clock=lambda: clock[0], **kw)  # type: ignore[arg-type]
    source.open()
    clock[0] += 30.0
    return source.sample()


def test_a_hopper_gpu_has_activity_and_another_says_why_not() -> None:
    snap = snapshot(2)
    assert snap.simulated and [g.name for g in snap.gpus] == [
        "NVIDIA GeForce RTX 4090", "NVIDIA H100 80GB HBM3"]
    desk, hopper = snap.samples
    assert desk.activity_state is ActivityState.UNSUPPORTED
    assert all(getattr(desk, key) is None for key in ACTIVITY_KEYS)
    assert hopper.activity_state is ActivityState.READING
    for key in ("graphics_active_pct", "sm_active_pct", "sm_occupancy_pct",
                "tensor_active_pct", "dram_active_pct", "fp32_active_pct"):
        value = getattr(hopper, key)
        assert value is not None and 0.0 <= value <= 100.0, key
    assert hopper.sm_active_pct is not None and hopper.gpu_util_pct is not None
    assert hopper.sm_active_pct <= hopper.gpu_util_pct  # SMs busy within the time busy
    assert hopper.nvlink_rx_bytes_per_s is None  # no NVLink in this machine


def test_a_training_phase_looks_like_the_h200_under_a_matmul() -> None:
    got = activity("NVIDIA H100 80GB HBM3", "training", 100.0, 0.0, gpm=True)
    assert got["activity_state"] is ActivityState.READING
    assert (got["sm_active_pct"], got["sm_occupancy_pct"], got["dram_active_pct"]) == (
        96.4, 14.3, 16.6)
    assert got["tensor_active_pct"] == got["tensor_hmma_active_pct"] == 93.6
    idle = activity("NVIDIA H100 80GB HBM3", "idle", 0.0, 0.0, gpm=True)
    assert idle["sm_active_pct"] == idle["sm_occupancy_pct"] == 0.0  # a real idle 0


def test_no_gpm_turns_the_activity_off() -> None:
    hopper = snapshot(2, gpm=False).samples[1]
    assert hopper.activity_state is ActivityState.OFF and hopper.sm_active_pct is None
    assert not has_gpm("NVIDIA A100-SXM4-80GB") and has_gpm("NVIDIA H200")


def test_the_simulated_machine_has_a_pcie_topology() -> None:
    snap = snapshot(4)
    t = snap.topology
    assert t is not None and [p.index for p in t.places] == [0, 1, 2, 3]
    assert t.paths[0] == ("X", "NODE", "SYS", "SYS") and t.p2p_read[3][2] == "OK"
    assert t.places[2].cpu_affinity == "16-31" and t.places[2].numa_affinity == "1"


def test_a_snapshot_with_activity_and_topology_crosses_the_kernels_wire() -> None:
    """The lesson's requests carry a Snapshot to the kernel: its activity states, link rates
    and topology are gpumon's own values, which the wire's unpickler accepts."""
    import io

    from gpumon.playground.data.wire import encode_frame, read_frame

    snap = snapshot(2)
    back = read_frame(io.BytesIO(encode_frame(snap)))
    assert back.samples[1].activity_state is ActivityState.READING
    assert back.topology == snap.topology and back.samples == snap.samples
