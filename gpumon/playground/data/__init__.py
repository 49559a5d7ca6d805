"""Plain data both the window and the kernel use: actions, outcomes, errors, devices, the
wire format. Never imports torch or Qt."""
