"""Engine ``auto`` keeps the compiled engine unless a timed trial finds the interpreter
faster on the game; that outcome is remembered like a failed compile."""

from __future__ import annotations

import time
from collections.abc import Sequence

import pytest

import server.gdl.compiled
from server.gdl import Game, State
from server.gdl.compiled import CompiledEngine
from server.gdl.engine_trial import FAST_ENOUGH, Race, race, transition_rate
from server.gdl.game import forget_failed_compiles
from server.gdl.interpreter import Interpreter
from server.gdl.parser import parse_gdl

COUNTER = """
(role player)
(init (count 0))
(succ 0 1) (succ 1 2) (succ 2 3) (succ 3 4) (succ 4 5)
(<= (legal player (add ?n)) (true (count ?m)) (succ ?m ?n))
(<= (legal player stay) (true (count ?m)))
(<= (next (count ?n)) (does player (add ?n)))
(<= (next (count ?m)) (does player stay) (true (count ?m)))
(<= terminal (true (count 5)))
(<= (goal player 100) (true (count 5)))
(<= (goal player 0) (not (true (count 5))))
"""


@pytest.fixture(autouse=True)
def no_remembered_failures() -> None:
    forget_failed_compiles()


class SlowCompiled:
    """A compiled engine whose every transition burns ``cost`` seconds of CPU time."""

    def __init__(self, engine: CompiledEngine, cost: float) -> None:
        self.inner = engine
        self.cost = cost
        self.name = engine.name
        self.roles = engine.roles

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)

    def next_state(self, state: State, moves: Sequence[object]) -> State:
        end = time.thread_time() + self.cost
        while time.thread_time() < end:
            pass
        return self.inner.next_state(state, moves)  # type: ignore[arg-type]


def compiling_to(monkeypatch: pytest.MonkeyPatch, cost: float) -> list[str]:
    """Make engine ``auto`` compile to an engine ``cost`` seconds slower per transition."""
    compiles: list[str] = []

    def compile_slowly(rules: object, **limits: object) -> SlowCompiled:
        compiles.append("compile")
        return SlowCompiled(CompiledEngine.from_rules(rules, **limits), cost)  # type: ignore[arg-type]

    monkeypatch.setattr(server.gdl.compiled, "compile_engine", compile_slowly)
    return compiles


def test_a_fast_compiled_engine_is_kept_without_making_an_interpreter() -> None:
    game = Game.from_text(COUNTER)
    assert game.engine.name == "compiled"
    assert game.engine_race is not None
    assert game.engine_race.compiled_rate >= FAST_ENOUGH
    assert game.engine_race.interpreter_rate is None
    assert game.fallback_reason is None


def test_the_interpreter_is_kept_when_the_trial_finds_it_faster(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    compiles = compiling_to(monkeypatch, cost=0.002)  # under 500 transitions a second
    game = Game.from_text(COUNTER)
    assert game.engine.name == "interpreter"
    race_run = game.engine_race
    assert race_run is not None and race_run.interpreter_rate is not None
    assert race_run.compiled_rate < 600 < race_run.interpreter_rate
    assert game.fallback_reason is not None
    assert game.fallback_reason.startswith("the interpreter ran")
    assert game.failed_compile_seconds > 0
    # the race's interpreter plays on: same answers as a fresh one
    state = game.next_state(game.initial_state(), ["(add 1)"])
    assert sorted(map(str, game.legal_moves(state, "player"))) == ["(add 2)", "stay"]

    again = Game.from_text(COUNTER)  # remembered: no second compile, no second race
    assert compiles == ["compile"]
    assert again.engine.name == "interpreter"
    assert again.fallback_reason == game.fallback_reason
    assert again.failed_compile_seconds == 0.0


def test_a_compiled_engine_asked_for_by_name_is_never_raced(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    compiling_to(monkeypatch, cost=0.002)
    game = Game.from_text(COUNTER, engine="compiled")
    assert isinstance(game.engine, SlowCompiled)
    assert game.engine_race is None


def test_the_interpreter_must_win_by_a_margin() -> None:
    assert not Race(compiled_rate=1000.0, interpreter_rate=1200.0).interpreter_wins
    assert Race(compiled_rate=1000.0, interpreter_rate=1300.0).interpreter_wins
    assert not Race(compiled_rate=1000.0, interpreter_rate=None).interpreter_wins


class GoalsCounted:
    """An engine whose goal reads are counted (the interpreter's methods cannot be
    replaced where it is compiled)."""

    def __init__(self, engine: Interpreter) -> None:
        self.engine = engine
        self.asked: list[str] = []

    def __getattr__(self, name: str) -> object:
        return getattr(self.engine, name)

    def goal_values(self, state: State, role: str) -> list:  # type: ignore[type-arg]
        self.asked.append(role)
        return self.engine.goal_values(state, role)


def test_the_trial_reads_goals_at_the_end_of_each_playout() -> None:
    engine = GoalsCounted(Interpreter(parse_gdl(COUNTER)))
    assert transition_rate(engine, seconds=1.0, transitions=200) > 0  # type: ignore[arg-type]
    assert engine.asked  # a playout of COUNTER ends within a few transitions


def test_a_game_over_from_the_start_has_nothing_to_race_on() -> None:
    over = COUNTER.replace("(<= terminal (true (count 5)))", "(<= terminal (true (count 0)))")
    engine = Interpreter(parse_gdl(over))
    assert transition_rate(engine, seconds=1.0, transitions=100) == float("inf")
    outcome, interpreter = race(engine, lambda: engine, seconds=0.1)
    assert outcome.interpreter_rate is None and interpreter is None
