"""The rules workers of a match compile its game within what its start clock buys."""

from __future__ import annotations

import pytest

from server.gdl import Game
from server.gdl import compile_budget as budgets
from server.gdl.game import forget_failed_compiles
from server.match import MatchConfig, MatchRunner
from server.match.rules import RulesBudget, RulesPool, RulesSession
from server.match.rules.budget import COMPILE_SHARE_OF_LOAD, DEFAULT_LOAD_CPU
from server.match.rules.session import engine_for

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
"""1,728 ground ``triple`` rules: over what 0.02 s of compiling allows, not 1 s."""


@pytest.fixture(autouse=True)
def tiny_budgets(monkeypatch: pytest.MonkeyPatch) -> None:
    """Budgets of 0.02 s to 1 s instead of 2 s to 10 s (a start clock of 0 s buys
    0.02 s, one of 60 s buys 1 s), and no overrides from the environment."""
    forget_failed_compiles()
    monkeypatch.delenv(budgets.TIME_LIMIT_VARIABLE, raising=False)
    monkeypatch.delenv(budgets.MAX_RULES_VARIABLE, raising=False)
    monkeypatch.setattr(budgets, "MIN_TIME_LIMIT", 0.02)
    monkeypatch.setattr(budgets, "MAX_TIME_LIMIT", 1.0)


async def _engine_of_worker(rules: str, engine: str, budget: RulesBudget) -> str:
    pool = RulesPool()
    try:
        session = await RulesSession.open(rules, engine, budget, pool=pool)
        await session.close()
        return session.engine
    finally:
        await pool.close()


def test_the_start_clock_decides_the_compile_budget_of_the_rules_worker() -> None:
    short = MatchConfig(start_clock=0).rules_budget
    long = MatchConfig(start_clock=60).rules_budget
    assert (short.compile_time_limit, long.compile_time_limit) == (0.02, 1.0)
    assert long.load_cpu == DEFAULT_LOAD_CPU


async def test_a_long_start_clock_compiles_in_the_worker_what_the_server_could_not() -> None:
    game = Game.from_text(CUBE)  # the server's copy: loaded without a start clock
    assert game.engine.name == "interpreter"
    short = MatchConfig(start_clock=0).rules_budget
    long = MatchConfig(start_clock=60).rules_budget

    assert engine_for(game, short) == "interpreter"  # no second attempt that would fail
    assert engine_for(game, long) == "auto"
    assert await _engine_of_worker(CUBE, engine_for(game, long), long) == "compiled"
    assert await _engine_of_worker(CUBE, "auto", short) == "interpreter"


async def test_a_game_the_interpreter_was_asked_for_stays_on_it() -> None:
    game = Game.from_text(CUBE, engine="interpreter")
    long = MatchConfig(start_clock=60).rules_budget
    assert engine_for(game, long) == "interpreter"
    assert engine_for(Game.from_text(CUBE, compile_time_limit=1.0), long) == "auto"


def test_the_compile_budget_stays_within_a_third_of_the_load_budget(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(budgets, "MIN_TIME_LIMIT", 2.0)
    monkeypatch.setattr(budgets, "MAX_TIME_LIMIT", 10.0)
    assert DEFAULT_LOAD_CPU * COMPILE_SHARE_OF_LOAD >= budgets.MAX_TIME_LIMIT
    assert MatchConfig(start_clock=600).rules_budget.compile_time_limit == 10.0
    cut = MatchConfig(start_clock=600, rules_load_cpu=6.0).rules_budget
    assert (cut.load_cpu, cut.compile_time_limit) == (6.0, 2.0)


@pytest.mark.parametrize(("start_clock", "engine"), [(0, "interpreter"), (60, "compiled")])
async def test_a_match_runs_its_rules_on_the_engine_its_start_clock_buys(
    start_clock: int, engine: str
) -> None:
    game = Game.from_text(CUBE)
    runner = MatchRunner(game, [None], MatchConfig(start_clock=start_clock, play_clock=1))
    record = await runner.run()
    assert runner.rules_engine == engine
    assert record.is_completed and record.goal_values == [100]
