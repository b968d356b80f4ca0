"""The start clock decides how long loading a game may spend compiling it."""

from __future__ import annotations

import pytest

from players.agent import _load_game
from server.gdl import Game, parse_gdl
from server.gdl import compile_budget as budgets
from server.gdl.compile_budget import CompileBudget
from server.gdl.compiled.engine import DEFAULT_MAX_GROUND_RULES, DEFAULT_TIME_LIMIT, rule_budget
from server.gdl.game import forget_failed_compiles
from server.protocol import Start

CELLS = 12
CUBE = f"""
(role r)
(init (cell 0))
{" ".join(f"(succ {i} {i + 1})" for i in range(CELLS - 1))}
(<= (legal r (step ?y)) (true (cell ?x)) (succ ?x ?y))
(<= (next (cell ?y)) (does r (step ?y)))
(<= (next (cell ?x)) (true (cell ?x)))
(<= (triple ?a ?b ?c) (true (cell ?a)) (true (cell ?b)) (true (cell ?c)))
(<= terminal (triple ?a ?a ?a) (true (cell {CELLS - 1})))
(<= (goal r 100) terminal)
(<= (goal r 0) (not terminal))
"""
"""A game of 1,728 ground ``triple`` rules (one per three cells): over the 1,000 that
0.02 s of compiling allows, far under the 50,000 of 1 s (it compiles in about 0.1 s)."""


@pytest.fixture(autouse=True)
def fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    """No remembered failures, and no overrides from the environment."""
    forget_failed_compiles()
    monkeypatch.delenv(budgets.TIME_LIMIT_VARIABLE, raising=False)
    monkeypatch.delenv(budgets.MAX_RULES_VARIABLE, raising=False)


@pytest.fixture
def tiny_budgets(monkeypatch: pytest.MonkeyPatch) -> None:
    """Budgets of 0.02 s to 1 s instead of 2 s to 10 s, so that a small game stands for
    a large one (a start clock of 0 s then buys 0.02 s, one of 60 s buys 1 s)."""
    monkeypatch.setattr(budgets, "MIN_TIME_LIMIT", 0.02)
    monkeypatch.setattr(budgets, "MAX_TIME_LIMIT", 1.0)


def test_without_a_start_clock_the_budget_is_the_engines_default() -> None:
    assert budgets.MIN_TIME_LIMIT == DEFAULT_TIME_LIMIT
    assert CompileBudget.for_start_clock(None) == CompileBudget(
        DEFAULT_TIME_LIMIT, DEFAULT_MAX_GROUND_RULES
    )


@pytest.mark.parametrize(
    ("start_clock", "time_limit", "max_rules"),
    [
        (0, 2.0, 300_000),
        (10, 2.0, 300_000),
        (12, 2.0, 300_000),
        (30, 5.0, 300_000),
        (45, 7.5, 355_000),
        (60, 10.0, 480_000),
        (3600, 10.0, 480_000),
    ],
)
def test_a_sixth_of_the_start_clock_from_2_to_10_seconds_with_the_rules_it_allows(
    start_clock: int, time_limit: float, max_rules: int
) -> None:
    budget = CompileBudget.for_start_clock(start_clock)
    assert budget == CompileBudget(time_limit, max_rules)
    assert budget.max_ground_rules >= rule_budget(budget.time_limit)


def test_the_environment_overrides_the_start_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(budgets.TIME_LIMIT_VARIABLE, "3")
    assert CompileBudget.for_start_clock(60) == CompileBudget(3.0, 300_000)
    assert CompileBudget.for_start_clock(None) == CompileBudget(3.0, 300_000)
    monkeypatch.setenv(budgets.MAX_RULES_VARIABLE, "1234")
    assert CompileBudget.for_start_clock(60) == CompileBudget(3.0, 1234)


def test_a_budget_is_cut_down_to_a_ceiling() -> None:
    budget = CompileBudget(10.0, 480_000)
    assert budget.within(20.0) is budget
    assert budget.within(4.0) == CompileBudget(4.0, 480_000)


def test_the_game_compiles_with_the_rules_cap_that_goes_with_its_time_limit() -> None:
    game = Game.from_text(CUBE, compile_time_limit=10.0)
    assert game.compile_budget == CompileBudget(10.0, 480_000)
    assert Game.from_text(CUBE, engine="interpreter").compile_budget is None


@pytest.mark.usefixtures("tiny_budgets")
def test_a_game_compiles_with_a_long_start_clock_and_falls_back_with_a_short_one() -> None:
    rules = parse_gdl(CUBE)
    short = CompileBudget.for_start_clock(0)
    long = CompileBudget.for_start_clock(60)
    assert (short.time_limit, long.time_limit) == (0.02, 1.0)

    def engine(budget: CompileBudget) -> Game:
        return Game(
            rules, compile_time_limit=budget.time_limit, max_ground_rules=budget.max_ground_rules
        )

    assert engine(short).engine.name == "interpreter"
    assert "time limit allows" in (engine(short).fallback_reason or "")
    assert engine(long).engine.name == "compiled"
    assert Game(rules).engine.name == "interpreter"  # no start clock: the least budget


@pytest.mark.usefixtures("tiny_budgets")
def test_a_player_compiles_the_game_when_the_start_clock_allows_it() -> None:
    def start(start_clock: int) -> Start:
        return Start(
            match_id="m", role="r", rules=parse_gdl(CUBE), start_clock=start_clock, play_clock=5
        )

    short, _ = _load_game(start(0))
    long, state = _load_game(start(60))
    assert short.engine.name == "interpreter"
    assert long.engine.name == "compiled"
    assert long.legal_moves(state, "r") == short.legal_moves(short.initial_state(), "r")


@pytest.mark.usefixtures("tiny_budgets")
def test_the_environment_decides_for_every_start_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(budgets.TIME_LIMIT_VARIABLE, "0.02")
    game, _ = _load_game(
        Start(match_id="m", role="r", rules=parse_gdl(CUBE), start_clock=60, play_clock=5)
    )
    assert game.engine.name == "interpreter"
