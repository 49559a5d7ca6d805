"""Password checks in a bounded pool, one queue per address, good clients before bad ones.

A bcrypt check takes a core for 0.1-0.3 s (cost 10-12) by design, so the exporter runs at
most ``CHECKS_AT_ONCE`` of them. Which check runs next is chosen per address, round-robin,
so one address cannot fill the pool: a wrong-password flood from 16 addresses answered good
first-time logins 429 sixteen times for every two 200s when any free slot went to whoever
asked first (issue 53). An address with recent wrong passwords (``suspect``) is served only
when no other address waits, and its waiting request is the one answered 429 (at once) when
a request of a good address needs its place. A request waits on its HTTP worker for at most
``WAIT_S``; at most ``MAX_WAITING`` wait or are checked at once, so some workers always stay
free for the scrapes whose credentials are remembered (they need no check).
"""

from __future__ import annotations

import threading
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass, field

CHECKS_AT_ONCE = 2
MAX_WAITING = 6  # checks waiting or running, of the server's 8 workers (server.WORKERS)
PER_CLIENT = 2  # requests of one address waiting for a check
WAIT_S = 5.0


@dataclass(eq=False)
class _Job:
    check: Callable[[], bool]
    suspect: bool
    done: threading.Event = field(default_factory=threading.Event)
    result: bool | None = None  # None: not checked (evicted, or waited too long)
    started: bool = False


class Verifier:
    """Runs ``check`` functions for clients (addresses) on a pool of its own threads."""

    def __init__(self, workers: int = CHECKS_AT_ONCE, max_waiting: int = MAX_WAITING,
                 per_client: int = PER_CLIENT, wait_s: float = WAIT_S) -> None:
        self.workers, self.max_waiting = workers, max_waiting
        self.per_client, self.wait_s = per_client, wait_s
        self._cond = threading.Condition()
        self._queues: OrderedDict[str, deque[_Job]] = OrderedDict()  # the next client first
        self._waiting = 0  # jobs queued
        self._running = 0  # jobs being checked
        self._threads: list[threading.Thread] = []

    def run(self, client: str, check: Callable[[], bool], suspect: bool = False
            ) -> bool | None:
        """``check()``'s answer, or None when it could not run soon enough (then the
        request is answered 429): the client already has ``per_client`` requests waiting,
        ``max_waiting`` wait and none of them is a suspect's to give way, or ``wait_s``
        passed. ``suspect``: the client sent wrong passwords lately (served last)."""
        job = _Job(check, suspect)
        with self._cond:
            queue = self._queues.get(client)
            if queue is not None and len(queue) >= self.per_client:
                return None
            if (self._waiting + self._running >= self.max_waiting
                    and (suspect or not self._evict_suspect())):
                return None
            self._queues.setdefault(client, deque()).append(job)
            self._waiting += 1
            self._start_workers()
            self._cond.notify()
        if not job.done.wait(self.wait_s):
            with self._cond:
                if not job.started:  # never ran: take it out; a started check is awaited
                    self._remove(client, job)
                    return None
            job.done.wait()
        return job.result

    def _evict_suspect(self) -> bool:
        """Answer one waiting (not started) request of a suspect client None; under _cond."""
        for client, queue in reversed(self._queues.items()):
            for job in queue:
                if job.suspect and not job.started:
                    self._remove(client, job)
                    job.done.set()
                    return True
        return False

    def _remove(self, client: str, job: _Job) -> None:
        queue = self._queues.get(client)
        if queue is not None and job in queue:
            queue.remove(job)
            self._waiting -= 1
            if not queue:
                del self._queues[client]

    def _next(self) -> _Job | None:
        """The next job, round-robin over clients, good ones first; under _cond."""
        for want_suspect in (False, True):
            for client, queue in self._queues.items():
                job = queue[0]
                if job.suspect == want_suspect:
                    queue.popleft()
                    self._waiting -= 1
                    if queue:
                        self._queues.move_to_end(client)  # its next one after the others
                    else:
                        del self._queues[client]
                    job.started = True
                    self._running += 1
                    return job
        return None

    def _start_workers(self) -> None:
        while len(self._threads) < self.workers:
            t = threading.Thread(target=self._work, name="gpumon-password-check", daemon=True)
            self._threads.append(t)
            t.start()

    def _work(self) -> None:
        while True:
            with self._cond:
                job = self._next()
                while job is None:
                    self._cond.wait()
                    job = self._next()
            try:
                job.result = job.check()
            except Exception:
                job.result = False
            finally:
                with self._cond:
                    self._running -= 1
                job.done.set()
