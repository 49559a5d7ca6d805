"""Plain resource files (icon, desktop entry), installed as gpumon.resources."""
