"""The interpreter derives a state relation only for the arguments its readers can ask
about, and answers exactly as the rules as written do.

``canmove`` below is read by ``legal`` for the player in control and by ``anymove``;
written as it is, a bottom-up evaluation works out the moves of both players in every
state. The rewrite gives ``canmove`` (and ``reach``, which it reads, recursively) an
asked relation holding the players in control, and each of their rules reads it first.
The checks: which relations are restricted and to which positions, the demand rules,
the relations left whole (a reader that fixes nothing, or narrows with static literals
only), and on every reachable state the rewritten rules against the compiled engine,
which evaluates the rules as written.
"""

from __future__ import annotations

import pytest
from compiled_checks import assert_same_answers, reachable_states

from server.gdl import Game
from server.gdl.interpreter import Interpreter
from server.gdl.interpreter.asked import asked_name, is_asked, restrict_to_asked
from server.gdl.interpreter.program import FlatRule, expand_disjunctions
from server.gdl.parser import parse_gdl

RUNNERS = """
(role red) (role blue)
(init (at red 1)) (init (at blue 5)) (init (control red)) (init (step 0))
(index 1) (index 2) (index 3) (index 4) (index 5)
(succ 1 2) (succ 2 3) (succ 3 4) (succ 4 5)
(count 0 1) (count 1 2) (count 2 3) (count 3 4) (count 4 5) (count 5 6)
(<= (adjacent ?x ?y) (succ ?x ?y))
(<= (adjacent ?x ?y) (succ ?y ?x))
(<= (free ?x) (index ?x) (not (true (at red ?x))) (not (true (at blue ?x))))
(<= (reach ?p ?y) (true (at ?p ?x)) (adjacent ?x ?y) (free ?y))
(<= (reach ?p ?z) (reach ?p ?y) (adjacent ?y ?z) (free ?z))
(<= (canmove ?p ?y) (reach ?p ?y))
(<= (anymove ?p) (canmove ?p ?y))
(<= (legal ?p (go ?y)) (true (control ?p)) (canmove ?p ?y))
(<= (legal ?p noop) (role ?p) (not (true (control ?p))))
(<= (legal ?p noop) (true (control ?p)) (not (anymove ?p)))
(<= (next (at ?p ?y)) (does ?p (go ?y)))
(<= (next (at ?p ?x)) (true (at ?p ?x)) (does ?p noop))
(<= (next (control blue)) (true (control red)))
(<= (next (control red)) (true (control blue)))
(<= (next (step ?n)) (true (step ?m)) (count ?m ?n))
(<= terminal (true (step 6)))
(<= terminal (true (control ?p)) (not (anymove ?p)))
(<= (goal ?p 100) (true (at ?p 3)))
(<= (goal ?p 0) (role ?p) (not (true (at ?p 3))))
"""
"""Two runners on a line of five cells, each moving to any free cell it can reach
without passing the other; the one on the middle cell at the end wins."""

SEEN_BY_MOVES = RUNNERS + "(<= (next (seen ?y)) (does ?p (go ?y)) (reach ?p ?y))"
"""The same game with a ``next`` rule that reads ``reach`` where only a move binds it."""

ASKED_BY_ROLE = RUNNERS.replace(
    "(<= (legal ?p noop) (true (control ?p)) (not (anymove ?p)))",
    "(<= (legal ?p noop) (role ?p) (not (anymove ?p)))",
).replace("(<= terminal (true (control ?p)) (not (anymove ?p)))", "")
"""The same game with ``anymove`` asked about every role."""

RESTING = (
    RUNNERS
    + """
(<= (legal ?p rest) (true (control ?p)) (rested ?p))
(<= (rested ?p) (true (at ?p ?x)) (index ?x))
"""
)
"""The same game with a second relation asked about the player in control alone."""


def rules_of(text: str) -> list[FlatRule]:
    return expand_disjunctions(parse_gdl(text))


def heads_named(rules: list[FlatRule], name: str) -> list[FlatRule]:
    return [rule for rule in rules if isinstance(rule.head, tuple) and rule.head[0] == name]


def test_a_relation_every_reader_binds_from_the_state_reads_its_asked_relation_first() -> None:
    written = rules_of(RUNNERS)
    rewritten = restrict_to_asked(written)
    canmove = asked_name(("canmove", 2))
    reach = asked_name(("reach", 2))
    anymove = asked_name(("anymove", 1))
    for name, asked in (("canmove", canmove), ("reach", reach), ("anymove", anymove)):
        rules = heads_named(rewritten, name)
        assert [rule.body[1:] for rule in rules] == [
            rule.body for rule in heads_named(written, name)
        ]
        assert all(rule.body[0] == (asked, rule.head[1]) for rule in rules)
    # what the readers ask: the player in control, through each reader's own asked relation
    demand = sorted((rule.head, rule.body) for rule in rewritten if is_asked(rule.head_key))
    assert demand == sorted(
        [
            ((anymove, "?p"), (("true", ("control", "?p")),)),
            ((canmove, "?p"), (("true", ("control", "?p")),)),
            ((canmove, "?p"), ((anymove, "?p"),)),
            ((reach, "?p"), ((canmove, "?p"),)),
        ]
    )


def test_relations_asked_alike_share_one_asked_relation() -> None:
    """``anymove`` and ``rested`` are both asked about ``(true (control ?p))`` alone:
    one asked relation serves both (one relation a state to compute)."""
    rewritten = restrict_to_asked(rules_of(RESTING))
    anymove = asked_name(("anymove", 1))
    assert not any(rule.head_key == (asked_name(("rested", 1)), 1) for rule in rewritten)
    (rested,) = heads_named(rewritten, "rested")
    assert rested.body == ((anymove, "?p"), ("true", ("at", "?p", "?x")), ("index", "?x"))
    assert [rule.body for rule in heads_named(rewritten, anymove)] == [
        (("true", ("control", "?p")),)
    ]


def test_relations_the_engine_s_callers_read_are_never_restricted() -> None:
    """``goal`` is read here about the player in control alone, as ``canmove`` is; but the
    engine's callers ask it about every role, so its rules stay as written."""
    text = (
        RUNNERS
        + """
    (<= (ahead ?p) (true (control ?p)) (goal ?p 100))
    (<= (legal ?p boast) (true (control ?p)) (ahead ?p))
    """
    )
    written = rules_of(text)
    rewritten = restrict_to_asked(written)
    assert heads_named(rewritten, asked_name(("canmove", 2)))  # restricted, as above
    for name in ("legal", "next", "goal", "terminal"):
        assert heads_named(rewritten, name) == heads_named(written, name)
    assert not heads_named(rewritten, asked_name(("goal", 2)))


def test_a_reader_bound_only_by_a_move_keeps_the_relation_whole() -> None:
    """``reach`` is read where only ``does`` binds its player: an asked relation there
    would depend on the move, and ``reach`` on it; so it is derived whole. ``canmove``
    and ``anymove`` then only copy what is derived whole anyway: restricting them would
    cost as much as it saves, so they are left whole too."""
    assert restrict_to_asked(rules_of(SEEN_BY_MOVES)) == rules_of(SEEN_BY_MOVES)


def test_a_relation_that_copies_fluents_is_left_whole() -> None:
    """``placed`` picks the runners' fluents out of the state: no cheaper restricted."""
    text = (
        RUNNERS
        + """
    (<= (placed ?p ?x) (true (at ?p ?x)))
    (<= (legal ?p (stay ?x)) (true (control ?p)) (placed ?p ?x))
    """
    )
    rewritten = restrict_to_asked(rules_of(text))
    assert heads_named(rewritten, "placed") == heads_named(rules_of(text), "placed")
    assert heads_named(rewritten, asked_name(("canmove", 2)))  # the others still are


def test_a_reader_bound_by_static_literals_alone_keeps_the_relation_whole() -> None:
    """``(role ?p)`` asks about every role: an asked relation would only add work."""
    rewritten = restrict_to_asked(rules_of(ASKED_BY_ROLE))
    assert not any(is_asked(rule.head_key) for rule in rewritten)
    assert rewritten == rules_of(ASKED_BY_ROLE)


def test_the_interpreter_evaluates_the_restricted_rules() -> None:
    game = Game.from_text(RUNNERS, engine="interpreter")
    assert isinstance(game.engine, Interpreter)
    keys = set(game.engine.program.layer_of)
    assert asked_name(("canmove", 2)) in {key[0] for key in keys if isinstance(key, tuple)}
    # the asked relations are computed once a state, like the relations they restrict
    for key, layer in game.engine.program.layer_of.items():
        if is_asked(key):
            assert layer == "state"


VARIANTS = {
    "as written": RUNNERS,
    "reach read where a move binds it": SEEN_BY_MOVES,
    "anymove asked about every role": ASKED_BY_ROLE,
    "rested asked alike": RESTING,
}


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_the_restricted_rules_answer_as_the_rules_as_written(variant: str) -> None:
    """On every reachable state: the interpreter (restricted) and the compiled engine (as
    written) give the same legal moves, successors, terminal flags and goals."""
    text = VARIANTS[variant]
    interpreted = Game.from_text(text, engine="interpreter")
    compiled = Game.from_text(text, engine="compiled")
    states = reachable_states(compiled, 5000)
    assert len(states) > 20
    assert assert_same_answers(interpreted, compiled, states)  # terminal states among them
