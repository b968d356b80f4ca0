"""How long loading a game may spend compiling it: a share of the start clock.

A match's start clock is the time its players get to load the game, so it decides
how long engine ``auto`` may try to compile the rules before it settles for the
interpreter: a sixth of the start clock, never below the engine's default (2 s, so
that clocks up to 12 s change nothing) and never above :data:`MAX_TIME_LIMIT`. The
ground-rule cap grows with it, so that the time limit, not the cap, decides.

The time limit is CPU time of the loading thread: a busy machine stretches set-up in
wall-clock time but hardly changes which games compile. A failed attempt costs at most
about the time limit (pancakes88 once overran a 10 s limit to 16 s, in loops that now
look at the clock) and the interpreter then loads in under a second, so set-up takes
about a sixth of the start clock in CPU time and well under the clock even on a machine
twice oversubscribed.

The environment variables ``GGP_COMPILE_TIME_LIMIT`` and ``GGP_COMPILE_MAX_RULES``
override what the start clock gives. Which engine answers never changes a result,
only its speed, so replays do not depend on the budget.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

START_CLOCK_SHARE = 1 / 6
"""The share of the start clock that compiling may take."""
MIN_TIME_LIMIT = 2.0
"""Seconds of CPU time without a start clock, the least any start clock gives (the
compiled engine's default time limit)."""
MAX_TIME_LIMIT = 10.0
"""Seconds of CPU time no start clock goes past (reached at a 60 s start clock)."""

TIME_LIMIT_VARIABLE = "GGP_COMPILE_TIME_LIMIT"
MAX_RULES_VARIABLE = "GGP_COMPILE_MAX_RULES"


@dataclass(frozen=True, slots=True)
class CompileBudget:
    """Seconds of CPU time and ground rules engine ``auto`` may spend compiling a game."""

    time_limit: float
    max_ground_rules: int

    @classmethod
    def for_start_clock(cls, start_clock: float | None) -> CompileBudget:
        """The budget a start clock of ``start_clock`` seconds buys (``None``: the
        engine's defaults); the environment variables take precedence."""
        time_limit = time_limit_for(start_clock)
        return cls(time_limit, max_ground_rules_for(time_limit))

    def within(self, seconds: float) -> CompileBudget:
        """This budget, cut down to at most ``seconds`` of CPU time (the rule cap kept)."""
        if self.time_limit <= seconds:
            return self
        return CompileBudget(seconds, self.max_ground_rules)


def time_limit_for(start_clock: float | None) -> float:
    """Seconds of CPU time compiling may take when players get ``start_clock`` s to load."""
    configured = os.environ.get(TIME_LIMIT_VARIABLE)
    if configured:
        return float(configured)
    if start_clock is None:
        return MIN_TIME_LIMIT
    share = round(start_clock * START_CLOCK_SHARE, 1)
    return min(MAX_TIME_LIMIT, max(MIN_TIME_LIMIT, share))


def max_ground_rules_for(time_limit: float) -> int:
    """The ground-rule cap that goes with ``time_limit``: the engine's default cap, or
    the rules the time limit allows when that is more."""
    configured = os.environ.get(MAX_RULES_VARIABLE)
    if configured:
        return int(configured)
    from .compiled.engine import DEFAULT_MAX_GROUND_RULES, rule_budget

    return max(DEFAULT_MAX_GROUND_RULES, rule_budget(time_limit))
