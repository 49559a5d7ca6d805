"""The values that carry GPU telemetry, and the tables and facts every view shares: types, metrics,
the exported-series table, health, readouts, cadence. No I/O.
"""
