"""Processes on the GPUs: who they are, their container or job, their host memory, and signals sent
to them.
"""
