"""Legal moves nested by what they share inside the gates they read.

A move whose condition reads a gate written inline (one body, one reader) hid that
body's literals from the nesting of :func:`items_code`: amazons_10x10's 6,000 moves each
tested the square the queen moves from on their own. A role with
:data:`EXPAND_MIN_OUTPUTS` moves or more has such gates expanded into the conditions of
its moves; the answers stay those of the interpreter.
"""

from __future__ import annotations

import random

import pytest
from compiled_checks import fast_path_differences, state_disagreements

from server.gdl.compiled import CompiledEngine, codegen
from server.gdl.compiled.codegen import EXPAND_MIN_OUTPUTS
from server.gdl.interpreter import Interpreter
from server.gdl.parser import parse_gdl
from server.gdl.state import State


def queens_game(side: int, steps: int) -> str:
    """Two queens on a ``side`` square board; a move takes one to any empty square (on
    the first step, to another column only)."""
    numbers = range(1, side + 1)
    queens = ((1, 1), (side, side))
    facts = " ".join(f"(index {i})" for i in numbers)
    facts += " " + " ".join(f"(succ {k} {k + 1})" for k in range(steps))
    init = " ".join(
        f"(init (cell {x} {y} {'q' if (x, y) in queens else 'e'}))"
        for x in numbers
        for y in numbers
    )
    return f"""
    (role p)
    {facts}
    {init}
    (init (step 0))
    (<= (free ?x ?y) (true (cell ?x ?y e)))
    (<= (reach ?x1 ?y1 ?x2 ?y2) (true (cell ?x1 ?y1 q)) (free ?x2 ?y2) (index ?x1) (index ?y1))
    (<= (legal p (move ?x1 ?y1 ?x2 ?y2)) (reach ?x1 ?y1 ?x2 ?y2) (not (true (step 0))))
    (<= (legal p (move ?x1 ?y1 ?x2 ?y2)) (reach ?x1 ?y1 ?x2 ?y2) (true (step 0))
        (distinct ?x1 ?x2))
    (<= (touched ?x ?y) (does p (move ?x ?y ?a ?b)))
    (<= (touched ?x ?y) (does p (move ?a ?b ?x ?y)))
    (<= (next (cell ?x ?y q)) (does p (move ?a ?b ?x ?y)))
    (<= (next (cell ?x ?y e)) (does p (move ?x ?y ?a ?b)))
    (<= (next (cell ?x ?y ?c)) (true (cell ?x ?y ?c)) (not (touched ?x ?y)))
    (<= (next (step ?n)) (true (step ?m)) (succ ?m ?n))
    (<= terminal (true (step {steps})))
    (<= (goal p 100) (true (cell 1 1 q)))
    (<= (goal p 0) (not (true (cell 1 1 q))))
    """


def legal_source(engine: CompiledEngine) -> str:
    source = engine.source
    start = source.index("def legal(")
    return source[start : source.index("\ndef ", start)]


def random_states(engine: CompiledEngine, count: int) -> list[State]:
    rng = random.Random(2)
    states = []
    state = engine.initial_state()
    while len(states) < count:
        states.append(state)
        if engine.is_terminal(state):
            state = engine.initial_state()
            continue
        state = engine.next_state(state, [rng.choice(engine.legal_moves(state, "p"))])
    return states


@pytest.mark.source_modules
def test_many_moves_are_nested_by_the_literals_of_their_gates(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rules = parse_gdl(queens_game(side=6, steps=10))
    engine = CompiledEngine.from_rules(rules, time_limit=60.0)
    assert len(engine.plan.legal[0]) >= EXPAND_MIN_OUTPUTS  # 36 by 36 moves
    monkeypatch.setattr(codegen, "EXPAND_MIN_OUTPUTS", 10**9)
    unexpanded = CompiledEngine.from_rules(rules, time_limit=60.0)
    assert legal_source(engine) != legal_source(unexpanded)
    interpreter = Interpreter(rules)
    states = random_states(engine, 12)
    assert state_disagreements(engine, interpreter, states) == []
    assert fast_path_differences(engine) == []


@pytest.mark.source_modules
def test_a_few_moves_keep_their_gates(monkeypatch: pytest.MonkeyPatch) -> None:
    """Under the threshold nothing is expanded: breakthrough's 150 moves a role ran
    slower with their gates expanded."""
    rules = parse_gdl(queens_game(side=6, steps=10))
    monkeypatch.setattr(codegen, "EXPAND_MIN_OUTPUTS", 10**9)
    first = CompiledEngine.from_rules(rules, time_limit=60.0)
    monkeypatch.setattr(codegen.GateWriter, "expanded", lambda self, cond: 1 / 0)
    again = CompiledEngine.from_rules(rules, time_limit=60.0)  # expanded is never asked
    assert legal_source(again) == legal_source(first)
