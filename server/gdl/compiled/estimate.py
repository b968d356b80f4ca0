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

While grounding, a lower bound of the estimate is counted as well
(:class:`EstimateFloor`): it stops an attempt before grounding reaches the rule budget
when even the bound passes the budget.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .code_limits import BASE_TIME_LIMIT
from .errors import NetworkOverBudget

US_PER_GROUND_RULE = 4
US_PER_INPUT = 160
US_PER_BODY = 20
US_PER_LITERAL = 17

ESTIMATE_MARGIN = 1.5
"""The estimate a compile attempt may reach, in multiples of its time limit, at the
default limit (:data:`BASE_TIME_LIMIT`). On the corpus every game that compiles within
the default 2 s is estimated at 2.5 s or less (the largest, pawnToQueen and
checkersTiny, compile in 1.2 to 1.9 s); the games estimated past 3 s need 3 to 7 s."""

MARGIN_GROWTH = 0.125
"""How much the margin grows per second of time limit past :data:`BASE_TIME_LIMIT` (2.5
at 10 s, the longest limit a match buys). The estimate counts bodies and literals alike
whatever folding later makes of them, so it overstates large programs by up to ten times
(measured at a 12 s limit with no estimate: checkers, estimated at 19 s, compiles in
5.3 s; pacman2p at 23.6 s in 9 s; chineseCheckers2 at 20.1 s in 2 s), while quarto,
estimated at 26.4 s, runs past 12 s and fails: a margin of 2.5 at 10 s takes the first
and refuses the last, instead of spending the whole budget on it. At the default limit a
refusal costs little (the interpreter plays) and an overrun much, so the margin stays
small there."""


def work_budget(time_limit: float) -> float:
    """The estimate (microseconds) that ``time_limit`` seconds of compiling allow."""
    time_limit = max(time_limit, 0.0)
    margin = ESTIMATE_MARGIN + MARGIN_GROWTH * max(0.0, time_limit - BASE_TIME_LIMIT)
    return margin * time_limit * 1_000_000


def estimated_us(ground_rules: int, inputs: int, bodies: int, literals: int) -> int:
    """The estimated CPU time (microseconds) of compiling a ground program."""
    return (
        US_PER_GROUND_RULE * ground_rules
        + US_PER_INPUT * inputs
        + US_PER_BODY * bodies
        + US_PER_LITERAL * literals
    )


def check_estimate(estimate: int, work_budget: float) -> None:
    """Raise :class:`NetworkOverBudget` when the estimate passes the budget."""
    if estimate > work_budget:
        raise NetworkOverBudget(
            f"compiling is estimated at over {round(work_budget / 1e6, 2):g} s of CPU time, more than"
            " the time limit allows (counted from the rules, inputs and rule bodies)"
        )


class EstimateFloor:
    """A lower bound of the estimate, counted while grounding (in batches of the rules
    emitted since the last look), before the names of the atoms (which tell the
    ``does`` atoms apart) are known.

    The estimate counts the bodies left after does-grouping, which merges the bodies of
    a head that differ only in one ``does`` literal, and after repeated bodies are left
    out. Here a body is counted only when no body counted before has the same head and
    the same literals once every literal on an open input (``true`` or ``does``, known
    from the choice rules) is left out: that merges at least the bodies does-grouping
    merges and the repeated ones, so the bodies and literals counted are at most those
    of the estimate. Clingo emits the choice rule of an input before any rule with that
    input in its body, and the inputs only grow, so the bound of the rules read so far
    is at most the estimate of the whole program. A body of one literal or none is never
    merged by does-grouping, so it is only compared with the same body. The rules that
    derive demand atoms (:mod:`.demand`) are counted here and left out of the program
    afterwards; there are few of them (one per instance of a literal that reads a
    demanded relation), and on the corpus the bound stays at 0.79 to 1.0 of the estimate.
    """

    def __init__(self, choices: set[int], counter: Any = None) -> None:
        self.choices = choices
        """The open inputs so far (shared with the reader of the program)."""
        self.counter = counter
        """The same count in C (``FloorCount`` of ``_estimate_floor.c``), when built: it
        keeps the derived heads and the keys counted in tables of integers, and counts in
        a quarter to a sixth of the time; None to count here."""
        self.derived: set[int] = set()
        """The heads of the rules counted so far, each as both its literals."""
        self.seen: set[tuple[int, ...]] = set()
        self.bodies = 0
        self.literals = 0

    def add(self, rules: Sequence[tuple[int, tuple[int, ...]]]) -> None:
        """Count ground rules (head, body literals), in the order clingo emitted them.

        Counted in batches after they were emitted, not one by one: the inputs opened
        since are never in the body of an earlier rule, so the count is the same."""
        if self.counter is not None:
            bodies, literals = self.counter.add(rules, self.choices)
            self.bodies += bodies
            self.literals += literals
            return
        choices = self.choices
        seen = self.seen
        derived = self.derived
        self.note(rules)
        bodies = literals = 0
        seen_add = seen.add
        for head, body in rules:
            size = len(body)
            if size > 1:
                rest = [literal for literal in body if literal not in choices]
                if not derived.issuperset(rest):
                    # literals on atoms nothing has derived yet are left out, and the bodies
                    # they may make false: the estimate leaves out those nothing ever derives
                    missing = [literal for literal in rest if literal not in derived]
                    if max(missing) > 0:
                        continue
                    rest = [literal for literal in rest if literal in derived]
                    size -= len(missing)
                    if size < 2:
                        body = tuple(
                            literal for literal in body if literal in choices or literal in derived
                        )
            elif size and body[0] not in derived and body[0] not in choices:
                if body[0] > 0:
                    continue
                body = ()
                size = 0
            if size > 1:
                key = (head, *sorted(rest)) if len(rest) > 1 else (head, *rest)
            else:
                key = (head, *body)  # maybe repeated
            if key in seen:
                continue
            seen_add(key)
            bodies += 1
            literals += size
        self.bodies += bodies
        self.literals += literals

    def note(self, rules: Sequence[tuple[int, tuple[int, ...]]]) -> None:
        """Take the heads of ground rules left uncounted (for now): a later body on them
        is not left out for want of a rule. Leaving rules out, or counting them later,
        when more heads are known, still counts at most the bodies and literals of the
        estimate, which knows every head."""
        if self.counter is not None:
            self.counter.note(rules)
            return
        heads = [head for head, _ in rules]
        self.derived.update(heads)
        self.derived.update([-head for head in heads])

    def estimate(self, rules: int) -> int:
        """The bound (microseconds) after ``rules`` ground rules."""
        return estimated_us(rules, len(self.choices), self.bodies, self.literals)

    def extrapolated(self, rules: int, counted: int) -> int:
        """The estimate after ``rules`` ground rules, as if the bodies and literals of
        the ``counted`` of them counted so far held for all."""
        scale = rules / counted if counted else 1.0
        bodies, literals = round(scale * self.bodies), round(scale * self.literals)
        return estimated_us(rules, len(self.choices), bodies, literals)


__all__ = [
    "ESTIMATE_MARGIN",
    "MARGIN_GROWTH",
    "EstimateFloor",
    "check_estimate",
    "estimated_us",
    "work_budget",
]
