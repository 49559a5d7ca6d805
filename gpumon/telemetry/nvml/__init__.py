"""Reading NVIDIA GPUs through NVML: the only room of gpumon that imports ``pynvml``."""
