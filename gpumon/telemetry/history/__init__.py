"""What gpumon keeps over time: per-GPU rings, per-process series, memory bands, decimation, CSV
rows and recording.
"""
