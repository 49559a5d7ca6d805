"""One table of the Prometheus series gpumon exports and reads back: the exporter writes
them (exporter.py) and the cluster view reads them from any exporter (prometheus.py), so a
metric added here is both sent and understood.

Names, types, units and help texts of the ``DCGM_FI_*`` rows are dcgm-exporter's own, from
NVIDIA/dcgm-exporter ``etc/default-counters.csv`` (read at commits 00d6d344 and b54068a9) and
``etc/dcp-metrics-included.csv`` (at 084a245d and 99a774bb)
(the latter adds ``DCGM_FI_DEV_FB_RESERVED`` and the ``DCGM_FI_DRIVER_VERSION`` label; both
list the ECC and retired-page counters commented out, with these help texts). The two clock
event reason names and ``DCGM_FI_DEV_ROW_REMAP_PENDING`` are in neither file; their help texts
are DCGM's field descriptions (dcgm_fields.h). So a dashboard or alert written for
dcgm-exporter reads gpumon's exporter. What dcgm-exporter lacks is under ``gpumon_``, in base
units (Prometheus's naming guide).

The profiling (DCP) rows, ``PROF_FIELDS``: dcgm-exporter's ``default-counters.csv`` (4.8.3)
sends five of them by default (GR_ENGINE_ACTIVE, PIPE_TENSOR_ACTIVE, DRAM_ACTIVE, PCIE_TX_BYTES and
PCIE_RX_BYTES, under "# Datacenter Profiling (DCP) metrics") and lists SM_ACTIVE, SM_OCCUPANCY
and the FP pipes commented out, with the help texts of dcp-metrics-included.csv at 99a774bb
(ratios 0-1; PCIe in bytes per second, as gauges). The NVLink bytes and the IMMA/HMMA/DFMA
tensor ratios are in neither file: their texts are DCGM's (dcgm_fields.h; NVLink as
dcgm-exporter's older dcp list words it). gpumon computes them from GPM (Hopper and newer) and
sends them only for a GPU whose activity it read: no series, never 0, for another GPU.
``DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL`` (field 449, an alias of NVLINK_THROUGHPUT_TOTAL) is what
DCGM computes from NVML's NVLink data counters: (tx + rx KiB/s) / 1000, its "MiB/s", typed a
gauge as that file types it. dcgm-exporter has also renamed its host label ``Hostname`` to
``hostname`` (its pull request 655): gpumon sends ``hostname``, its cluster view reads both.
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
    kind: str = "gauge"  # or "counter", as dcgm-exporter types it (the name has no _total)
    gpm: bool = False  # sent only while the GPU's activity (GPM) is read


# What gpumon reads less often than every reading says so after the help text (the reading
# budget, nvml/budget.py and nvml/pcie.py; figures of an H200, driver 580.159.04).
SELDOM_ENERGY = ("Read less often than the other values where the driver's call is costly "
                 "(3.3 ms of CPU on an H200: every ~14 s, at most every 30 s); the last value "
                 "read is sent in between.")
SELDOM_PCIE = ("Where the GPU has GPM (Hopper and newer, without --no-gpm): GPM's rate between "
               "two readings, read at every reading. Elsewhere as NVML measures it over 20 ms; "
               "read every few seconds (the slow readings), off the reading's thread where the "
               "call sleeps, so it may be one period old.")

# dcgm-exporter's default counters that NVML gives us, with dcgm-exporter's help texts
# (followed by gpumon's sentence where gpumon reads the value less often).
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
    # dcp-metrics-included.csv
    Field("DCGM_FI_DEV_FB_RESERVED", "Framebuffer memory reserved (in MiB).",
          "mem_reserved_bytes", MIB),
    # default-counters.csv, "# Temperature" and "# Power"
    Field("DCGM_FI_DEV_MEMORY_TEMP", "Memory temperature (in C).", "mem_temperature_c"),
    Field("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
          "Total energy consumption since boot (in mJ)." + " " + SELDOM_ENERGY, "energy_mj",
          kind="counter"),
    # default-counters.csv, "# PCIE"
    Field("DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "Total number of PCIe retries.",
          "pcie_replay_count", kind="counter"),
    # DCGM field 112 (DCGM_FI_DEV_CLOCKS_EVENT_REASONS, formerly
    # DCGM_FI_DEV_CLOCK_THROTTLE_REASONS): NVML's bitmask as it is
    Field("DCGM_FI_DEV_CLOCKS_EVENT_REASONS",
          "Current clock event reasons (bitmask of DCGM_CLOCKS_EVENT_REASON_*)",
          "clocks_event_reasons"),
    Field("DCGM_FI_DEV_CLOCK_THROTTLE_REASONS",
          "Current clock throttle reasons (bitmask of DCGM_CLOCKS_THROTTLE_REASON_*)",
          "clocks_event_reasons"),
    # "# ECC" (commented out in both files: dcgm-exporter sends them when enabled)
    Field("DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", "Total number of single-bit volatile ECC errors.",
          "ecc_corrected_volatile", kind="counter"),
    Field("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "Total number of double-bit volatile ECC errors.",
          "ecc_uncorrected_volatile", kind="counter"),
    Field("DCGM_FI_DEV_ECC_SBE_AGG_TOTAL", "Total number of single-bit persistent ECC errors.",
          "ecc_corrected_aggregate", kind="counter"),
    Field("DCGM_FI_DEV_ECC_DBE_AGG_TOTAL", "Total number of double-bit persistent ECC errors.",
          "ecc_uncorrected_aggregate", kind="counter"),
    # "# Retired pages" (dcp-metrics-included.csv sends SBE and DBE)
    Field("DCGM_FI_DEV_RETIRED_SBE", "Total number of retired pages due to single-bit errors.",
          "retired_pages_sbe", kind="counter"),
    Field("DCGM_FI_DEV_RETIRED_DBE", "Total number of retired pages due to double-bit errors.",
          "retired_pages_dbe", kind="counter"),
    Field("DCGM_FI_DEV_RETIRED_PENDING", "Total number of pages pending retirement.",
          "retired_pages_pending", kind="counter"),
    # "# Remapped rows"; ROW_REMAP_PENDING is DCGM field 396
    Field("DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS",
          "Number of remapped rows for uncorrectable errors", "remapped_rows_uncorrectable",
          kind="counter"),
    Field("DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS",
          "Number of remapped rows for correctable errors", "remapped_rows_correctable",
          kind="counter"),
    Field("DCGM_FI_DEV_ROW_REMAP_FAILURE", "Whether remapping of rows has failed",
          "remap_failure"),
    Field("DCGM_FI_DEV_ROW_REMAP_PENDING", "Whether remapping of rows is pending",
          "remap_pending"),
)

def _ratio(name: str, help_text: str, key: str) -> Field:
    """A DCP ratio, 0-1, from a GPM percentage."""
    return Field(name, help_text, key, 100.0, gpm=True)


# dcgm-exporter's DCP (profiling) fields, from GPM; see the module docstring.
PROF_FIELDS: tuple[Field, ...] = (
    _ratio("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "Ratio of time the graphics engine is active.",
           "graphics_active_pct"),
    _ratio("DCGM_FI_PROF_SM_ACTIVE", "The ratio of cycles an SM has at least 1 warp assigned.",
           "sm_active_pct"),
    _ratio("DCGM_FI_PROF_SM_OCCUPANCY", "The ratio of number of warps resident on an SM.",
           "sm_occupancy_pct"),
    _ratio("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "Ratio of cycles the tensor (HMMA) pipe is active.",
           "tensor_active_pct"),
    _ratio("DCGM_FI_PROF_DRAM_ACTIVE", "Ratio of cycles the device memory interface is active "
           "sending or receiving data.", "dram_active_pct"),
    _ratio("DCGM_FI_PROF_PIPE_FP64_ACTIVE", "Ratio of cycles the fp64 pipes are active.",
           "fp64_active_pct"),
    _ratio("DCGM_FI_PROF_PIPE_FP32_ACTIVE", "Ratio of cycles the fp32 pipes are active.",
           "fp32_active_pct"),
    _ratio("DCGM_FI_PROF_PIPE_FP16_ACTIVE", "Ratio of cycles the fp16 pipes are active.",
           "fp16_active_pct"),
    Field("DCGM_FI_PROF_PCIE_TX_BYTES", "The rate of data transmitted over the PCIe bus - "
          "including both protocol headers and data payloads - in bytes per second.",
          "pcie_tx_bytes_per_s", gpm=True),
    Field("DCGM_FI_PROF_PCIE_RX_BYTES", "The rate of data received over the PCIe bus - "
          "including both protocol headers and data payloads - in bytes per second.",
          "pcie_rx_bytes_per_s", gpm=True),
    Field("DCGM_FI_PROF_NVLINK_TX_BYTES", "The number of bytes of active NvLink tx (transmit) "
          "data including both header and payload.", "nvlink_tx_bytes_per_s", gpm=True),
    Field("DCGM_FI_PROF_NVLINK_RX_BYTES", "The number of bytes of active NvLink rx (read) "
          "data including both header and payload.", "nvlink_rx_bytes_per_s", gpm=True),
    _ratio("DCGM_FI_PROF_PIPE_TENSOR_IMMA_ACTIVE", "The ratio of cycles the tensor (IMMA) pipe "
           "is active (off the peak sustained elapsed cycles)", "tensor_imma_active_pct"),
    _ratio("DCGM_FI_PROF_PIPE_TENSOR_HMMA_ACTIVE", "The ratio of cycles the tensor (HMMA) pipe "
           "is active (off the peak sustained elapsed cycles)", "tensor_hmma_active_pct"),
    _ratio("DCGM_FI_PROF_PIPE_TENSOR_DFMA_ACTIVE", "The ratio of cycles the tensor (DFMA) pipe "
           "is active (off the peak sustained elapsed cycles)", "tensor_dfma_active_pct"),
)
# default-counters.csv, "# NVLink": every GPU with active NVLinks, from the links' counters
# (the sum of nvlink_links' rates, in DCGM's unit: KiB/s / 1000; not read back).
NVLINK_BANDWIDTH = Field("DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL",
                         "Total number of NVLink bandwidth counters for all lanes.",
                         "nvlink_links", 1024.0 * 1000.0)
# default-counters.csv, "# Errors and violations": the last XID code, with dcgm-exporter's
# err_code and err_msg labels (err_msg: the code's meaning from gpumon's XID table, English).
XID_ERRORS = Field("DCGM_FI_DEV_XID_ERRORS", "Value of the last XID error encountered.",
                   "xid_last")
XID_LABELS = ("err_code", "err_msg")
# dcp-metrics-included.csv: "Static configuration information. These appear as labels on the
# other metrics"
DRIVER_LABEL = "DCGM_FI_DRIVER_VERSION"
# What dcgm-exporter does not export by default, in base units.
GPUMON_FIELDS: tuple[Field, ...] = (
    Field("gpumon_memory_total_bytes", "Device memory the driver reports (bytes).",
          "mem_total_bytes"),
    Field("gpumon_power_limit_watts", "Enforced power limit (W).", "power_limit_w"),
    Field("gpumon_fan_speed_percent", "Fan speed as a share of its maximum (%).", "fan_pct"),
    Field("gpumon_pcie_rx_bytes_per_second", "PCIe receive throughput (bytes/s). " + SELDOM_PCIE,
          "pcie_rx_bytes_per_s"),
    Field("gpumon_pcie_tx_bytes_per_second", "PCIe transmit throughput (bytes/s). " + SELDOM_PCIE,
          "pcie_tx_bytes_per_s"),
    Field("gpumon_nvlink_rx_bytes_per_second", "NVLink data received, all links (bytes/s).",
          "nvlink_rx_bytes_per_s"),
    Field("gpumon_nvlink_tx_bytes_per_second", "NVLink data sent, all links (bytes/s).",
          "nvlink_tx_bytes_per_s"),
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
# field's unit). Every exported field (not NVLINK_BANDWIDTH, a sum of two: the PROF and
# gpumon_ NVLink series give each side), plus the P-state and the lost mark.
READ_BACK: dict[str, tuple[str, float]] = {
    **{f.name: (f.key, f.scale) for f in DCGM_FIELDS + PROF_FIELDS + GPUMON_FIELDS},
    XID_ERRORS.name: (XID_ERRORS.key, 1.0),
    PSTATE: ("pstate", 1.0),
    LOST: ("lost", 1.0),
}
