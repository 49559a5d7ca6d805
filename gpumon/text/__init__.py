"""Snapshots as text for terminals and files: the nvidia-smi box, the ``-q`` detail and the JSON
document. Qt-free.
"""
