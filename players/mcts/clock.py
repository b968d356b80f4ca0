"""When to stop thinking: the deadline minus a safety margin learnt while playing.

The agent hands a hook its deadline (the clock minus the agent's own reply margin).
What is left to cover is time this process cannot account for in advance: the
longest stretch the search runs without looking at the clock (one iteration), the
delay between the request arriving and the hook starting (thread start-up, applying
the joint move, a busy machine), the same again on the way back, and other
processes competing for the cores. The margin grows with each of them as measured,
and is capped at 40% of the clock so that a bad measurement cannot silence
the player.
"""

from __future__ import annotations

import os
import time
from collections import deque

BASE_MARGIN = 0.05
"""Seconds always kept back: handing the move back to the event loop and rendering it."""

LOAD_MARGIN = 0.1
"""Extra seconds per unit of run-queue load beyond one process per core."""

MAX_FRACTION = 0.4
"""The margin never exceeds this share of the clock."""


def machine_load() -> float:
    """Runnable processes per core over the last minute (0 where unknown)."""
    try:
        return os.getloadavg()[0] / (os.cpu_count() or 1)
    except OSError:
        return 0.0


class Clock:
    """Measures the delays around a hook and turns a deadline into a stop time."""

    def __init__(self) -> None:
        self.slowest_iteration = 0.0
        self._lags: deque[float] = deque(maxlen=16)
        self._lag_floor = float("inf")

    def hook_started(self, deadline: float, clock: float, now: float | None = None) -> None:
        """Note how long after the request (``deadline - clock``) a hook started."""
        now = time.monotonic() if now is None else now
        lag = now - (deadline - clock)
        self._lag_floor = min(self._lag_floor, lag)
        self._lags.append(lag)

    def iteration_took(self, seconds: float) -> None:
        """Note the length of one uninterrupted stretch of search."""
        if seconds > self.slowest_iteration:
            self.slowest_iteration = seconds
        else:  # forget old peaks slowly
            self.slowest_iteration = 0.999 * self.slowest_iteration + 0.001 * seconds

    def margin(self, clock: float) -> float:
        """Seconds to keep back before a deadline of a ``clock``-second request."""
        lag = max(self._lags, default=self._lag_floor) - self._lag_floor if self._lags else 0.0
        load = max(0.0, machine_load() - 1.0)
        margin = BASE_MARGIN + 2 * self.slowest_iteration + 2 * lag + LOAD_MARGIN * load
        return min(margin, MAX_FRACTION * clock)

    def stop_time(self, deadline: float, clock: float) -> float:
        """The monotonic time at which to stop thinking."""
        return deadline - self.margin(clock)
