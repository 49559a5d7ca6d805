"""Stands in for gpumon.playground.kernel.forkserver in a test: says what no fork server says
(a JSON list, an exit with no number), then waits to be ended."""

import os
import socket
import time

sock = socket.socket(fileno=int(os.environ["GPUMON_FORKSERVER_FD"]))
sock.send(b"[1, 2]")
sock.send(b'{"exit": "x", "code": null}')
time.sleep(60)
