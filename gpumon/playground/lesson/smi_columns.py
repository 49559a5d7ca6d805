"""Step 1's key to the columns of nvidia-smi's output that the narration does not explain, one
line each: those of the book's output and those a recent driver adds (MIG M., GI and CI ID).
Catalogue messages, translated where they are shown."""

from __future__ import annotations

from gpumon.i18n import N_, tr

#: (the column as nvidia-smi labels it, what it means).
SMI_COLUMNS: tuple[tuple[str, str], ...] = (
    ("Persistence-M", N_("persistence mode. On keeps the driver loaded while no program uses "
                         "the GPU, so the next program starts sooner")),
    ("Disp.A", N_("display active, whether a monitor is driven by this GPU")),
    ("Volatile Uncorr. ECC", N_("memory errors that error correction could not fix since the "
                                "driver loaded; N/A where the GPU has no ECC")),
    ("Fan", N_("the fan's speed, as a share of its maximum; N/A where the GPU has no fan of "
               "its own, as on data-centre GPUs, which the server's fans cool")),
    ("Perf", N_("performance state, from P0 (full speed) to P12 (least power); an idle "
                "desktop GPU drops to a higher number such as P8, while data-centre GPUs "
                "often stay at P0 (measured on an idle H200: P0, 116 W, 0%)")),
    ("Compute M.", N_("compute mode. Default lets several processes share the GPU, "
                      "Exclusive_Process lets one, Prohibited none")),
    ("MIG M.", N_("Multi-Instance GPU mode: Enabled splits a data-centre GPU (A100, H100, "
                  "H200, ...) into as many as seven smaller GPUs, each with its own memory; "
                  "Disabled where it is off, N/A where the GPU cannot")),
    ("Type", N_("in the process table, C is a compute process (CUDA, such as Python with "
                "PyTorch), G a graphics one (Xorg, a desktop), C+G both")),
    ("GI ID, CI ID", N_("in the process table, the GPU instance and the compute instance a "
                        "process runs in when MIG is enabled; N/A otherwise")),
)


def column_lines() -> list[str]:
    """Each column and its meaning, one line each, in the language in use."""
    return [tr("{column}: {meaning}", column=name, meaning=tr(meaning))
            for name, meaning in SMI_COLUMNS]


def heading() -> str:
    return tr("The other columns of nvidia-smi's output:")


__all__ = ["SMI_COLUMNS", "column_lines", "heading"]
