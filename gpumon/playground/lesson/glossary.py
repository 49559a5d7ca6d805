"""The lesson's glossary: the words it uses, each with a one-line meaning (no torch, no Qt).

In English a learner reads each term with its meaning. In another language each term, in
that language, is paired with the English word torch's messages and documentation use: the
word to search for when something goes wrong. Terms and meanings are catalogue messages,
translated where they are shown (:func:`rows`).
"""

from __future__ import annotations

from dataclasses import dataclass

from gpumon import i18n
from gpumon.i18n import N_, tr


@dataclass(frozen=True)
class Term:
    """One entry: ``term`` (a message, English as torch writes it) and what it means here."""

    term: str
    meaning: str


GLOSSARY: tuple[Term, ...] = (
    Term(N_("tensor"),
         N_("an array of numbers with a shape, a dtype and a device: what PyTorch computes "
            "with")),
    Term(N_("device"),
         N_("where a tensor's data is kept and its operations run: cpu, cuda:0, cuda:1, … "
            "(and meta, which keeps no data)")),
    Term(N_("host memory"),
         N_("the main memory (RAM) of the host, the CPU side of the machine; CPU tensors "
            "live there")),
    Term(N_("GPU memory"),
         N_("the GPU's own memory, also called device memory; cuda tensors live there, and "
            "nvidia-smi shows how much is used")),
    Term(N_("driver"),
         N_("the NVIDIA driver: the system software every program reaches the GPU through; "
            "nvidia-smi is its report")),
    Term(N_("CUDA context"),
         N_("what the driver sets up for a process on a GPU at its first CUDA operation; it "
            "holds GPU memory until the process exits")),
    Term(N_("caching allocator"),
         N_("PyTorch's manager of GPU memory: it keeps freed blocks to reuse them instead of "
            "handing them back to the driver")),
    Term(N_("allocated / reserved"),
         N_("memory_allocated counts what tensors occupy; memory_reserved counts all the "
            "caching allocator holds, its cache included")),
    Term(N_("CUDA kernel"),
         N_("a function that runs on the GPU; each operation on a cuda tensor launches one "
            "or more, except views (view, t(), slicing), which only describe the same memory "
            "anew and launch none (not gpumon's playground kernel, which is a process)")),
    Term(N_("asynchronous"),
         N_("a CUDA operation queues its work and returns before the GPU has done it")),
    Term(N_("synchronize"),
         N_("wait until the GPU has finished the work queued so far: "
            "torch.cuda.synchronize() waits for all the streams of the device; .item(), "
            ".tolist() and printing a GPU tensor wait for the current stream")),
    Term(N_("stream"),
         N_("a queue of GPU work that runs in order; PyTorch puts its work on the current "
            "stream of each device unless told otherwise")),
    Term(N_("host-to-device copy"),
         N_("copying a tensor from host memory to GPU memory (.to(device), .cuda()); "
            "device-to-host is the way back (.cpu(), .item())")),
    Term(N_("utilization"),
         N_("the share of the last sample period in which at least one kernel was running, "
            "not the share of the GPU's cores in use")),
    Term(N_("parameters"),
         N_("a model's weights and biases: tensors too, each on a device; net.to(device) "
            "moves them")),
    Term(N_("out of memory"),
         N_("torch.OutOfMemoryError: the caching allocator could not get the GPU memory it "
            "asked for")),
    Term(N_("meta device"),
         N_("a device that keeps shapes and dtypes but no data; where PyTorch sees no CUDA "
            "GPU, this lesson uses it to show the device rules (with a GPU it does not appear)")),
)


def shows_english() -> bool:
    """Whether the English word gets a column of its own: in every language but English."""
    return i18n.language() != i18n.ENGLISH


def rows() -> list[tuple[str, str, str]]:
    """Each entry as (the term in the language in use, the English word, its meaning)."""
    return [(tr(t.term), t.term, tr(t.meaning)) for t in GLOSSARY]


def headings() -> tuple[str, str, str]:
    """The column headings of :func:`rows`."""
    return tr("Term"), tr("English word"), tr("Meaning")


__all__ = ["GLOSSARY", "Term", "headings", "rows", "shows_english"]
