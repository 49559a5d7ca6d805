"""How soon ``gpumon exporter``'s HTTP server answers a burst, and closes a stalled client.

1. **200 simultaneous scrapes**: 200 loopback connections each send GET /metrics at once;
   from the first connect to the last answer read whole (2 simulated GPUs). Target < 2 s.
2. **a head that never ends**: a client sends one line of a request and nothing more; from
   that line to the server's 408 (head timeout 0.5 s). Target: 0.5 s, under 3 s.

The tests (tests/telemetry/test_exporter_http.py) check what happens: every scrape answered
200, none refused, the stalled client answered 408.

Run from the repository root: ``python benchmarks/bench_http_burst.py [--rounds N]``.
"""

from __future__ import annotations

import argparse
import selectors
import socket
import statistics
import sys
import time
from contextlib import ExitStack
from functools import partial
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests" / "telemetry"))
sys.path.insert(0, str(REPO / "tests"))

from exporter_helpers import running  # noqa: E402
from machine import describe  # noqa: E402
from testkit import wait_until  # noqa: E402

from gpumon.telemetry.sources.simulated import SimulatedSource  # noqa: E402

SIMULATED = partial(SimulatedSource, n_gpus=2, seed=1)
SCRAPE = b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"


def burst(port: int, n: int) -> float:
    with ExitStack() as stack:
        socks = [stack.enter_context(socket.socket()) for _ in range(n)]
        start = time.perf_counter()
        for s in socks:
            s.connect(("127.0.0.1", port))
            s.sendall(SCRAPE)
        sel = stack.enter_context(selectors.DefaultSelector())
        for s in socks:
            s.setblocking(False)
            sel.register(s, selectors.EVENT_READ)
        done = 0
        while done < n:
            for key, _ in sel.select(timeout=10):
                if not key.fileobj.recv(65536):  # type: ignore[union-attr]
                    sel.unregister(key.fileobj)
                    done += 1
        return time.perf_counter() - start


def stalled_head(port: int) -> float:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        start = time.perf_counter()
        s.sendall(b"GET /metrics HTTP/1.1\r\n")
        answer = s.recv(65536)
        took = time.perf_counter() - start
        assert answer.startswith(b"HTTP/1.1 408"), answer[:40]
        return took


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    print(describe())
    with running(SIMULATED, head_timeout_s=0.5) as ex:
        wait_until(lambda: ex.get("/health")[0] == 200, 10, "the first reading")
        bursts = [burst(ex.server.port, 200) for _ in range(args.rounds)]
        heads = [stalled_head(ex.server.port) for _ in range(args.rounds)]
    b, h = statistics.median(bursts), statistics.median(heads)
    print(f"200 simultaneous scrapes, all answered: median {b * 1000:.0f} ms, worst "
          f"{max(bursts) * 1000:.0f} ms (target < 2000 ms)")
    print(f"a head that never ends, to its 408: median {h * 1000:.0f} ms, worst "
          f"{max(heads) * 1000:.0f} ms (head timeout 500 ms; target < 3000 ms)")
    ok = max(bursts) < 2.0 and max(heads) < 3.0
    print("targets met" if ok else "a target NOT met")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
