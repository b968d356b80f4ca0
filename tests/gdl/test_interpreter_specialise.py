"""The interpreter gives a literal that names constants a copy of its relation kept to
those constants, without the rules they rule out, and answers exactly as the rules as
written do.

chineseCheckers6 asks whether anyone scored 100 after every move; with the copy it tests
the three cells of each corner rather than working out every score. The checks: what the
copies hold, where no copy is made, and the same answers as the compiled engine (which
evaluates the rules as written) on every state a game can reach.
"""

from __future__ import annotations

import pytest
from compiled_checks import assert_same_answers, reachable_states

from server.gdl import Game
from server.gdl.interpreter import Interpreter
from server.gdl.interpreter import specialise as specialise_module
from server.gdl.interpreter.program import (
    FlatRule,
    expand_disjunctions,
    literal_atom,
    relation_key,
)
from server.gdl.interpreter.specialise import copy_name, specialise_to_constants
from server.gdl.parser import parse_gdl

CORNERS = """
(role red) (role blue)
(init (cell a red)) (init (cell b red)) (init (cell c blank)) (init (cell d blank))
(init (cell e blue)) (init (cell f blue)) (init (control red)) (init (step 0))
(cellname a) (cellname b) (cellname c) (cellname d) (cellname e) (cellname f)
(succ 0 1) (succ 1 2) (succ 2 3) (succ 3 4) (succ 4 5) (succ 5 6) (succ 6 7) (succ 7 8)
(<= (legal ?p (move ?x ?y)) (true (control ?p)) (true (cell ?x ?p)) (true (cell ?y blank)))
(<= (legal ?p noop) (role ?p) (not (true (control ?p))))
(<= (next (cell ?y ?p)) (does ?p (move ?x ?y)))
(<= (next (cell ?x blank)) (does ?p (move ?x ?y)))
(<= (next (cell ?z ?c)) (true (cell ?z ?c)) (not (moved ?z)))
(<= (moved ?x) (does ?p (move ?x ?y)))
(<= (moved ?y) (does ?p (move ?x ?y)))
(<= (next (control blue)) (true (control red)))
(<= (next (control red)) (true (control blue)))
(<= (next (step ?m)) (true (step ?n)) (succ ?n ?m))
(<= (count ?x ?y ?p 100) (true (cell ?x ?p)) (true (cell ?y ?p)))
(<= (count ?x ?y ?p 50) (true (cell ?x ?p)) (devoid ?y ?p))
(<= (count ?x ?y ?p 50) (devoid ?x ?p) (true (cell ?y ?p)))
(<= (count ?x ?y ?p 0) (devoid ?x ?p) (devoid ?y ?p))
(<= (devoid ?x ?p) (role ?p) (true (cell ?x ?c)) (distinct ?c ?p))
(<= (goal red ?score) (count e f red ?score))
(<= (goal blue ?score) (count a b blue ?score))
(<= terminal (goal ?p 100))
(<= terminal (true (step 8)))
(<= (stuck ?p) (role ?p) (not (free ?p)))
(<= (free red) (true (cell c blank)))
(<= (free red) (true (cell b blank)))
(<= (free blue) (true (cell d blank)))
(<= (free ?p) (role ?p) (true (control ?p)) (distinct ?p red))
(<= (legal ?p wait) (stuck ?p) (not (free blue)))
(<= (legal ?p (count ?s)) (stuck ?p) (count a e ?p ?s))
"""
"""Two players race their two pieces into the other's corner: ``terminal`` asks whether
anyone scored 100 (``count``'s first rule alone can give it), and ``legal`` asks whether
``blue`` is free (``free``'s third rule, and its fourth with its ``distinct`` decided).
``count`` read with its payoff open gets no copy."""


def rules_of(text: str) -> list[FlatRule]:
    return expand_disjunctions(parse_gdl(text))


def heads_named(rules: list[FlatRule], name: str) -> list[FlatRule]:
    return [
        rule
        for rule in rules
        if (rule.head[0] if isinstance(rule.head, tuple) else rule.head) == name
    ]


GOAL_100 = copy_name(("goal", 2), ((1, "100"),))
COUNT_100 = copy_name(("count", 4), ((3, "100"),))
FREE_BLUE = copy_name(("free", 1), ((0, "blue"),))


def test_a_literal_reads_a_copy_kept_to_its_constants_through_every_relation_below() -> None:
    rewritten = specialise_to_constants(rules_of(CORNERS), inline=False)
    (ends, by_step) = heads_named(rewritten, "terminal")
    assert ends.body == ((GOAL_100, "?p", "100"),)
    assert by_step.body == (("true", ("step", "8")),)
    assert [(rule.head, rule.body) for rule in heads_named(rewritten, GOAL_100)] == [
        ((GOAL_100, "red", "100"), ((COUNT_100, "e", "f", "red", "100"),)),
        ((GOAL_100, "blue", "100"), ((COUNT_100, "a", "b", "blue", "100"),)),
    ]
    # one copy of count serves both players: only its payoff can rule a rule out
    assert [(rule.head, rule.body) for rule in heads_named(rewritten, COUNT_100)] == [
        (
            (COUNT_100, "?x", "?y", "?p", "100"),
            (("true", ("cell", "?x", "?p")), ("true", ("cell", "?y", "?p"))),
        )
    ]


def test_the_relations_as_written_stay_for_the_engines_callers() -> None:
    written = rules_of(CORNERS)
    rewritten = specialise_to_constants(written, inline=False)
    for name in ("goal", "count", "next", "devoid"):
        assert heads_named(rewritten, name) == heads_named(written, name)
    legal = heads_named(rewritten, "legal")
    assert [rule.head for rule in legal] == [rule.head for rule in heads_named(written, "legal")]
    (scored,) = (
        rule for rule in legal if isinstance(rule.head[2], tuple) and rule.head[2][0] == "count"
    )
    assert scored.body == (("stuck", "?p"), ("count", "a", "e", "?p", "?s"))  # payoff open


def test_a_negated_literal_reads_a_copy_and_a_distinct_is_decided_in_it() -> None:
    rewritten = specialise_to_constants(rules_of(CORNERS), inline=False)
    wait = next(rule for rule in heads_named(rewritten, "legal") if rule.head[2] == "wait")
    assert wait.body == (("stuck", "?p"), ("not", (FREE_BLUE, "blue")))
    # free's first two rules name red (left out); its last compares blue with red (decided)
    assert [(rule.head, rule.body) for rule in heads_named(rewritten, FREE_BLUE)] == [
        ((FREE_BLUE, "blue"), (("true", ("cell", "d", "blank")),)),
        ((FREE_BLUE, "blue"), (("role", "blue"), ("true", ("control", "blue")))),
    ]
    (stuck,) = heads_named(rewritten, "stuck")
    assert stuck.body == (("role", "?p"), ("not", ("free", "?p")))  # nothing given: as written


def test_no_copy_when_the_constants_rule_out_too_little() -> None:
    """A copy would hold, with what it reads, more than half the rules as written."""
    text = """
    (role p) (init (at 1)) (succ 1 2) (succ 2 3)
    (<= (near ?x ?y) (true (at ?x)) (succ ?x ?y))
    (<= (far ?x ?y) (near ?x ?z) (succ ?z ?y))
    (<= (far ?x 3) (true (at ?x)) (true (at 1)))
    (<= (legal p (go ?y)) (near 1 ?y))
    (<= (legal p stay) (far 2 3))
    (<= (legal p jump) (far ?x 3))
    (<= (next (at ?y)) (does p (go ?y)))
    (<= terminal (true (at 3)))
    (<= (goal p 100) (true (at 3)))
    """
    assert specialise_to_constants(rules_of(text)) == rules_of(text)


def test_static_and_recursive_relations_are_not_copied() -> None:
    text = """
    (role p) (init (at 1)) (succ 1 2) (succ 2 3) (succ 3 4)
    (<= (kind 1 low) (succ 1 2))
    (<= (kind ?x high) (succ ?y ?x))
    (<= (reach ?x ?x) (true (at ?x)))
    (<= (reach ?x ?z) (reach ?x ?y) (succ ?y ?z))
    (<= (reach ?x done) (true (at ?x)) (true (at 4)))
    (<= (legal p go) (kind 1 low) (reach 1 done))
    (<= (next (at ?y)) (true (at ?x)) (succ ?x ?y))
    (<= terminal (true (at 4)))
    (<= (goal p 100) (true (at 4)))
    """
    assert specialise_to_constants(rules_of(text)) == rules_of(text)


def test_copies_stop_at_their_allowance(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past it, literals read the relations as written (the rules stay right, and the
    copies made stay whole: each with all its instances)."""
    monkeypatch.setattr(specialise_module, "MIN_ADDED_RULES", 3)
    monkeypatch.setattr(specialise_module, "MAX_ADDED_SHARE", 0.0)
    written = rules_of(CORNERS)
    rewritten = specialise_to_constants(written, inline=False)
    made = {rule.head[0] for rule in rewritten[len(written) :]}
    assert made == {GOAL_100, COUNT_100}  # terminal's literal comes first: 2 rules and 1
    read = {
        relation_key(atom)[0]
        for rule in rewritten
        for literal in rule.body
        if (atom := literal_atom(literal)[1]) is not None
    }
    assert made <= read
    wait = next(rule for rule in heads_named(rewritten, "legal") if rule.head[2] == "wait")
    assert wait.body == (("stuck", "?p"), ("not", ("free", "blue")))  # as written


def test_the_copies_answer_as_the_rules_as_written() -> None:
    interpreted = Game.from_text(CORNERS, engine="interpreter")
    compiled = Game.from_text(CORNERS, engine="compiled")
    assert isinstance(interpreted.engine, Interpreter)
    assert any(" with " in str(rule.head) for rule in interpreted.engine.program.rules)
    states = reachable_states(compiled, 4000)
    assert len(states) > 40
    for state in states:  # goals on every state, not only the terminal ones
        assert interpreted.goals(state) == compiled.goals(state)
    ends = assert_same_answers(interpreted, compiled, states)
    by_score = [state for state in ends if 100 in compiled.goals(state).values()]
    assert by_score and len(by_score) < len(ends)  # games ended by a score and by the step


PAIRS = """
(role p)
(init (at a)) (init (step 0))
(spot a) (spot b) (spot c)
(succ 0 1) (succ 1 2) (succ 2 3)
(<= (pair ?x ?x) (true (at ?x)))
(<= (pair a c) (true (at c)))
(<= (pair b ?y) (true (at ?y)))
(<= (pair c b) (true (at a)))
(<= (legal p (go ?x)) (spot ?x))
(<= (legal p stay) (pair b b))
(<= (legal p never) (pair a b))
(<= (next (at ?x)) (does p (go ?x)))
(<= (next (at ?x)) (does p stay) (true (at ?x)))
(<= (next (step ?n)) (true (step ?m)) (succ ?m ?n))
(<= terminal (true (step 3)))
(<= (goal p 100) (true (step ?n)))
"""
"""A head with a variable twice: ``(pair b b)`` matches the first rule, ``(pair a b)``
none of the four, so it reads a copy without rules."""


def test_a_head_with_a_variable_twice_matches_equal_constants_only() -> None:
    rewritten = specialise_to_constants(rules_of(PAIRS), inline=False)
    both_b = copy_name(("pair", 2), ((0, "b"), (1, "b")))
    a_then_b = copy_name(("pair", 2), ((0, "a"), (1, "b")))
    assert [(rule.head, rule.body) for rule in heads_named(rewritten, both_b)] == [
        ((both_b, "b", "b"), (("true", ("at", "b")),)),
        ((both_b, "b", "b"), (("true", ("at", "b")),)),
    ]
    assert not heads_named(rewritten, a_then_b)
    never = next(rule for rule in heads_named(rewritten, "legal") if rule.head[2] == "never")
    assert never.body == ((a_then_b, "a", "b"),)
    interpreted = Game.from_text(PAIRS, engine="interpreter")
    compiled = Game.from_text(PAIRS, engine="compiled")
    states = reachable_states(compiled, 4000)
    assert len(states) == 10  # (at a) only at first: 1 + 3 * 3
    for state in states:
        assert interpreted.legal_moves(state, "p") == compiled.legal_moves(state, "p")
        assert interpreted.is_terminal(state) == compiled.is_terminal(state)
    assert any("stay" in map(str, compiled.legal_moves(state, "p")) for state in states)
