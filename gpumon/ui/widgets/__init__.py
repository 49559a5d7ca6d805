"""Generic Qt pieces the monitor, the playground and the window share: plots, curves, axes, labels,
tables, theme, visibility and screen fit.
"""
