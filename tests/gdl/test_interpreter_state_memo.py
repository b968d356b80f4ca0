"""The interpreter's memo of states met before: where play keeps coming back to the same
states, their legal moves, terminal test, goals and successors are answered from the memo,
the same answers the rules give. A trial that keeps only hashes decides whether states
recur; where they do not, the memo never holds a state, and a memo on that stops finding
what it kept switches off and lets go of it.
"""

from __future__ import annotations

import random

import pytest

from server.gdl import Game
from server.gdl.interpreter import Interpreter, state_memo
from server.gdl.parser import parse_gdl

RING = """
(role walker) (role watcher)
(init (at 0)) (init (lamp off))
(succ 0 1) (succ 1 2) (succ 2 3) (succ 3 0)
(<= (legal walker (step ?y)) (true (at ?x)) (succ ?x ?y))
(<= (legal walker (jump ?z)) (true (at ?x)) (succ ?x ?y) (succ ?y ?z))
(<= (legal walker stay) (true (at ?x)))
(<= (legal watcher toggle) (true (lamp ?l)))
(<= (legal watcher wait) (true (lamp ?l)))
(<= (next (at ?y)) (does walker (step ?y)))
(<= (next (at ?y)) (does walker (jump ?y)))
(<= (next (at ?x)) (does walker stay) (true (at ?x)))
(<= (next (lamp on)) (does watcher toggle) (true (lamp off)))
(<= (next (lamp off)) (does watcher toggle) (true (lamp on)))
(<= (next (lamp ?l)) (does watcher wait) (true (lamp ?l)))
(<= terminal (true (at 3)) (true (lamp on)))
(<= (goal walker 100) (true (at 3)))
(<= (goal walker 0) (not (true (at 3))))
(<= (goal watcher 50) (true (lamp on)))
(<= (goal watcher 10) (true (lamp off)))
"""
"""Eight states (four squares, a lamp on or off) that random play visits over and over."""

COUNTER = """
(role counter)
(init (count 0))
(<= (legal counter (add 1)) (true (count ?n)))
(<= (legal counter (add 2)) (true (count ?n)))
(<= (next (count ?m)) (true (count ?n)) (does counter (add ?k)) (sum ?n ?k ?m))
(<= terminal (true (count 100000)))
(<= (goal counter 100) (true (count 100000)))
"""
"""A count that only grows: no state comes back (``sum`` is a table built below)."""


def counter_rules(top: int) -> str:
    sums = " ".join(f"(sum {n} {k} {n + k})" for n in range(top) for k in (1, 2))
    return COUNTER + sums


def playout_answers(engine: Interpreter, seed: int, steps: int) -> list[tuple]:
    """Every answer the engine gives along random play (restarting at terminal states)."""
    rng = random.Random(seed)
    state = engine.initial_state()
    seen: list[tuple] = []
    for _ in range(steps):
        terminal = engine.is_terminal(state)
        goals = {role: engine.goal_values(state, role) for role in engine.roles}
        moves = {role: engine.legal_moves(state, role) for role in engine.roles}
        seen.append((state, terminal, goals, moves))
        if terminal:
            state = engine.initial_state()
            continue
        joint = [rng.choice(moves[role]) for role in engine.roles]
        for role, move in zip(engine.roles, joint, strict=True):
            assert engine.legal_move(state, role, move) == move
        state = engine.next_state(state, joint)
    return seen


def remembering(engine: Interpreter) -> Interpreter:
    """The engine with its memo on from the first call (its trial skipped)."""
    engine._memo.on = True
    engine._memo._trial = None
    return engine


def test_recurring_states_are_answered_from_the_memo_with_the_rules_answers() -> None:
    rules = parse_gdl(RING)
    with_memo = Interpreter(rules)
    without = Interpreter(rules, memo=False)
    remembered = playout_answers(with_memo, seed=7, steps=3000)
    computed = playout_answers(without, seed=7, steps=3000)
    assert remembered == computed  # states equal by fluents; every answer the same
    memo = with_memo._memo
    assert memo.on and memo._trial is None  # switched on by its trial
    assert 0 < len(memo._answers) <= 8  # the eight states, nothing else
    assert memo._finds > memo._asks // 2  # most transitions were met before


def test_the_trial_keeps_no_state_and_switches_the_memo_on_where_transitions_recur() -> None:
    engine = Interpreter(parse_gdl(RING))
    memo = engine._memo
    rng = random.Random(2)
    state = engine.initial_state()
    steps = 0
    while not memo.on:
        assert not memo._answers and not memo._successors  # hashes only
        if engine.is_terminal(state):
            state = engine.initial_state()
            continue
        state = engine.next_state(
            state, [rng.choice(engine.legal_moves(state, role)) for role in engine.roles]
        )
        steps += 1
    assert steps == state_memo.TRIAL_STRIDE  # recurring from the first look
    assert memo._trial is None
    engine.next_state(state, [engine.legal_moves(state, role)[0] for role in engine.roles])
    assert memo._successors


def test_a_transition_met_again_returns_the_successor_kept() -> None:
    engine = remembering(Interpreter(parse_gdl(RING)))
    start = engine.initial_state()
    first = engine.next_state(start, [("step", "1"), "toggle"])
    assert engine.next_state(start, [("step", "1"), "toggle"]) is first
    other = engine.next_state(start, [("step", "1"), "wait"])
    assert other is not first and other != first
    assert set(first.facts) == {("at", "1"), ("lamp", "on")}
    assert set(other.facts) == {("at", "1"), ("lamp", "off")}


def test_answers_handed_out_are_copies() -> None:
    engine = remembering(Interpreter(parse_gdl(RING)))
    start = engine.initial_state()
    expected = list(engine.legal_moves(start, "walker"))
    for _ in range(2):  # computed, then from the memo
        engine.legal_moves(start, "walker").clear()
        engine.goal_values(start, "watcher").append("999")
    assert engine.legal_moves(start, "walker") == expected
    assert engine.goal_values(start, "watcher") == ["10"]


def test_the_trial_switches_the_memo_off_where_states_never_recur(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(state_memo, "TRIAL_ASKS", 64)
    monkeypatch.setattr(state_memo, "TRIAL_STRIDE", 16)
    engine = Interpreter(parse_gdl(counter_rules(200)))
    memo = engine._memo
    state = engine.initial_state()
    for step in range(100):
        assert not engine.is_terminal(state)
        assert engine.legal_moves(state, "counter") == [("add", "1"), ("add", "2")]
        state = engine.next_state(state, [("add", "1")])
        assert not memo.on and not memo._answers and not memo._successors
        assert (memo._trial is not None) == (step < 63)
    assert set(state.facts) == {("count", "100")}


def test_a_memo_on_switches_off_when_what_it_keeps_stops_recurring(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(state_memo, "TRIAL_ASKS", 64)
    engine = remembering(Interpreter(parse_gdl(counter_rules(200))))
    memo = engine._memo
    state = engine.initial_state()
    for step in range(64):
        assert memo.on
        state = engine.next_state(state, [("add", "1")])
        if step < 63:
            assert len(memo._successors) == step + 1
    assert not memo.on  # none of the 64 was met again
    assert not memo._answers and not memo._successors and memo._trial is None
    assert set(engine.next_state(state, [("add", "2")]).facts) == {("count", "66")}


def test_the_memo_holds_at_most_its_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(state_memo, "STATES_KEPT", 16)
    monkeypatch.setattr(state_memo, "SUCCESSORS_KEPT", 8)
    monkeypatch.setattr(state_memo, "TRIAL_ASKS", 10**9)  # stays on
    engine = remembering(Interpreter(parse_gdl(counter_rules(300))))
    reference = Interpreter(parse_gdl(counter_rules(300)), memo=False)
    rng = random.Random(3)
    state = engine.initial_state()
    expected = reference.initial_state()
    for _ in range(120):
        move = [rng.choice(engine.legal_moves(state, "counter"))]
        state, expected = engine.next_state(state, move), reference.next_state(expected, move)
        assert state == expected
        assert len(engine._memo._answers) <= 16
        assert len(engine._memo._successors) <= 8


def test_the_memo_holds_at_most_its_fluents(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(state_memo, "FLUENTS_KEPT", 20)
    monkeypatch.setattr(state_memo, "TRIAL_ASKS", 10**9)
    engine = remembering(Interpreter(parse_gdl(RING)))  # two fluents a state
    rng = random.Random(5)
    state = engine.initial_state()
    for _ in range(200):
        if engine.is_terminal(state):
            state = engine.initial_state()
            continue
        joint = [rng.choice(engine.legal_moves(state, role)) for role in engine.roles]
        state = engine.next_state(state, joint)
        memo = engine._memo
        assert 2 * (len(memo._answers) + len(memo._successors)) <= 20
        assert memo._fluents <= 20


def test_a_copy_that_tries_another_budget_keeps_its_own_memo() -> None:
    engine = Interpreter(parse_gdl(RING))
    copy = engine._with_state_budget(0)
    assert copy._memo is not engine._memo and copy._memo._trial is not None
    remembering(engine).legal_moves(engine.initial_state(), "walker")
    assert engine._memo._answers and not copy._memo._answers
    disabled = Interpreter(parse_gdl(RING), memo=False)._with_state_budget(0)._memo
    assert not disabled.on and disabled._trial is None


def test_the_public_api_plays_the_same_with_and_without_the_memo() -> None:
    with_memo = Game.from_text(RING, engine="interpreter")
    without = Game.from_text(RING, engine="interpreter")
    without.engine._memo.switch_off()  # type: ignore[attr-defined]
    assert with_memo.engine._memo._trial is not None  # type: ignore[attr-defined]
    for seed in range(5):
        rng_a, rng_b = random.Random(seed), random.Random(seed)
        a, b = with_memo.initial_state(), without.initial_state()
        for _ in range(200):
            assert with_memo.is_terminal(a) == without.is_terminal(b)
            if with_memo.is_terminal(a):
                assert with_memo.goals(a) == without.goals(b)
                a, b = with_memo.initial_state(), without.initial_state()
                continue
            moves_a = [with_memo.legal_moves(a, role) for role in with_memo.roles]
            assert moves_a == [without.legal_moves(b, role) for role in without.roles]
            a = with_memo.next_state(a, [rng_a.choice(m) for m in moves_a])
            b = without.next_state(b, [rng_b.choice(m) for m in moves_a])
            assert a == b
    assert with_memo.engine._memo.on  # type: ignore[attr-defined]  # and answered from it
