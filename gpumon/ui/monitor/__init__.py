"""The monitor's views: the GPU grid and panels, their plots, the two tables and the header."""
