"""The process table, its filter pane, its actions (signals) and each process's own window."""
