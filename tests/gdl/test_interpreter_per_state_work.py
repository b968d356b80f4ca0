"""The interpreter's fixed work per state and per joint move: move rules whose ``does``
literals match no move are not run, an index reads only the facts of its head, and a
rule whose first literal matches nothing looks up nothing more.
"""

from __future__ import annotations

import random

import pytest

from server.gdl import Game, IllegalMoveError
from server.gdl.interpreter import Interpreter
from server.gdl.interpreter.codegen import IndexSpec, Relation, RuleCompiler
from server.gdl.interpreter.engine import NEXT_KEY, TRUE_KEY, may_match
from server.gdl.interpreter.program import analyse
from server.gdl.parser import parse_gdl

COUNTER = """
(role p) (role q)
(val 1) (val 2)
(init (n 0))
(<= (legal p (a ?x)) (val ?x))
(<= (legal p b) (true (n ?k)))
(<= (legal q (mark ?x)) (val ?x))
(<= (legal q (mark q)) (true (n 0)))
(<= (next (n 1)) (does p (a 1)))
(<= (next (n 3)) (does p (a 1)) (true (n 1)))
(<= (next (n 2)) (does p (a 2)))
(<= (next (n 3)) (does p b))
(<= (next (m ?x)) (does p (a ?x)) (true (n 0)))
(<= (next (same ?r)) (does ?r (mark ?r)))
(<= (next (both ?x)) (does p (a ?x)) (does q (mark ?x)))
(<= terminal (true (n 3)))
(<= (goal p 100) (true (n 1)))
(<= (goal p 0) (not (true (n 1))))
(<= (goal q 50) (true (n 0)))
"""


def counted_next_rules(engine: Interpreter) -> list[int]:
    """Count from now on the runs of each rule of the ``next`` component (by number)."""
    index = engine.program.component_of[NEXT_KEY]
    component = engine.program.components[index]
    calls = [0] * len(component.rules)
    for number, compiled in enumerate(engine._rules_of(component)):
        naive = compiled.naive

        def counted(db: dict, add: object, number: int = number, naive: object = naive) -> None:
            calls[number] += 1
            naive(db, add)  # type: ignore[operator]

        compiled.naive = counted
    return calls


def test_move_rules_whose_does_literals_match_no_move_are_not_run() -> None:
    engine = Interpreter(parse_gdl(COUNTER))
    calls = counted_next_rules(engine)
    start = engine.initial_state()
    after = engine.next_state(start, [("a", "2"), ("mark", "2")])
    assert after.facts == {("n", "2"), ("m", "2"), ("both", "2")}
    # (n 2), (m ?x), (same ?r) (its pattern lets ``q``'s (mark 2) through) and (both ?x)
    assert calls == [0, 0, 1, 0, 1, 1, 1]
    again = engine.next_state(start, [("b"), ("mark", "q")])
    assert again.facts == {("n", "3"), ("same", "q")}
    assert calls == [0, 0, 1, 1, 1, 2, 1]


def test_a_does_pattern_lets_through_every_move_it_may_match() -> None:
    assert may_match(("p", ("a", "?x")), ("p", ("a", "1")))
    assert may_match(("?r", ("mark", "?r")), ("p", ("mark", "q")))  # each variable alone
    assert not may_match(("p", ("a", "?x")), ("q", ("a", "1")))
    assert not may_match(("p", ("a", "?x")), ("p", ("a", "1", "2")))
    assert not may_match(("p", ("a", "?x")), ("p", "a"))
    assert not may_match(("p", "b"), ("p", ("b",)))


@pytest.mark.source_modules
def test_random_playouts_with_the_rules_chosen_per_move_agree_with_every_rule_run() -> None:
    chosen = Interpreter(parse_gdl(COUNTER))
    every = Interpreter(parse_gdl(COUNTER))
    every._rules_for = lambda component, matched: tuple(range(len(component.rules)))  # type: ignore[method-assign]
    rng = random.Random(3)
    for _ in range(20):
        state = chosen.initial_state()
        while not chosen.is_terminal(state):
            moves = [rng.choice(chosen.legal_moves(state, role)) for role in chosen.roles]
            assert [every.legal_moves(state, role) for role in every.roles] == [
                chosen.legal_moves(state, role) for role in chosen.roles
            ]
            following = chosen.next_state(state, moves)
            assert every.next_state(state, moves) == following
            state = following
        assert every.is_terminal(state)
        for role in chosen.roles:
            assert chosen.goal_values(state, role) == every.goal_values(state, role)


def test_an_index_reads_only_the_facts_whose_first_argument_has_its_head() -> None:
    facts: set[tuple] = {(("cell", str(row), "b"),) for row in range(6)}
    facts |= {(("cell", "x"),), (("step", "1"),), ("control",), (("control", "x", "y"),)}
    spec = IndexSpec((((0,), "cell", 2),), ((0, 2),))
    assert spec.head == "cell"
    read: list[list] = []
    build = spec.build

    def recorded(given: object) -> object:
        read.append(list(given))  # type: ignore[call-overload]
        return build(given)  # type: ignore[arg-type]

    spec.build = recorded
    relation = Relation(set(facts))
    index = relation.index(spec)
    assert len(read) == 1
    assert {fact[0][0] for fact in read[0]} == {"cell"}
    assert len(read[0]) == 7  # cell/1 among them: the build still checks the arity
    assert isinstance(index, dict) and set(index) == {"b"} and len(index["b"]) == 6
    # no structure on the first argument: every fact
    every = IndexSpec((), ())
    assert every.head is None
    assert sorted(map(repr, relation.index(every))) == sorted(map(repr, facts))  # type: ignore[call-overload]


def test_a_relation_whose_facts_change_groups_them_again() -> None:
    spec = IndexSpec((((0,), "cell", 1),), ())
    relation = Relation({(("cell", "1"),)})
    assert relation.index(spec) == [(("cell", "1"),)]
    relation.facts.add((("cell", "2"),))
    relation.invalidate()
    assert sorted(relation.index(spec)) == [(("cell", "1"),), (("cell", "2"),)]  # type: ignore[call-overload]


def test_a_rule_whose_first_literal_matches_nothing_indexes_nothing_more() -> None:
    (rule,) = analyse(parse_gdl("(<= (h ?x ?y) (a ?x) (b ?x ?y) (c ?y))")).rules
    cheap = {("a", 1): 1.0, ("b", 2): 10.0, ("c", 1): 100.0}
    compiler = RuleCompiler(lambda key, spec, constants: cheap.get(key, 1000.0))  # type: ignore[arg-type]
    naive = compiler.compile(rule, frozenset()).naive
    b = Relation({("1", "2"), ("3", "4")})
    c = Relation({("2",)})
    db = {("a", 1): Relation(), ("b", 2): b, ("c", 1): c}
    found: set = set()
    naive(db, found.add)
    assert not found
    assert not b._indexes and not c._indexes  # nothing looked up past the empty ``a``
    db[("a", 1)] = Relation({("1",), ("3",)})
    naive(db, found.add)
    assert found == {("1", "2")}
    assert b._indexes  # looked up once ``a`` had facts


def test_the_state_asked_last_is_forgotten_with_the_cached_states() -> None:
    engine = Interpreter(parse_gdl(COUNTER))
    start = engine.initial_state()
    assert len(engine.legal_moves(start, "p")) == 3
    first = engine._context(start)
    assert engine._context(start) is first
    engine._drop_contexts()
    assert engine._context(start) is not first
    assert TRUE_KEY in engine._context(start).db


def test_the_given_relations_are_not_in_the_plans_of_a_step() -> None:
    engine = Interpreter(parse_gdl(COUNTER))
    plans = [*engine._state_plans.values(), engine._move_plan]
    assert engine._input_components  # true and does
    assert all(c.index not in engine._input_components for plan in plans for c in plan)
    assert engine._move_plan  # the next rules are still run
    after = engine.next_state(engine.initial_state(), [("a", "1"), ("mark", "1")])
    assert after.facts == {("n", "1"), ("m", "1"), ("both", "1")}


def test_a_step_checks_and_plays_its_moves_in_one_call() -> None:
    engine = Interpreter(parse_gdl(COUNTER))
    start = engine.initial_state()
    game = Game(parse_gdl(COUNTER), engine="interpreter")
    p_moves, q_moves = game.legal_moves(start, "p"), game.legal_moves(start, "q")
    for p_move in p_moves:
        for q_move in q_moves:
            expected = engine.next_state(start, [p_move, q_move])
            # public terms as legal_moves hands them out, and plain values
            assert engine.next_if_legal(start, [p_move, q_move]) == expected
            assert engine.next_if_legal(start, [tuple(p_move), str(q_move)]) is None  # KIF text
            assert game.next_state(start, [p_move, q_move]) == expected
            assert game.next_state(start, [str(p_move), str(q_move)]) == expected
    assert engine.next_if_legal(start, [("a", "3"), ("mark", "1")]) is None  # not legal
    assert engine.next_if_legal(start, [("a", "1")]) is None  # one move short
    with pytest.raises(IllegalMoveError):
        game.next_state(start, [("a", "3"), ("mark", "1")])
    with pytest.raises(TypeError):  # unhashable: Game takes it the slow way
        engine.next_if_legal(start, [["a", "1"], ("mark", "1")])
    with pytest.raises(TypeError, match="a move must be a term or KIF text"):
        game.next_state(start, [["a", "1"], ("mark", "1")])


FILLING = """
(role p)
(cell 1) (cell 2) (cell 3)
(val a) (val b)
(succ 0 1) (succ 1 2) (succ 2 3)
(init (step 0))
(<= (legal p (put ?c ?v)) (cell ?c) (val ?v) (not (true (filled ?c))))
(<= (legal p (wait ?n)) (true (step ?n)))
(<= (next (filled ?c)) (does p (put ?c ?v)))
(<= (next (filled ?c)) (true (filled ?c)))
(<= (next (step ?m)) (true (step ?n)) (succ ?n ?m))
(<= terminal (true (filled 1)) (true (filled 2)) (true (filled 3)))
(<= (goal p 100) terminal)
"""


def legal_facts(engine: Interpreter, state: object) -> set[tuple]:
    return set(engine._legal_in(state).legal_facts)  # type: ignore[arg-type]


def test_legal_moves_met_again_in_another_state_are_the_same_objects() -> None:
    """A legal move derived again is replaced by the fact met first: the new tuples die
    at once, so the cyclic collector never walks them (see RuleCompiler.canonical_table)."""
    engine = Interpreter(parse_gdl(FILLING))
    start = engine.initial_state()
    first = {fact: fact for fact in legal_facts(engine, start)}
    after = engine.next_state(start, [("put", "1", "a")])
    again = legal_facts(engine, after)
    assert len(first) == 7 and len(again) == 5
    assert sum(first.get(fact) is fact for fact in again) == 4  # not (wait 1): new
    assert set(engine.legal_moves(after, "p")) == {
        ("put", "2", "a"),
        ("put", "2", "b"),
        ("put", "3", "a"),
        ("put", "3", "b"),
        ("wait", "1"),
    }


def test_the_table_of_canonical_moves_is_emptied_past_its_cap(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from server.gdl.interpreter import codegen

    monkeypatch.setattr(codegen, "CANONICAL_FACTS", 2)  # read as the rules are compiled
    engine = Interpreter(parse_gdl(FILLING))
    reference = Game(parse_gdl(FILLING), engine="interpreter")
    engine.legal_moves(engine.initial_state(), "p")
    (table,) = engine._compiler._tables.values()  # the rules are compiled when first run
    rng = random.Random(5)
    for _ in range(20):  # 6 moves (put) and 4 (wait) met, but never more than 8 kept
        state = engine.initial_state()
        while not engine.is_terminal(state):
            moves = engine.legal_moves(state, "p")
            assert moves == reference.legal_moves(state, "p")
            assert len(table) <= 2 + 6  # emptied before a run past the cap, then one run
            state = engine.next_state(state, [rng.choice(moves)])


def test_a_relation_that_legal_takes_its_moves_from_is_canonical_too() -> None:
    passing_on = FILLING.replace(
        "(<= (legal p (put ?c ?v)) (cell ?c) (val ?v) (not (true (filled ?c))))",
        "(<= (feasible p (put ?c ?v)) (cell ?c) (val ?v) (not (true (filled ?c))))\n"
        "(<= (legal ?r ?m) (role ?r) (feasible ?r ?m))",
    )
    engine = Interpreter(parse_gdl(passing_on))
    assert engine._canonical == {("legal", 2), ("feasible", 2)}
    assert Interpreter(parse_gdl(FILLING))._canonical == {("legal", 2)}
    start = engine.initial_state()
    engine.legal_moves(start, "p")
    first = {fact: fact for fact in engine._context(start).db[("feasible", 2)].facts}
    after = engine.next_state(start, [("put", "1", "a")])
    engine.legal_moves(after, "p")
    again = engine._context(after).db[("feasible", 2)].facts
    assert len(first) == 6 and len(again) == 4
    assert all(first[fact] is fact for fact in again)
