"""Facts count against the rule caps as a quarter of a rule each.

Clingo reports every fact of a helper relation (a board's geometry, a successor
relation) as a rule with an empty body. Nothing reads them, as facts are folded out of
the bodies, and they cost a fraction of a rule with a body to read, so a game is not
refused for the size of its static tables.
"""

from __future__ import annotations

import time

import pytest

from server.gdl.compiled import GroundingTooLarge
from server.gdl.compiled.grounder import FACTS_PER_RULE, ground
from server.gdl.parser import parse_gdl

WALK = (
    "(role r) "
    + " ".join(f"(index {i})" for i in range(1, 41))
    + """
    (<= (pair ?x ?y) (index ?x) (index ?y))
    (init (at 1))
    (<= (legal r (go ?y)) (true (at ?x)) (pair ?x ?y))
    (<= (next (at ?y)) (does r (go ?y)))
    (<= terminal (true (at 40)))
    (<= (goal r 100) (true (at 40)))
    (<= (goal r 0) (not (true (at 40))))
    """
)
"""A walk from any of 40 squares to any: 1,600 facts of ``pair``."""


def test_facts_count_as_a_quarter_of_a_rule_against_the_cap() -> None:
    rules = parse_gdl(WALK)
    program = ground(rules, max_rules=10**6, deadline=time.thread_time() + 60)
    facts = sum(1 for _, body in program.rules if not body)
    with_body = len(program.rules) - facts
    assert facts > 1_600 and with_body > 1_600
    counted = with_body + facts // FACTS_PER_RULE
    assert counted < len(program.rules) - 1_000
    # the whole program grounds under a cap of what is counted, not of every rule
    kept = ground(rules, max_rules=counted, deadline=time.thread_time() + 60)
    assert kept.rules == program.rules
    with pytest.raises(GroundingTooLarge):
        ground(rules, max_rules=counted - 1, deadline=time.thread_time() + 60)
