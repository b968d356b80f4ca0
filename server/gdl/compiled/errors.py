"""Why a game could not be compiled, or a term the compiled engine does not know.

``OutsideGroundingError`` lives in :mod:`server.gdl.errors`; it is re-exported here.
"""

from __future__ import annotations

import time

from ..errors import GdlError, OutsideGroundingError


class CompileError(GdlError):
    """The game cannot be compiled; ``reason`` says why (the caller may fall back)."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(f"cannot compile the game: {reason}")


class GroundingTooLarge(CompileError):
    """The ground program exceeds the configured number of ground rules."""


class GroundingTooSlow(CompileError):
    """Grounding, optimising or generating code exceeded the configured time limit."""


class GroundingOverBudget(GroundingTooSlow):
    """The ground program has more rules than the time limit allows compiling.

    Decided by counting ground rules, not by the clock, so it does not depend on how
    busy the machine is.
    """


class GroundingPastStretch(GroundingOverBudget):
    """The ground program passed the rules its budget was stretched to: cheap to compile
    per rule by the bound of its estimate, but too many rules as they are written (see
    :meth:`server.gdl.compiled.grounder._Collector.stretch`)."""


class NetworkOverBudget(GroundingOverBudget):
    """Compiling the ground program is estimated to cost more than the time limit
    allows (:mod:`server.gdl.compiled.estimate`), decided by counting while grounding
    (a lower bound) or while reading the ground program."""


class SlowerThanInterpreter(CompileError):
    """The game compiled, but a timed trial found the interpreter faster on it
    (:mod:`server.gdl.engine_trial`); remembered like a failure, so that loading the
    game again goes straight to the interpreter."""


def check_deadline(deadline: float, stage: str) -> None:
    """Raise :class:`GroundingTooSlow` once ``deadline`` (thread CPU time, :func:`time.thread_time`) has passed."""
    if time.thread_time() > deadline:
        raise GroundingTooSlow(f"{stage} took longer than the time limit")


__all__ = [
    "CompileError",
    "GroundingOverBudget",
    "GroundingPastStretch",
    "GroundingTooLarge",
    "GroundingTooSlow",
    "NetworkOverBudget",
    "SlowerThanInterpreter",
    "OutsideGroundingError",
    "check_deadline",
]
