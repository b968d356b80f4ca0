"""An attempt that reaches its rule budget grounds on, up to RULE_STRETCH times it, when
the bound of its cost estimate says the program would still compile in time.

The rule budget is a count of rules for the cost of a failed attempt; the estimate is the
better measure of what compiling costs. A program a little past the budget whose bound
stays well within the work budget is grounded in full and compiled (chineseCheckers6);
one whose bound nears the work budget stops at the budget, as it always did."""

from __future__ import annotations

import time

import pytest
from shared_material import SHARED

from server.gdl import Game
from server.gdl.compiled import (
    GroundingOverBudget,
    GroundingPastStretch,
    GroundingTooLarge,
    NetworkOverBudget,
)
from server.gdl.compiled import engine as compiled_engine
from server.gdl.compiled.engine import (
    DEFAULT_TIME_LIMIT,
    FACTORED,
    FACTORED_MAX_BUDGET,
    RULE_STRETCH,
    CompiledEngine,
    factored_budget,
    later_budget,
    rule_budget,
)
from server.gdl.compiled.grounder import ground
from server.gdl.game import forget_failed_compiles
from server.gdl.parser import Rule, parse_gdl

BUDGET = 4_000
STRETCH_TO = 5_600


def triples(cells: int) -> list[Rule]:
    """A game with one ground ``triple`` rule for every three cells (cells**3 of them),
    each a body of its own: about 75 us of estimate a rule."""
    return parse_gdl(f"""
(role r)
(init (cell 0))
{" ".join(f"(succ {i} {i + 1})" for i in range(cells - 1))}
(<= (legal r (step ?y)) (true (cell ?x)) (succ ?x ?y))
(<= (next (cell ?y)) (does r (step ?y)))
(<= (triple ?a ?b ?c) (true (cell ?a)) (true (cell ?b)) (true (cell ?c)))
(<= terminal (triple ?a ?a ?a) (true (cell {cells - 1})))
(<= (goal r 100) terminal)
(<= (goal r 0) (not terminal))
""")


def grounded(rules: list[Rule], work_budget: float, stretch_to: int | None = STRETCH_TO) -> int:
    """The ground rules of ``rules`` within a budget of :data:`BUDGET` rules."""
    program = ground(
        rules,
        max_rules=300_000,
        deadline=time.thread_time() + 60,
        budget=BUDGET,
        work_budget=work_budget,
        stretch_to=stretch_to,
        read_names=False,
    )
    return len(program.rules)


def test_a_program_past_the_budget_whose_bound_stays_low_is_grounded_in_full() -> None:
    rules = triples(17)  # 4,913 triples: past the budget, within the stretch
    assert BUDGET < grounded(rules, work_budget=1e9) <= STRETCH_TO


def test_without_a_stretch_the_budget_stops_it() -> None:
    with pytest.raises(GroundingOverBudget, match=f"more than {BUDGET} ground rules"):
        grounded(triples(17), work_budget=1e9, stretch_to=None)


def test_a_program_past_the_stretch_stops_there() -> None:
    with pytest.raises(GroundingPastStretch, match=f"more than {STRETCH_TO} ground rules"):
        grounded(triples(20), work_budget=1e9)  # 8,000 triples


def test_a_bound_near_the_work_budget_stops_grounding_at_the_budget() -> None:
    """At the budget the bound extrapolated to 5,600 rules is about 420,000 us: within
    700,000 us by more than a quarter, the attempt goes on; within 500,000 us by less,
    it stops at the budget (it would likely be refused by the estimate anyway, after
    grounding and reading a larger program)."""
    rules = triples(17)
    assert grounded(rules, work_budget=700_000) > BUDGET
    with pytest.raises(GroundingOverBudget, match=f"more than {BUDGET} ground rules") as stop:
        grounded(rules, work_budget=500_000)
    assert not isinstance(stop.value, GroundingPastStretch)


def test_the_stretch_never_passes_the_rule_cap() -> None:
    with pytest.raises(GroundingTooLarge, match="more than 4500 ground rules"):
        ground(
            triples(17),
            max_rules=4_500,
            deadline=time.thread_time() + 60,
            budget=BUDGET,
            work_budget=1e9,
            stretch_to=STRETCH_TO,
            read_names=False,
        )


def test_a_compile_attempt_stretches_its_rule_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    """Through the engine: at 0.1 s the budget is 4,000 rules, stretched to 5,600 (the
    estimate's budget made large here, so that its bound lets the attempt go on)."""
    monkeypatch.setattr(compiled_engine, "work_budget", lambda time_limit: 1e12)
    stretched = round(rule_budget(0.1) * RULE_STRETCH)
    assert stretched > rule_budget(0.1)
    with pytest.raises(GroundingPastStretch, match=f"more than {stretched} ground rules"):
        CompiledEngine.from_rules(triples(20), time_limit=0.1)  # 8,000 triples


@pytest.mark.shared("conformance/games/chineseCheckers6.kif")
def test_chinese_checkers_for_six_compiles_within_the_default_limit() -> None:
    """102,891 ground rules, past the 80,000 of the budget, but estimated at 1.3 s and
    compiled in 0.7 s: it used to fall back to the interpreter, three to five times
    slower on it."""
    forget_failed_compiles()
    game = Game.from_file(SHARED / "conformance" / "games" / "chineseCheckers6.kif")
    assert game.engine.name == "compiled", game.fallback_reason
    assert game.engine.network.stats["ground_rules"] > rule_budget(DEFAULT_TIME_LIMIT)


def test_the_later_attempts_have_the_whole_limit_after_a_failure_cheap_per_rule() -> None:
    """A program that grew past its stretch, or that its estimate refused, is cheap per
    rule: factoring it gets the budgets of the whole limit. One stopped at its budget
    with its bound near the limit (chess, the checkers family) gets the smaller budgets
    of :func:`factored_budget`, as before; from a 5.4 s limit on both are capped alike."""
    cheap = [GroundingPastStretch("past"), NetworkOverBudget("estimated")]
    for failure in cheap:
        assert later_budget(DEFAULT_TIME_LIMIT, failure) == DEFAULT_TIME_LIMIT
    slow = GroundingOverBudget("more than 80000 ground rules")
    assert later_budget(DEFAULT_TIME_LIMIT, slow) == factored_budget(DEFAULT_TIME_LIMIT) < 1
    for failure in [*cheap, slow]:
        assert later_budget(10.0, failure) == FACTORED_MAX_BUDGET


@pytest.mark.shared("conformance/games/pacman2p.kif")
def test_pacman_compiles_factored_within_the_default_limit() -> None:
    """315,803 ground rules as written, past the stretch of its budget; factored, 52,969,
    estimated at 2.9 s and compiled in 0.7 to 0.8 s. With the smaller budgets of 0.8 s
    the factored attempt was refused and the game fell back (8 times the prover through
    the public API, 28 times compiled)."""
    forget_failed_compiles()
    game = Game.from_file(SHARED / "conformance" / "games" / "pacman2p.kif")
    assert game.engine.name == "compiled", game.fallback_reason
    assert game.engine.form == FACTORED
