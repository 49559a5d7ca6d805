"""The lesson's view: the GPU-computing lesson one step at a time."""
