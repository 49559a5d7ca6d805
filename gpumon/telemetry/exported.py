"""One table of the Prometheus series gpumon exports and reads back: the exporter writes
them (exporter.py) and the cluster view reads them from any exporter (prometheus.py), so a
metric added here is both sent and understood.

Names, units and help texts of the ``DCGM_FI_*`` rows are dcgm-exporter's own
(``etc/default-counters.csv``), so a dashboard written for dcgm-exporter reads gpumon's
exporter. What dcgm-exporter lacks is under ``gpumon_``, in base units (Prometheus's naming
guide).
"""

from __future__ import annotations

from dataclasses import dataclass

from gpumon.units import MIB


@dataclass(frozen=True, slots=True)
class Field:
    """One exported gauge: its name, help text, the GpuSample field and the scale to its unit."""

    name: str
    help: str
    key: str  # a GpuSample field name
    scale: float = 1.0  # exported value = sample value / scale


# dcgm-exporter's default counters that NVML gives us, with dcgm-exporter's help texts.
DCGM_FIELDS: tuple[Field, ...] = (
    Field("DCGM_FI_DEV_SM_CLOCK", "SM clock frequency (in MHz).", "sm_clock_mhz"),
    Field("DCGM_FI_DEV_MEM_CLOCK", "Memory clock frequency (in MHz).", "mem_clock_mhz"),
    Field("DCGM_FI_DEV_GPU_TEMP", "GPU temperature (in C).", "temperature_c"),
    Field("DCGM_FI_DEV_POWER_USAGE", "Power draw (in W).", "power_w"),
    Field("DCGM_FI_DEV_GPU_UTIL", "GPU utilization (in %).", "gpu_util_pct"),
    Field("DCGM_FI_DEV_MEM_COPY_UTIL", "Memory utilization (in %).", "mem_util_pct"),
    Field("DCGM_FI_DEV_ENC_UTIL", "Encoder utilization (in %).", "encoder_util_pct"),
    Field("DCGM_FI_DEV_DEC_UTIL", "Decoder utilization (in %).", "decoder_util_pct"),
    Field("DCGM_FI_DEV_FB_FREE", "Framebuffer memory free (in MiB).", "mem_free_bytes", MIB),
    Field("DCGM_FI_DEV_FB_USED", "Framebuffer memory used (in MiB).", "mem_used_bytes", MIB),
)
# What dcgm-exporter does not export by default, in base units.
GPUMON_FIELDS: tuple[Field, ...] = (
    Field("gpumon_memory_total_bytes", "Device memory the driver reports (bytes).",
          "mem_total_bytes"),
    Field("gpumon_power_limit_watts", "Enforced power limit (W).", "power_limit_w"),
    Field("gpumon_fan_speed_percent", "Fan speed as a share of its maximum (%).", "fan_pct"),
    Field("gpumon_pcie_rx_bytes_per_second", "PCIe receive throughput (bytes/s).",
          "pcie_rx_bytes_per_s"),
    Field("gpumon_pcie_tx_bytes_per_second", "PCIe transmit throughput (bytes/s).",
          "pcie_tx_bytes_per_s"),
)
PSTATE = "gpumon_pstate"
LOST = "gpumon_gpu_lost"
NVML_UP = "gpumon_nvml_up"
PROCESS_MEMORY = "gpumon_process_gpu_memory_bytes"
LAST_READ = "gpumon_gpu_last_read_timestamp_seconds"
NVML_UP_HELP = "1 when the GPU driver (NVML) answers, else 0; the exporter's log says why."
PSTATE_HELP = "Performance state, 0 (P0, fastest) to 15."
LOST_HELP = "1 when the GPU stopped answering, else 0."
LAST_READ_HELP = ("When the GPU was last read (Unix time, seconds); it stops advancing while "
                  "the driver does not answer or the GPU is lost.")

# What the cluster view reads back: Prometheus metric -> (GpuSample field, factor to the
# field's unit). Every exported field, plus the P-state and the lost mark.
READ_BACK: dict[str, tuple[str, float]] = {
    **{f.name: (f.key, f.scale) for f in DCGM_FIELDS + GPUMON_FIELDS},
    PSTATE: ("pstate", 1.0),
    LOST: ("lost", 1.0),
}
