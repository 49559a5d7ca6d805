"""The SSH transport, Qt-free and below telemetry and the playground: the user's own ``ssh``
as a child process (command.py), host names checked before anything runs (target.py), its
failures as sentences (diagnose.py), bounded reads and a sure end (link.py), reconnect
waits (backoff.py)."""
