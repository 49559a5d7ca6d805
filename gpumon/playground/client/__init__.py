"""The window's side of the kernel: starting it, sending requests, Stop, and its exit."""
