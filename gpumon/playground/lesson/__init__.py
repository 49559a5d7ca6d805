"""The GPU-computing lesson: its steps, its glossary, and the runner that plays a step."""
