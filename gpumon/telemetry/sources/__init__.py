"""The sources that are not NVML's (simulated GPUs) and the Sampler that reads any source."""
