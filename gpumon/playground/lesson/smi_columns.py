"""Step 1's key to nvidia-smi's columns that the book's output shows and its text does not
explain, one line each (catalogue messages, translated where they are shown)."""

from __future__ import annotations

from gpumon.i18n import N_, tr

#: (the column as nvidia-smi labels it, what it means).
SMI_COLUMNS: tuple[tuple[str, str], ...] = (
    ("Persistence-M", N_("persistence mode. On keeps the driver loaded while no program uses "
                         "the GPU, so the next program starts sooner")),
    ("Disp.A", N_("display active, whether a monitor is driven by this GPU")),
    ("Volatile Uncorr. ECC", N_("memory errors that error correction could not fix since the "
                                "driver loaded; N/A where the GPU has no ECC")),
    ("Perf", N_("performance state, from P0 (full speed) to P12 (least power); an idle GPU "
                "drops to a high number")),
    ("Compute M.", N_("compute mode. Default lets several processes share the GPU, "
                      "Exclusive_Process lets one, Prohibited none")),
    ("Type", N_("in the process table, C is a compute process (CUDA, such as Python with "
                "PyTorch), G a graphics one (Xorg, a desktop), C+G both")),
)


def column_lines() -> list[str]:
    """Each column and its meaning, one line each, in the language in use."""
    return [tr("{column}: {meaning}", column=name, meaning=tr(meaning))
            for name, meaning in SMI_COLUMNS]


def heading() -> str:
    return tr("The columns of the book's nvidia-smi output:")


__all__ = ["SMI_COLUMNS", "column_lines", "heading"]
