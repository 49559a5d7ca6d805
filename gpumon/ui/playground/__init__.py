"""The playground's views: action forms, the outcome log, the link to the monitor's graphs,
and the worker that runs the engine off the GUI thread."""
