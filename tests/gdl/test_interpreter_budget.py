"""The interpreter's budget for state relations: small (computed on demand past 300 facts)
or full (materialised up to 30,000), chosen per game by timing both on the first calls.

The clock of the trial is replaced here by one that charges each budget a fixed time per
call, so the choice is deterministic; the answers must not depend on it. The last test
runs the real clock on two corpus games whose difference is large (5 to 15 times).
"""

from __future__ import annotations

import random
import signal
from pathlib import Path

import pytest
from shared_material import shared_path

from server.gdl.interpreter import Interpreter
from server.gdl.interpreter import engine as interpreter_engine
from server.gdl.parser import Rule, parse_gdl

SIDE = 20
PAINT = f"""
(role painter)
{" ".join(f"(index {i})" for i in range(SIDE))}
{" ".join(f"(init (cell {x} {y} blank))" for x in range(SIDE) for y in range(SIDE))}
(init (step 0))
{" ".join(f"(succ {i} {i + 1})" for i in range(6))}
(<= (colour ?x ?y ?c) (true (cell ?x ?y ?c)))
(<= (legal painter (paint ?x ?y)) (index ?x) (index ?y) (colour ?x ?y blank))
(<= (next (cell ?x ?y red)) (does painter (paint ?x ?y)))
(<= (next (cell ?x ?y ?c)) (true (cell ?x ?y ?c)) (not (does painter (paint ?x ?y))))
(<= (next (step ?m)) (true (step ?n)) (succ ?n ?m))
(<= terminal (true (step 6)))
(<= (goal painter 100) (true (step 6)))
"""
"""One state relation of 400 facts (``colour``), asked for every cell: past the small
budget, like ad_game_2x2's."""

SMALL_RULES = """
(role walker)
(init (at 0))
(succ 0 1) (succ 1 2) (succ 2 3)
(<= (legal walker step) (true (at ?n)))
(<= (next (at ?m)) (true (at ?n)) (succ ?n ?m))
(<= terminal (true (at 3)))
(<= (goal walker 100) (true (at 3)))
"""
"""No state relation near the small budget."""


def rules(text: str) -> list[Rule]:
    return parse_gdl(text)


class WayClock:
    """A trial clock charging each budget a fixed time per call.

    The trial reads the clock three times per call: before, between and after the two
    budgets, the small one first on odd calls and the full one first on even calls.
    """

    def __init__(self, small_ns: int, full_ns: int) -> None:
        self.small_ns = small_ns
        self.full_ns = full_ns
        self.reads = 0
        self.now = 0

    def __call__(self) -> int:
        read, call = self.reads % 3, self.reads // 3 + 1
        self.reads += 1
        first, second = (self.small_ns, self.full_ns) if call % 2 else (self.full_ns, self.small_ns)
        if read == 1:
            self.now += first
        elif read == 2:
            self.now += second
        return self.now


def interpreter(text: str, clock: WayClock | None = None) -> Interpreter:
    engine = Interpreter(rules(text))
    if clock is not None:
        engine.trial_clock = clock  # type: ignore[method-assign]
    return engine


def playouts(engine: Interpreter, count: int = 6) -> list[tuple]:
    """Everything ``count`` random playouts ask, step by step."""
    rng = random.Random(3)
    seen: list[tuple] = []
    for _ in range(count):
        seen += playout(engine, rng)
    return seen


def playout(engine: Interpreter, rng: random.Random) -> list[tuple]:
    seen: list[tuple] = []
    state = engine.initial_state()
    while True:
        terminal = engine.is_terminal(state)
        legal = [engine.legal_moves(state, role) for role in engine.roles]
        seen.append((state, terminal, legal))
        if terminal:
            break
        joint = [rng.choice(moves) for moves in legal]
        assert all(
            engine.legal_move(state, role, move) == move
            for role, move in zip(engine.roles, joint, strict=True)
        )
        state = engine.next_state(state, joint)
    seen.append(tuple(engine.goal_values(state, role) for role in engine.roles))
    return seen


def fixed_budget(text: str) -> Interpreter:
    """An interpreter that keeps the small budget without a trial (the reference)."""
    engine = interpreter(text)
    engine._may_try_budgets = False
    return engine


def test_a_game_without_large_state_relations_runs_no_trial() -> None:
    engine = interpreter(SMALL_RULES, WayClock(1, 1))
    playouts(engine)
    assert engine.budget_choice is None
    assert engine._state_budget == interpreter_engine.STATE_MATERIALISE_BUDGET


def test_the_full_budget_is_kept_when_it_is_faster_with_the_same_answers() -> None:
    engine = interpreter(PAINT, WayClock(small_ns=3_000_000, full_ns=1_000_000))
    reference = playouts(fixed_budget(PAINT))
    first = playouts(engine)
    assert engine.budget_choice == "full"
    assert engine._state_budget == interpreter_engine.MATERIALISE_BUDGET
    assert first == reference
    assert playouts(engine) == reference  # answered with the full budget only
    assert engine._trial is None
    colour = engine._context(engine.initial_state()).db[("colour", 3)]
    assert len(colour.facts) == SIDE * SIDE  # materialised, not a table on demand


def test_the_small_budget_is_kept_when_it_is_faster() -> None:
    engine = interpreter(PAINT, WayClock(small_ns=1_000_000, full_ns=3_000_000))
    reference = playouts(fixed_budget(PAINT))
    assert playouts(engine) == reference
    assert engine.budget_choice == "small"
    assert engine._state_budget == interpreter_engine.STATE_MATERIALISE_BUDGET
    table = engine._context(engine.initial_state()).db[("colour", 3)]
    assert isinstance(table, interpreter_engine.DemandTable)


def transitions_until_chosen(engine: Interpreter) -> int:
    """Transitions of random playouts until the trial has chosen; answers checked on the way."""
    reference = fixed_budget(PAINT)
    rng = random.Random(4)
    transitions = 0
    while engine.budget_choice is None:
        state = engine.initial_state()
        while engine.budget_choice is None and not engine.is_terminal(state):
            moves = engine.legal_moves(state, "painter")
            assert moves == reference.legal_moves(state, "painter")
            joint = [rng.choice(moves)]
            state, expected = engine.next_state(state, joint), reference.next_state(state, joint)
            assert state == expected
            transitions += 1
    return transitions


def test_the_trial_ends_early_when_one_budget_is_far_slower() -> None:
    """Chess must not spend the whole trial materialising its large relations in full."""
    engine = interpreter(PAINT, WayClock(small_ns=1_000_000, full_ns=100_000_000))
    assert transitions_until_chosen(engine) <= 2
    assert engine.budget_choice == "small" and engine._trial is None


def test_the_full_budget_may_end_the_trial_early_too() -> None:
    engine = interpreter(PAINT, WayClock(small_ns=100_000_000, full_ns=1_000_000))
    assert transitions_until_chosen(engine) <= 2
    assert engine.budget_choice == "full" and engine._trial is None


def test_the_trial_counts_votes_not_sums() -> None:
    """Full is faster on most transitions; one slow call of it (a garbage collection,
    say) does not turn the choice, as long as it is not four times the small sum."""
    clock = WayClock(small_ns=2_000_000, full_ns=1_000_000)
    engine = interpreter(PAINT, clock)
    transitions = 0
    while engine.budget_choice is None:
        state = engine.initial_state()
        while engine.budget_choice is None and not engine.is_terminal(state):
            clock.full_ns = 50_000_000 if transitions == 10 else 1_000_000
            moves = engine.legal_moves(state, "painter")
            state = engine.next_state(state, [moves[0]])
            transitions += 1
    assert transitions == interpreter_engine.TRIAL_TRANSITIONS
    assert engine.budget_choice == "full"


def test_a_call_that_runs_away_with_the_full_budget_is_cut(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """laikLee_hex materialises a path relation for minutes with the full budget."""
    monkeypatch.setattr(interpreter_engine, "TRIAL_CUT_NS", 50_000_000)
    engine = Interpreter(rules(PAINT))
    state = engine.initial_state()
    engine.legal_moves(state, "painter")  # starts the trial
    assert engine._trial is not None

    def forever(state: object) -> bool:
        while True:
            pass

    engine._trial.full._is_terminal = forever  # type: ignore[method-assign]
    assert engine.is_terminal(state) is False
    assert engine.budget_choice == "small" and engine._trial is None
    assert len(engine.legal_moves(state, "painter")) == SIDE * SIDE


def test_the_trial_keeps_a_cpu_alarm_armed_by_its_caller(monkeypatch: pytest.MonkeyPatch) -> None:
    """A rules worker arms ITIMER_PROF with its step budget around every request: the
    trial's own alarm must leave it armed, less the time spent, with its handler."""
    fired: list[int] = []
    previous = signal.signal(signal.SIGPROF, lambda signum, frame: fired.append(signum))
    try:
        signal.setitimer(signal.ITIMER_PROF, 50.0)
        engine = Interpreter(rules(PAINT))
        state = engine.initial_state()
        for _ in range(3):
            engine.legal_moves(state, "painter")  # starts the trial, then runs both ways
            engine.is_terminal(state)
        left, _ = signal.getitimer(signal.ITIMER_PROF)
        assert 40.0 < left <= 50.0
        assert signal.getsignal(signal.SIGPROF) is not previous and not fired
        # an alarm of the caller's that rings before the trial's would: the trial leaves it
        monkeypatch.setattr(interpreter_engine, "TRIAL_CUT_NS", 100_000_000_000)
        signal.setitimer(signal.ITIMER_PROF, 30.0)
        engine = Interpreter(rules(PAINT))
        engine.legal_moves(engine.initial_state(), "painter")
        engine.is_terminal(engine.initial_state())
        left, _ = signal.getitimer(signal.ITIMER_PROF)
        assert 20.0 < left <= 30.0
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)


CORPUS_CHOICES = [
    ("ad_game_2x2", "full"),
    ("skirmishNew", "full"),
    ("othelloSuicide", "full"),
    ("chess", "small"),
]
"""Games whose two budgets differ 4 to 60 times (CPU time, so a loaded machine disturbs
the choice little): the first ones are faster with state relations materialised. The mummy
mazes are not among them: their state relations depend on the walls only, so both budgets
share them between states and run about as fast."""


@pytest.mark.parametrize(("name", "choice"), CORPUS_CHOICES)
def test_corpus_games_get_the_faster_budget_with_the_same_answers(name: str, choice: str) -> None:
    """Along random playouts, through the trial and 20 transitions beyond, the answers
    equal those of an interpreter that keeps the small budget."""
    path: Path = shared_path("conformance", "games", f"{name}.kif")
    game_rules = parse_gdl(path.read_text(encoding="utf-8"))
    engine, reference = Interpreter(game_rules), Interpreter(game_rules)
    reference._may_try_budgets = False
    rng = random.Random(5)
    beyond = 0
    while beyond < 20:
        state = engine.initial_state()
        while beyond < 20 and not engine.is_terminal(state):
            assert not reference.is_terminal(state)
            legal = [engine.legal_moves(state, role) for role in engine.roles]
            assert legal == [reference.legal_moves(state, role) for role in engine.roles]
            joint = [rng.choice(moves) for moves in legal]
            state, expected = engine.next_state(state, joint), reference.next_state(state, joint)
            assert state == expected
            beyond += engine.budget_choice is not None
        for role in engine.roles:
            assert engine.goal_values(state, role) == reference.goal_values(state, role)
    assert engine.budget_choice == choice
