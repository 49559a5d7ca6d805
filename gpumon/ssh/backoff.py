"""How long to wait before connecting again: doubling, capped, jittered, reset by success.

Thirty machines that lost the network together must not reconnect together every second:
each waits ``first_s``, then twice as long each time up to ``most_s``, each wait moved by up
to ``jitter`` of itself at random so the retries spread out. A link that worked for
``healthy_s`` starts over at ``first_s`` when it fails.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable


class Backoff:
    """The waits of one machine's reconnects. ``wait()`` sleeps, and is cut short by
    ``cancel()`` (closing the source must not wait out a minute)."""

    def __init__(self, first_s: float = 1.0, most_s: float = 60.0, factor: float = 2.0,
                 jitter: float = 0.2, healthy_s: float = 30.0,
                 rand: Callable[[], float] = random.random) -> None:
        self.first_s, self.most_s, self.factor = first_s, most_s, factor
        self.jitter, self.healthy_s = jitter, healthy_s
        self._rand = rand
        self._next = first_s
        self.failures = 0
        self._cancel = threading.Event()
        self._skip = False

    def skip_next(self) -> None:
        """The next wait is none: the next try is another way, not the same one again."""
        self._skip = True

    def delay(self) -> float:
        """The next wait in seconds, and the one after it grows."""
        if self._skip:
            self._skip = False
            return 0.0
        base = self._next
        self._next = min(self.most_s, self._next * self.factor)
        self.failures += 1
        return max(0.0, base * (1.0 + self.jitter * (2.0 * self._rand() - 1.0)))

    def ended(self, lasted_s: float) -> None:
        """A connection ended after ``lasted_s`` seconds: one that lasted starts over."""
        if lasted_s >= self.healthy_s:
            self.reset()

    def reset(self) -> None:
        self._next = self.first_s
        self.failures = 0

    def wait(self, seconds: float) -> bool:
        """Sleep ``seconds``; False when cancelled meanwhile (or before)."""
        return not self._cancel.wait(seconds)

    def cancel(self) -> None:
        self._cancel.set()

    @property
    def cancelled(self) -> bool:
        return self._cancel.is_set()
