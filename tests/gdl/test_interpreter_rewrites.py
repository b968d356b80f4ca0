"""The interpreter evaluates a rewritten copy of a game's rules that derives less and tests
less, and answers exactly as the rules as written do.

Two rewrites, each checked on its own rules and then against the compiled engine, which
evaluates the rules as written, on every state a game can reach:

- a helper relation that every use reads with the same argument positions ground is
  derived only for the values those uses name (``(not (hasmove white))`` never asks
  for the moves of an arrow);
- negated ``true`` literals of one rule that differ in one constant become one negated
  literal over a relation of their own, derived once per state.
"""

from __future__ import annotations

import pytest
from compiled_checks import assert_same_answers, reachable_states

from server.gdl import Game
from server.gdl.interpreter import Interpreter
from server.gdl.interpreter.negation_groups import fold_negated_fluents, group_name
from server.gdl.interpreter.program import FlatRule, expand_disjunctions
from server.gdl.interpreter.uses import restrict_to_uses, use_filter_name
from server.gdl.parser import parse_gdl

ARROWS = """
(role white) (role black)
(init (cell 1 1 white)) (init (cell 3 3 black)) (init (control white))
(index 1) (index 2) (index 3)
(succ 1 2) (succ 2 3)
(<= (adjacent ?x ?y ?x ?v) (index ?x) (succ ?y ?v))
(<= (adjacent ?x ?y ?x ?v) (index ?x) (succ ?v ?y))
(<= (adjacent ?x ?y ?u ?y) (index ?y) (succ ?x ?u))
(<= (adjacent ?x ?y ?u ?y) (index ?y) (succ ?u ?x))
(<= (empty ?x ?y) (index ?x) (index ?y)
    (not (true (cell ?x ?y white))) (not (true (cell ?x ?y black)))
    (not (true (cell ?x ?y arrow))))
(<= (hasmove ?p) (true (cell ?x ?y ?p)) (adjacent ?x ?y ?u ?v) (empty ?u ?v))
(<= (hasmove nobody) (index 1))
(<= (hasmove white) (true (cell 2 2 white)) (true (control black)))
(<= (legal ?p (move ?x ?y ?u ?v)) (true (control ?p)) (true (cell ?x ?y ?p))
    (adjacent ?x ?y ?u ?v) (empty ?u ?v))
(<= (legal white noop) (true (control black)))
(<= (legal black noop) (true (control white)))
(<= (next (cell ?u ?v ?p)) (does ?p (move ?x ?y ?u ?v)))
(<= (next (cell ?x ?y arrow)) (does ?p (move ?x ?y ?u ?v)))
(<= (next (cell ?x ?y ?c)) (true (cell ?x ?y ?c)) (does ?p (move ?a ?b ?u ?v))
    (distinct ?x ?a))
(<= (next (cell ?x ?y ?c)) (true (cell ?x ?y ?c)) (does ?p (move ?a ?b ?u ?v))
    (distinct ?y ?b))
(<= (next (control black)) (true (control white)))
(<= (next (control white)) (true (control black)))
(<= (stuck ?p) (role ?p) (not (hasmove ?p)))
(<= terminal (not (hasmove white)))
(<= terminal (not (hasmove black)))
(<= (goal white 100) (hasmove white) (not (hasmove black)))
(<= (goal white 0) (not (hasmove white)))
(<= (goal white 50) (hasmove white) (hasmove black))
(<= (goal black 100) (stuck white))
(<= (goal black 0) (not (stuck white)))
"""
"""Knights and arrows on three by three: a piece moves to an empty neighbour and leaves
an arrow behind; a side with no move ends the game. ``hasmove`` is read with ``white``
and ``black`` by ``terminal`` and ``goal``, and with a variable by ``stuck``; ``empty``
tests three fluents a cell."""

CONSTANT_USES = ARROWS.replace(
    "(<= (stuck ?p) (role ?p) (not (hasmove ?p)))", "(<= (stuck white) (not (hasmove white)))"
)
"""The same game with ``hasmove`` read with ``white`` and ``black`` only."""


def rules_of(text: str) -> list[FlatRule]:
    return expand_disjunctions(parse_gdl(text))


def heads_named(rules: list[FlatRule], name: str) -> list[FlatRule]:
    return [rule for rule in rules if isinstance(rule.head, tuple) and rule.head[0] == name]


def test_a_relation_read_with_constants_only_is_derived_for_those_constants() -> None:
    rewritten = restrict_to_uses(rules_of(CONSTANT_USES))
    hasmove = heads_named(rewritten, "hasmove")
    assert [rule.head for rule in hasmove] == [("hasmove", "?p"), ("hasmove", "white")]
    assert hasmove[0].body[0] == (use_filter_name(("hasmove", 1)), "?p")
    assert hasmove[0].body[1:] == heads_named(rules_of(CONSTANT_USES), "hasmove")[0].body
    uses = heads_named(rewritten, use_filter_name(("hasmove", 1)))
    assert sorted(rule.head for rule in uses) == [
        (use_filter_name(("hasmove", 1)), "black"),
        (use_filter_name(("hasmove", 1)), "white"),
    ]
    assert all(not rule.body for rule in uses)


def test_a_relation_read_with_a_variable_anywhere_is_derived_whole() -> None:
    rewritten = restrict_to_uses(rules_of(ARROWS))
    assert heads_named(rewritten, "hasmove") == heads_named(rules_of(ARROWS), "hasmove")
    assert not heads_named(rewritten, use_filter_name(("hasmove", 1)))


def test_the_relations_callers_ask_for_are_never_restricted() -> None:
    text = """
    (role p) (init (at 1)) (succ 1 2) (succ 2 3)
    (<= (legal p (go ?y)) (true (at ?x)) (succ ?x ?y))
    (<= (next (at ?y)) (does p (go ?y)))
    (<= terminal (true (at 3)))
    (<= (goal p 100) (true (at 3)))
    (<= (goal p 0) (true (at ?x)) (distinct ?x 3))
    (<= (won) (goal p 100))
    """
    assert restrict_to_uses(rules_of(text)) == rules_of(text)


def test_negated_fluents_that_differ_in_one_constant_become_one_test() -> None:
    rewritten = fold_negated_fluents(rules_of(ARROWS))
    (empty,) = heads_named(rewritten, "empty")
    fluents = [("cell", "?x", "?y", colour) for colour in ("white", "black", "arrow")]
    group = group_name(fluents)
    assert empty.body == (("index", "?x"), ("index", "?y"), ("not", (group, "?x", "?y")))
    assert [(rule.head, rule.body) for rule in heads_named(rewritten, group)] == [
        ((group, "?x", "?y"), (("true", fluent),)) for fluent in fluents
    ]


def test_negated_fluents_that_differ_in_more_than_one_place_stay_apart() -> None:
    text = """
    (role p) (init (cell 1 1 x)) (index 1) (index 2)
    (<= (free ?x ?y) (index ?x) (index ?y)
        (not (true (cell ?x ?y x))) (not (true (cell ?y ?x o))))
    (<= (lonely ?x) (index ?x) (not (true (cell ?x 1 x))))
    (<= (legal p (mark ?x ?y)) (free ?x ?y))
    (<= (next (cell ?x ?y x)) (does p (mark ?x ?y)))
    (<= terminal (true (cell 2 2 x)))
    (<= (goal p 100) (lonely 2))
    (<= (goal p 0) (not (lonely 2)))
    """
    assert fold_negated_fluents(rules_of(text)) == rules_of(text)


def test_rules_with_the_same_negated_fluents_share_one_group() -> None:
    text = (
        ARROWS
        + """
    (<= (blocked ?x ?y) (index ?x) (index ?y) (not (true (cell ?x ?y white)))
        (not (true (cell ?x ?y black))) (not (true (cell ?x ?y arrow))) (succ ?x ?y))
    """
    )
    rewritten = fold_negated_fluents(rules_of(text))
    groups = {rule.head[0] for rule in rewritten if rule.head[0].startswith("none of")}
    assert len(groups) == 1
    assert len(heads_named(rewritten, groups.pop())) == 3


VARIANTS = {
    "as written": ARROWS,
    "hasmove read with constants only": CONSTANT_USES,
}


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_the_rewritten_rules_answer_as_the_rules_as_written(variant: str) -> None:
    """On every reachable state: the interpreter (rewritten) and the compiled engine
    (as written) give the same legal moves, successors, terminal flags and goals."""
    text = VARIANTS[variant]
    interpreted = Game.from_text(text, engine="interpreter")
    compiled = Game.from_text(text, engine="compiled")
    assert isinstance(interpreted.engine, Interpreter)
    assert interpreted.engine.program.rules != rules_of(text)  # rewritten indeed
    states = reachable_states(compiled, 5000)
    assert len(states) > 30
    assert assert_same_answers(interpreted, compiled, states)  # terminal states among them


WANDERER = """
(role walker) (role watcher)
(index 1) (index 2) (index 3)
(succ 0 1) (succ 1 2) (succ 2 3) (succ 3 4)
(init (at 1 1)) (init (steps 0))
(<= (legal walker (go ?x ?y)) (true (at ?a ?b)) (index ?x) (index ?y)
    (or (distinct ?x ?a) (distinct ?y ?b)))
(<= (legal walker stay) (true (at ?a ?b)) (or (true (steps 2)) (distinct ?a ?b)))
(<= (legal watcher (guess ?x)) (index ?x))
(<= (next (at ?x ?y)) (does walker (go ?x ?y)))
(<= (next (at ?a ?b)) (does walker stay) (true (at ?a ?b)))
(<= (next (steps ?m)) (true (steps ?n)) (succ ?n ?m))
(<= (next (seen ?x)) (does watcher (guess ?x)) (true (at ?a ?b))
    (or (distinct ?x ?a) (distinct ?x ?b) (distinct ?a ?b)))
(<= terminal (true (steps 4)))
(<= (goal walker 100) (true (at 3 3)))
(<= (goal walker 0) (true (at ?a ?b)) (or (distinct ?a 3) (distinct ?b 3)))
(<= (goal watcher 100) (true (seen 2)))
(<= (goal watcher 0) (not (true (seen 2))))
"""
"""A walker that moves to any other cell, its ``or`` of distincts (two and three
branches) kept as one test; ``stay``'s ``or`` reads a fluent, so it splits the rule."""


def test_an_or_of_distincts_stays_one_test_and_any_other_or_splits_the_rule() -> None:
    rules = rules_of(WANDERER)
    (go,) = [rule for rule in heads_named(rules, "legal") if rule.head[2][0] == "go"]
    assert go.body[-1] == ("or", ("distinct", "?x", "?a"), ("distinct", "?y", "?b"))
    stay = [rule for rule in heads_named(rules, "legal") if rule.head[2] == "stay"]
    assert [rule.body[1] for rule in stay] == [("true", ("steps", "2")), ("distinct", "?a", "?b")]
    (seen,) = heads_named([rule for rule in rules if rule.head[0] == "next"], "next")[3:]
    assert seen.body[-1][0] == "or" and len(seen.body[-1]) == 4


def test_an_or_of_distincts_answers_as_the_rules_as_written() -> None:
    """On every reachable state, the interpreter (the ``or`` one test) and the compiled
    engine (which grounds each branch) agree; the walker may go to eight cells of nine."""
    interpreted = Game.from_text(WANDERER, engine="interpreter")
    compiled = Game.from_text(WANDERER, engine="compiled")
    start = compiled.initial_state()
    assert len(interpreted.legal_moves(start, "walker")) == 8
    states = reachable_states(compiled, 5000)
    assert len(states) > 30
    assert assert_same_answers(interpreted, compiled, states)
