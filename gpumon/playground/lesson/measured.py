"""Figures measured on a real GPU, for the steps whose point is a number.

A step's narration says only what holds on every machine; what a GPU measured goes here,
each text with the machine it was measured on (``MEASURED_ON``), and is printed after the
step's own results, labelled, on every machine: a student without a GPU reads what one
showed, a student with one compares. Every figure here was measured; none is an expectation.
The code of the steps prints its own figures at run time, ratios included.
Catalogue messages (``N_``), translated where they are shown. No torch import.
"""

from __future__ import annotations

from gpumon.i18n import N_

#: The machine the figures below were measured on (one GPU).
H200 = N_("Measured on an NVIDIA H200 (driver 580.159.04, torch 2.11.0+cu130):")

MEMORY = N_(
    "the CUDA context took about 610 MiB after the first copy to the GPU, and about 678 MiB "
    "once the first matrix product had loaded cuBLAS. del took allocated from 96.01 to 32.01 "
    "MiB, cuBLAS's workspace left, while reserved stayed at 98.00 MiB; empty_cache() lowered "
    "reserved to 34 MiB.")

ASYNCHRONOUS = N_(
    "20 back-to-back 4096 x 4096 float32 products returned after 0.48 to 0.54 ms (1.63 ms the"
    " first time), and their work was done at 53.6 to 53.7 ms: the calls returned in about a "
    "hundredth of the time the work took.")

#: The Linear(100, 1) figures are totals of three runs of 100 steps: 224.1 ms / 300 = 0.75 ms.
ITEM_EVERY_STEP = N_(
    "100 training steps of the Linear(2048, 2048) on a batch of 2048 took 89.0 to 92.5 ms with "
    ".item() at every step against 77.9 ms with one copy at the end: slower by 14% to 19%. A "
    "Linear(100, 1) on a batch of 256 was slower by only 7%, 0.80 against 0.75 ms a step: a step "
    "that small is bound by the CPU launching its CUDA kernels, not by the GPU.")

TIMING = N_(
    "the 1000 x 1000 product took 67.9 µs on the GPU against 1970.9 µs on 16 CPU threads, 29 "
    "times as fast; the 10 x 10 one 9.8 µs against 1.9 µs, 5 times as long. An 8192 x 8192 "
    "product ran at 51 TFLOP/s in float32, 414 with TF32 and 790 in bf16, of 67, 495 and 989 "
    "on the datasheet: by default, float32 leaves the tensor cores idle.")

BUSY = N_(
    "bf16 8192 x 8192 products showed GPU-Util 100%, graphics activity 100%, SM activity "
    "96.4%, occupancy 14.3%, tensor activity 93.6% and DRAM 16.6%, at 691 W of the 700 W power "
    "cap. 10 x 10 products in a Python loop showed GPU-Util 36%, SM activity 0.24%, tensor and "
    "DRAM 0.")

#: What step 16 (timing) says in its "More": the H200's figures behind bf16's speed.
COMPUTE_BOUND = N_(
    "On the H200 the product was compute-bound (DRAM 16.6 %, the next step shows): bf16 beat TF32 "
    "because the tensor cores' bf16 peak is twice TF32's (989 against 495 TFLOP/s on the "
    "datasheet), not because it halves the bytes.")

#: Step 14's "More": the H200's out-of-memory error and cuBLAS's workspace.
MEMORY_MORE = N_(
    "On the H200, an out-of-memory error said the process had 712 MiB in use, 32 MiB of it "
    "allocated by PyTorch: the rest was the context and torch's cache. y = x @ x with a 4 MiB x "
    "took allocated from 4 to 40 MiB: the first product's cuBLAS workspace.")

#: Step 17's "More": the rest of the H200's readings.
BUSY_MORE = N_(
    "On the H200, the large products' clock event reason was SW power cap; their tensor "
    "activity was all the bf16 pipe (HMMA), the FP32 pipe 0, and PCIe carried 4.6 MiB/s out and "
    "12.8 MiB/s in. The tiny products showed occupancy 0.015 %, 119 W and no clock event reason. "
    "GPM read the activity over 0.5 s, nvidia-smi GPU-Util and the power; nvidia-smi dmon "
    "--gpm-metrics printed the same activity.")

__all__ = ["ASYNCHRONOUS", "BUSY", "BUSY_MORE", "COMPUTE_BOUND", "H200", "ITEM_EVERY_STEP",
           "MEMORY", "MEMORY_MORE", "TIMING"]
