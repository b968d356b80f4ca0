"""Python's garbage collector is paused while a game is compiled, and while the rules
interpreter works out its static tables, and only then."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from server.gdl.compiled import CompiledEngine, GroundingTooLarge
from server.gdl.compiled import engine as compiled_engine
from server.gdl.gc_pause import garbage_collection_paused
from server.gdl.interpreter import Interpreter
from server.gdl.parser import parse_gdl

BUNDLED = Path(__file__).resolve().parents[2] / "server" / "games"

GAME = """
(role r)
(init (at 1))
(<= (legal r go) (true (at 1)))
(<= (next (at 2)) (does r go))
(<= terminal (true (at 2)))
(<= (goal r 100) (true (at 2)))
(<= (goal r 0) (true (at 1)))
"""


@pytest.fixture
def collector_on() -> Iterator[None]:
    was_enabled = gc.isenabled()
    gc.enable()
    yield
    if not was_enabled:
        gc.disable()


def recording_ground(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Whether the collector was on, each time the engine grounded a game."""
    seen: list[bool] = []
    ground = compiled_engine.ground

    def recording(*args: Any, **kwargs: Any) -> Any:
        seen.append(gc.isenabled())
        return ground(*args, **kwargs)

    monkeypatch.setattr(compiled_engine, "ground", recording)
    return seen


def test_the_collector_is_off_while_compiling_and_on_after(
    monkeypatch: pytest.MonkeyPatch, collector_on: None
) -> None:
    seen = recording_ground(monkeypatch)
    engine = CompiledEngine.from_rules(parse_gdl(GAME))
    assert seen == [False] and gc.isenabled()
    assert engine.is_terminal(engine.next_state(engine.initial_state(), ["go"]))


def test_the_collector_is_on_again_after_a_failed_attempt(
    monkeypatch: pytest.MonkeyPatch, collector_on: None
) -> None:
    seen = recording_ground(monkeypatch)
    with pytest.raises(GroundingTooLarge):
        CompiledEngine.from_rules(parse_gdl(GAME), max_ground_rules=1)
    # both attempts at the default limit, as written and factored, ground with the
    # collector off
    assert seen == [False, False] and gc.isenabled()


def test_a_collector_turned_off_before_stays_off(collector_on: None) -> None:
    gc.disable()
    with garbage_collection_paused():
        assert not gc.isenabled()
    assert not gc.isenabled()


def test_the_collector_is_on_again_only_when_the_last_pause_ends(collector_on: None) -> None:
    first, second = garbage_collection_paused(), garbage_collection_paused()
    first.__enter__()
    second.__enter__()
    first.__exit__(None, None, None)
    assert not gc.isenabled()  # the second attempt is still running
    second.__exit__(None, None, None)
    assert gc.isenabled()


def test_a_compile_leaves_its_ground_program_to_reference_counting(collector_on: None) -> None:
    """What a compile no longer needs (the ground program, the network's rule bodies)
    is freed when it is done with, not left in cycles for the collector to find once
    it is back on: such a collection took 0.15 to 0.45 s on the larger games."""
    rules = parse_gdl((BUNDLED / "nineBoardTicTacToe.kif").read_text(encoding="utf-8"))
    gc.collect()
    gc.disable()
    engine = CompiledEngine.from_rules(rules)
    left_in_cycles = gc.collect()
    assert engine.plan.network.stats["ground_rules"] > 1_000
    assert left_in_cycles < 200
    assert not engine.plan.network.rules  # read by planning only


def test_a_failed_compile_leaves_its_ground_programs_to_reference_counting(
    collector_on: None,
) -> None:
    """The error drops the frames that held the attempts' ground programs (and the
    callbacks that stopped grounding, which hold the error in turn), so nothing waits in
    cycles for the collector, which would otherwise trace it all on its first run after
    the pause: part of what a failed compile costs before the interpreter takes over (the
    old code left 2,064 objects here)."""
    rules = parse_gdl((BUNDLED / "nineBoardTicTacToe.kif").read_text(encoding="utf-8"))
    gc.collect()
    gc.disable()
    with pytest.raises(GroundingTooLarge, match="more than 1000 ground rules") as raised:
        CompiledEngine.from_rules(rules, max_ground_rules=1_000)
    left_in_cycles = gc.collect()
    assert left_in_cycles < 50, left_in_cycles
    context = raised.value.__context__
    assert context is None or context.__traceback__ is None


TABLE_GAME = (
    GAME
    + "".join(f"(digit {n})\n" for n in range(300))
    + "(<= (pair ?x ?y) (digit ?x) (digit ?y))\n"
    + "(<= (goal r 50) (true (at 3)) (pair ?x ?y))\n"
)
"""A game with a static table of 90,000 facts that a goal rule reads."""


def test_the_interpreters_static_tables_are_made_with_the_collector_off(
    collector_on: None,
) -> None:
    collections: list[int] = []

    def count(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            collections.append(info["generation"])

    gc.collect()
    gc.callbacks.append(count)
    try:
        interpreter = Interpreter(parse_gdl(TABLE_GAME))
    finally:
        gc.callbacks.remove(count)
    # 90,000 new tuples would start over a hundred young collections with it on
    assert len(collections) < 20
    assert gc.isenabled()
    assert interpreter.goal_values(interpreter.initial_state(), "r") == ["0"]
