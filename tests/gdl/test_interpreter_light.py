"""Light state relations: a relation that may be computed on demand is counted against
its budget one derivation at a time (a Python call per fact). Once it has stayed well
within the budget for LIGHT_AFTER states in a row, it is computed without counting and
its size checked afterwards, through the plain path that skips the per-component checks.
A light relation that grows past a LIGHT_SHARE of the budget is counted again, and one
that grows past the budget is computed on demand, as if the count had passed it.

Here a relation is small (empty) for 80 steps and then holds 1,600 facts: the answers must
be the same with the light path as without it. (The plain path waits, too, until the
relation is no longer shared between states: every state differs, so after SHARE_TRIAL.)
"""

from __future__ import annotations

import pytest

from server.gdl.interpreter import Interpreter
from server.gdl.interpreter import engine as interpreter_engine
from server.gdl.interpreter.engine import LIGHT_AFTER, SHARE_TRIAL, STATE_MATERIALISE_BUDGET
from server.gdl.parser import parse_gdl, parse_term
from server.gdl.state import State

GROWS_AT = 80
LAST = 90
SIDE = 40
GROWING = f"""
(role counter)
(init (step 0))
{" ".join(f"(succ {n} {n + 1})" for n in range(LAST))}
{" ".join(f"(late {n})" for n in range(GROWS_AT, LAST + 1))}
{" ".join(f"(num {k})" for k in range(SIDE))}
(<= (small ?n) (true (step ?n)))
(<= (big ?k ?j) (true (step ?n)) (late ?n) (num ?k) (num ?j))
(<= (legal counter tick) (small ?n))
(<= (legal counter wait) (big 1 ?j))
(<= (next (step ?m)) (true (step ?n)) (succ ?n ?m))
(<= terminal (true (step {LAST})))
(<= (goal counter 100) (big 3 4))
(<= (goal counter 0) (true (step ?n)) (not (late ?n)))
"""
"""``big`` is empty for GROWS_AT steps (light by then), then SIDE * SIDE facts, past the
small budget; legal asks one fact of it in every state."""


def walk(engine: Interpreter) -> list[tuple[list[object], bool, list[object]]]:
    """Legal moves, terminal and goals in every state, ticking to the end."""
    seen = []
    state: State = engine.initial_state()
    while True:
        terminal = engine.is_terminal(state)
        seen.append(
            (engine.legal_moves(state, "counter"), terminal, engine.goal_values(state, "counter"))
        )
        if terminal:
            return seen
        state = engine.next_state(state, [parse_term("tick")])


def component_of(engine: Interpreter, name: str, arity: int) -> int:
    return engine.program.component_of[(name, arity)]


def test_a_relation_small_for_many_states_becomes_light() -> None:
    assert GROWS_AT > SHARE_TRIAL + 2 > LIGHT_AFTER
    engine = Interpreter(parse_gdl(GROWING))
    state = engine.initial_state()
    for _ in range(SHARE_TRIAL + 2):
        engine.legal_moves(state, "counter")
        state = engine.next_state(state, [parse_term("tick")])
    big = component_of(engine, "big", 2)
    assert big in engine._light
    assert big in engine._plain  # evaluated without the per-component checks
    assert engine._plain[big][2] == STATE_MATERIALISE_BUDGET  # checked against a LIGHT_SHARE of it


def test_a_light_relation_that_grows_past_the_budget_gives_the_same_answers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    light = walk(Interpreter(parse_gdl(GROWING)))
    monkeypatch.setattr(interpreter_engine, "LIGHT_AFTER", 10**9)  # never light
    counted = walk(Interpreter(parse_gdl(GROWING)))
    assert light == counted
    assert [moves for moves, _, _ in light[GROWS_AT - 1 : GROWS_AT + 1]] == [
        ["tick"],
        ["tick", "wait"],
    ]
    assert light[-1] == (["tick", "wait"], True, ["100"])


def test_past_the_budget_the_light_relation_is_no_longer_light_or_plain() -> None:
    engine = Interpreter(parse_gdl(GROWING))
    engine._may_try_budgets = False  # keep the small budget: no trial of the others
    walk(engine)
    big = component_of(engine, "big", 2)
    assert big not in engine._light
    assert big not in engine._plain
    assert ("big", 2) in engine._demand  # 1,600 facts: computed on demand since


MIDDLING_SIDE = 11
MIDDLING = f"""
(role counter)
(init (step 0))
{" ".join(f"(succ {n} {n + 1})" for n in range(LAST))}
{" ".join(f"(num {k})" for k in range(MIDDLING_SIDE))}
(<= (middling ?k ?j) (true (step ?n)) (num ?k) (num ?j))
(<= (legal counter tick) (middling 1 ?j))
(<= (next (step ?m)) (true (step ?n)) (succ ?n ?m))
(<= terminal (true (step {LAST})))
(goal counter 100)
"""
"""``middling`` holds MIDDLING_SIDE squared facts in every state: 121, two fifths of the
small budget."""


def test_a_relation_within_half_the_budget_becomes_light() -> None:
    assert STATE_MATERIALISE_BUDGET / 2 > MIDDLING_SIDE**2 > STATE_MATERIALISE_BUDGET / 4
    engine = Interpreter(parse_gdl(MIDDLING))
    state = engine.initial_state()
    for _ in range(SHARE_TRIAL + 2):
        assert engine.legal_moves(state, "counter") == ["tick"]
        state = engine.next_state(state, [parse_term("tick")])
    assert component_of(engine, "middling", 2) in engine._light
