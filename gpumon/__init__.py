"""gpumon: a live desktop monitor for NVIDIA GPUs with a PyTorch device playground."""

__version__ = "0.1.0"
