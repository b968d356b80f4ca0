"""What compiling a ground program will cost, estimated by counting.

The cost of the stages after grounding (reading, folding, planning, generating and
compiling code) grows with the ground rules, the inputs (fluents and moves) and the
rule bodies and literals left after does-grouping. Weighted by the CPU time each
costs on the corpus, they give an estimate in microseconds; an attempt whose
estimate passes ESTIMATE_MARGIN times its time limit stops while the ground program
is read, instead of running into the limit seconds later.

The estimate only grows while the program is read, so stopping at the first count
past the budget refuses exactly the games whose full count is past it: a count, not
the clock, so the same game is refused on any machine under any load.
"""

from __future__ import annotations

US_PER_GROUND_RULE = 4
US_PER_INPUT = 160
US_PER_BODY = 20
US_PER_LITERAL = 17

ESTIMATE_MARGIN = 1.5
"""The estimate a compile attempt may reach, in multiples of its time limit. On the
corpus every game that compiles within the default 2 s is estimated at 2.5 s or less
(the largest, pawnToQueen and checkersTiny, compile in 1.2 to 1.9 s); the games
estimated past 3 s need 3 to 7 s."""


def work_budget(time_limit: float) -> float:
    """The estimate (microseconds) that ``time_limit`` seconds of compiling allow."""
    return ESTIMATE_MARGIN * max(time_limit, 0.0) * 1_000_000


def estimated_us(ground_rules: int, inputs: int, bodies: int, literals: int) -> int:
    """The estimated CPU time (microseconds) of compiling a ground program."""
    return (
        US_PER_GROUND_RULE * ground_rules
        + US_PER_INPUT * inputs
        + US_PER_BODY * bodies
        + US_PER_LITERAL * literals
    )


__all__ = ["ESTIMATE_MARGIN", "estimated_us", "work_budget"]
