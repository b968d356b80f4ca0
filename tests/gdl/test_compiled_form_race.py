"""At a generous start clock, a large game that compiles as written is compiled factored
too, and the faster of the two forms is kept.

Neither the number of ground rules nor how much factoring shrinks it tells which form
runs faster (tron_10x10 runs faster factored, checkers as written), so the two race on
the same random playouts. The race costs a second compile, so it is run only from the
size the default limit cannot compile (:data:`FORM_RACE_MIN_RULES`, lowered here for a
small game) and only when the limit gives the later attempts 2 s or more.
"""

from __future__ import annotations

from typing import Any

import pytest
from test_compiled_factor import boards_game

from server.gdl.compiled import CompiledEngine, GroundingTooSlow
from server.gdl.compiled import engine as compiled_engine
from server.gdl.compiled.engine import (
    AS_WRITTEN,
    DEFAULT_TIME_LIMIT,
    FACTORED,
    FACTORED_WINS_BY,
    FORM_RACE_SECONDS,
    FormRace,
)
from server.gdl.interpreter import Interpreter
from server.gdl.parser import parse_gdl, parse_term

GENEROUS_LIMIT = 10.0
"""What a 60 s start clock gives the compile attempt."""


@pytest.fixture
def small_race_size(monkeypatch: pytest.MonkeyPatch) -> None:
    """Race programs of 1,000 ground rules and more (the two-board game has 3,627)."""
    monkeypatch.setattr(compiled_engine, "FORM_RACE_MIN_RULES", 1_000)


def rates(monkeypatch: pytest.MonkeyPatch, as_written: float, factored: float) -> list[str]:
    """Make the race time each form at the given rate; the forms timed, in order."""
    timed: list[str] = []

    def fake_rate(engine: CompiledEngine, *, seconds: float, transitions: int) -> float:
        timed.append(engine.form)
        return factored if engine.form == FACTORED else as_written

    monkeypatch.setattr(compiled_engine, "transition_rate", fake_rate)
    return timed


@pytest.mark.usefixtures("small_race_size")
def test_the_factored_form_is_kept_when_it_runs_faster(monkeypatch: pytest.MonkeyPatch) -> None:
    timed = rates(monkeypatch, as_written=1_000.0, factored=2_000.0)
    rules = parse_gdl(boards_game(2))
    engine = CompiledEngine.from_rules(rules, time_limit=GENEROUS_LIMIT)
    assert timed == [AS_WRITTEN, FACTORED]
    assert engine.form == FACTORED
    assert engine.form_race == FormRace(1_000.0, 2_000.0)
    factored_alone = CompiledEngine.from_rules(rules, factoring=True)
    assert engine.plan.network.stats == factored_alone.plan.network.stats
    # the set-up time covers both compiles and the race
    assert engine.setup_seconds > factored_alone.setup_seconds
    state = engine.initial_state()
    joint = [parse_term("(mark 1 1 2 2)"), parse_term("(mark 1 1 1 2)")]
    assert engine.next_state(state, joint) == Interpreter(rules).next_state(state, joint)


@pytest.mark.usefixtures("small_race_size")
@pytest.mark.parametrize("factored", [500.0, 1_000.0 * FACTORED_WINS_BY])
def test_the_rules_as_written_are_kept_unless_factored_is_clearly_faster(
    monkeypatch: pytest.MonkeyPatch, factored: float
) -> None:
    rates(monkeypatch, as_written=1_000.0, factored=factored)
    rules = parse_gdl(boards_game(2))
    engine = CompiledEngine.from_rules(rules, time_limit=GENEROUS_LIMIT)
    assert engine.form == AS_WRITTEN
    assert engine.form_race == FormRace(1_000.0, factored)
    as_written = CompiledEngine.from_rules(rules, factoring=False)
    assert engine.plan.network.stats == as_written.plan.network.stats


@pytest.mark.usefixtures("small_race_size")
def test_no_race_at_the_default_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    timed = rates(monkeypatch, as_written=1_000.0, factored=2_000.0)
    engine = CompiledEngine.from_rules(parse_gdl(boards_game(2)), time_limit=DEFAULT_TIME_LIMIT)
    assert timed == []
    assert (engine.form, engine.form_race) == (AS_WRITTEN, None)


def test_no_race_below_the_size_the_default_limit_compiles(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    timed = rates(monkeypatch, as_written=1_000.0, factored=2_000.0)
    engine = CompiledEngine.from_rules(parse_gdl(boards_game(2)), time_limit=GENEROUS_LIMIT)
    assert timed == []
    assert (engine.form, engine.form_race) == (AS_WRITTEN, None)


@pytest.mark.usefixtures("small_race_size")
def test_no_race_when_nothing_factors(monkeypatch: pytest.MonkeyPatch) -> None:
    timed = rates(monkeypatch, as_written=1_000.0, factored=2_000.0)
    cells = " ".join(f"(init (cell {k} b))" for k in range(1_200))
    rules = parse_gdl(f"""
        (role robot) {cells}
        (<= (legal robot (flip ?k)) (true (cell ?k b)))
        (<= (next (cell ?k x)) (does robot (flip ?k)))
        (<= (next (cell ?k ?m)) (true (cell ?k ?m)) (not (does robot (flip ?k))))
        (<= terminal (true (cell 0 x)))
        (goal robot 100)
    """)
    engine = CompiledEngine.from_rules(rules, time_limit=GENEROUS_LIMIT)
    assert engine.plan.network.stats["ground_rules"] >= 1_000
    assert timed == []
    assert (engine.form, engine.form_race) == (AS_WRITTEN, None)


@pytest.mark.usefixtures("small_race_size")
def test_a_real_race_times_both_forms_and_keeps_the_faster() -> None:
    engine = CompiledEngine.from_rules(parse_gdl(boards_game(2)), time_limit=GENEROUS_LIMIT)
    race = engine.form_race
    assert race is not None
    assert race.as_written_rate > 0 and race.factored_rate > 0
    assert engine.form == (FACTORED if race.factored_wins else AS_WRITTEN)


@pytest.mark.usefixtures("small_race_size")
def test_the_factored_compile_and_the_race_stay_within_the_time_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The factored attempt has the time limit less what the race may take, so that the
    set-up stays within the limit (mineClearingSmall compiled as written in 4.9 s of its
    10 s, then factored in 4.7 s: 10.4 s in all with the race)."""
    deadlines: dict[bool, float] = {}
    build = compiled_engine._build

    def recorded(*args: Any, **kwargs: Any) -> Any:
        deadlines[bool(args[5])] = args[3]  # the deadline, by whether factored
        return build(*args, **kwargs)

    monkeypatch.setattr(compiled_engine, "_build", recorded)
    rates(monkeypatch, as_written=1_000.0, factored=2_000.0)
    CompiledEngine.from_rules(parse_gdl(boards_game(2)), time_limit=GENEROUS_LIMIT)
    assert deadlines[True] == pytest.approx(deadlines[False] - 2 * FORM_RACE_SECONDS)

    def too_slow(*args: Any, **kwargs: Any) -> Any:
        if args[5]:  # the factored attempt
            raise GroundingTooSlow("grounding took longer than the time limit")
        return build(*args, **kwargs)

    monkeypatch.setattr(compiled_engine, "_build", too_slow)
    engine = CompiledEngine.from_rules(parse_gdl(boards_game(2)), time_limit=GENEROUS_LIMIT)
    assert (engine.form, engine.form_race) == (AS_WRITTEN, None)


@pytest.mark.usefixtures("small_race_size")
def test_no_race_when_too_little_of_the_limit_is_left() -> None:
    plan = CompiledEngine.from_rules(parse_gdl(boards_game(2)), factoring=False).plan
    # 10 s: after 9.0 s, 0.5 s are left once the race is run; after 9.1 s, less
    assert compiled_engine._worth_a_form_race(plan, GENEROUS_LIMIT, 4.9)
    assert compiled_engine._worth_a_form_race(plan, GENEROUS_LIMIT, 9.0)
    assert not compiled_engine._worth_a_form_race(plan, GENEROUS_LIMIT, 9.1)


@pytest.mark.usefixtures("small_race_size")
def test_the_factored_form_may_have_the_rules_the_time_left_compiles() -> None:
    """As many ground rules as the time left after the race would compile at the rate
    the rules as written compiled: tron_10x10 took 4.9 to 5.9 s of its 10 as written,
    and its 3,737 factored rules compile in 0.16 s."""
    plan = CompiledEngine.from_rules(parse_gdl(boards_game(2)), factoring=False).plan
    rules = plan.network.stats["ground_rules"]
    assert compiled_engine._factored_rule_cap(plan, GENEROUS_LIMIT, 4.75) == pytest.approx(
        rules, abs=1
    )
    assert compiled_engine._factored_rule_cap(plan, GENEROUS_LIMIT, 6.0) == pytest.approx(
        rules * 3.5 / 6.0, abs=1
    )
    assert compiled_engine._factored_rule_cap(plan, GENEROUS_LIMIT, 9.5) == 0


@pytest.mark.usefixtures("small_race_size")
def test_a_factored_program_past_that_cap_is_not_raced(monkeypatch: pytest.MonkeyPatch) -> None:
    timed = rates(monkeypatch, as_written=1_000.0, factored=2_000.0)
    rules = parse_gdl(boards_game(2))
    factored_rules = CompiledEngine.from_rules(rules, factoring=True).plan.network.stats[
        "ground_rules"
    ]
    caps: list[int] = []
    build = compiled_engine._build

    def recorded(*args: Any, **kwargs: Any) -> Any:
        if args[5]:  # the factored attempt: its rule cap
            caps.append(args[1])
        return build(*args, **kwargs)

    monkeypatch.setattr(compiled_engine, "_build", recorded)
    monkeypatch.setattr(compiled_engine, "_factored_rule_cap", lambda *_: factored_rules - 1)
    engine = CompiledEngine.from_rules(rules, time_limit=GENEROUS_LIMIT)
    assert caps == [factored_rules - 1]
    assert timed == []
    assert (engine.form, engine.form_race) == (AS_WRITTEN, None)

    monkeypatch.setattr(compiled_engine, "_factored_rule_cap", lambda *_: factored_rules)
    engine = CompiledEngine.from_rules(rules, time_limit=GENEROUS_LIMIT)
    assert caps[-1] == factored_rules
    assert timed == [AS_WRITTEN, FACTORED]
    assert engine.form == FACTORED
