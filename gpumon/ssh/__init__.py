"""The SSH transport, Qt-free and below telemetry and the playground: the user's own ``ssh``
as a child process, shared by the remote snapshot stream (``gpumon/remote``) and anything
else that runs gpumon on another machine (a playground kernel speaking frames on stdio).

- ``target.py``: ``[user@]host[:port]`` and host lists, refused before anything runs when a
  name could become an option or a shell word (TargetError, a sentence).
- ``command.py``: the ssh command line (BatchMode, keep-alive, ConnectTimeout, ``-F``, ``--``
  before the destination) and the remote command, gpumon's arguments quoted (shlex).
- ``link.py``: SshLink, one ssh child in a session of its own: bounded line reads
  (``read_line``) and byte reads (``read_some``), writes to the remote stdin (``write``),
  stderr kept (its tail), and an end within a second (``kill``/``close``: the process group).
- ``diagnose.py``: why ssh ended (stderr and exit status) as a Problem: a Kind a program can
  test, a sentence with what to do.
- ``backoff.py``: reconnect waits, doubling, capped, jittered, cut short by ``cancel()``.

    target = parse_target("alice@lab1")              # TargetError: nothing runs
    argv = ssh_argv(target, remote_command("gpumon", ["stream", "--interval", "1"]),
                    SshOptions(config_file=None), ssh_program(SshOptions()))
    link = SshLink.start(argv)
    try:
        line = link.read_line(timeout_s=3.0)          # None: nothing in time
    except LinkEnded as ended:                        # ssh exited: say why
        problem = diagnose(ended.stderr, ended.returncode, target.name)
    finally:
        link.close()
"""
