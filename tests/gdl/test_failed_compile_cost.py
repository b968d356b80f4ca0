"""A compile attempt that cannot succeed stops early: code too large is predicted before
any is generated, the slow loops of reading and optimising a wide ground program watch
the clock, and only the atoms of the keyword relations are read back from the grounder."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest

from server.gdl.compiled import (
    CompiledEngine,
    GroundingTooLarge,
    GroundingTooSlow,
    codegen,
    grounder,
    network,
)
from server.gdl.compiled.engine import _roles
from server.gdl.compiled.grounder import ground
from server.gdl.compiled.network import build_network
from server.gdl.compiled.plan import build_plan
from server.gdl.parser import parse_gdl

CELLS = 1100


def shifting_counter(cells: int) -> str:
    """One token moving along ``cells`` cells: every cell's next state is a rule body of
    its own (not a persist or move table), and the game has over 1,024 named atoms."""
    succ = " ".join(f"(succ {i} {i + 1})" for i in range(cells - 1))
    return f"""
    (role r)
    (init (cell 0))
    {succ}
    (<= (legal r step) (true (cell ?x)))
    (<= (next (cell ?y)) (true (cell ?x)) (succ ?x ?y) (does r step))
    (<= (next (seen ?x)) (true (cell ?x)))
    (<= (next (seen ?x)) (true (seen ?x)))
    (<= (far ?x) (true (seen ?x)) (true (cell ?x)))
    (<= terminal (true (cell {cells - 1})))
    (<= terminal (far 5))
    (<= (goal r 100) terminal)
    (<= (goal r 0) (not terminal))
    """


def burning_first_call(
    function: Callable[..., Any], calls: list[int], deadline: float
) -> Callable[..., Any]:
    """``function``, counting its calls; the first spends CPU time until past ``deadline``."""

    def wrapper(*args: Any) -> Any:
        if not calls:
            while time.thread_time() <= deadline:
                pass
        calls.append(1)
        return function(*args)

    return wrapper


def test_code_over_the_size_cap_is_refused_before_any_is_generated(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rules = parse_gdl(shifting_counter(40))
    plan = build_plan(build_network(ground(rules, max_rules=10**6, deadline=1e9), _roles(rules)))
    counted = codegen.next_body_chars(plan)
    assert counted > 40 * 10  # a body per cell, each with a few numbers
    # the count is of characters the generated code holds (twice: next and playout)
    assert len(codegen.generate(plan)) > counted

    def no_generating(plan: object) -> str:
        raise AssertionError("code was generated")

    monkeypatch.setattr(codegen, "MAX_NEXT_BODY_CHARS", counted - 1)
    monkeypatch.setattr(codegen, "generate", no_generating)
    with pytest.raises(GroundingTooLarge) as caught:
        CompiledEngine.from_rules(rules)
    assert caught.value.reason == (
        f"the generated code would exceed {codegen.MAX_SOURCE} characters"
        " (predicted from the next-state rule bodies)"
    )


def test_a_game_at_the_predicted_size_compiles(monkeypatch: pytest.MonkeyPatch) -> None:
    rules = parse_gdl(shifting_counter(40))
    plan = build_plan(build_network(ground(rules, max_rules=10**6, deadline=1e9), _roles(rules)))
    monkeypatch.setattr(codegen, "MAX_NEXT_BODY_CHARS", codegen.next_body_chars(plan))
    engine = CompiledEngine.from_rules(rules)
    state = engine.next_state(engine.initial_state(), ["step"])
    assert ("cell", "1") in state.facts


def test_the_prediction_leaves_room_for_both_copies_of_the_next_state_code() -> None:
    assert codegen.MAX_NEXT_BODY_CHARS <= codegen.MAX_SOURCE


def test_reading_the_named_atoms_stops_at_the_time_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    rules = parse_gdl(shifting_counter(CELLS))
    calls: list[int] = []
    deadline = time.thread_time() + 1.0  # grounding itself takes about 0.1 s
    monkeypatch.setattr(
        grounder, "decode_arguments", burning_first_call(grounder.decode_arguments, calls, deadline)
    )
    with pytest.raises(GroundingTooSlow, match="reading the ground program"):
        ground(rules, max_rules=10**6, deadline=deadline)
    # decoded up to the next look at the clock, not all of the 3,300 named atoms
    assert 0 < len(calls) <= 1024


def test_optimising_a_wide_network_stops_at_the_time_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rules = parse_gdl(shifting_counter(CELLS))
    program = ground(rules, max_rules=10**6, deadline=1e9)
    calls: list[int] = []
    deadline = time.thread_time() + 1.0  # reading it takes about 0.1 s
    monkeypatch.setattr(
        network, "_group_does", burning_first_call(network._group_does, calls, deadline)
    )
    with pytest.raises(GroundingTooSlow, match="optimising the ground network"):
        build_network(program, _roles(rules), deadline=deadline)
    # grouped up to the next look at the clock, not all of the 2,200 atoms
    assert 0 < len(calls) <= 64


def test_only_the_atoms_of_the_keyword_relations_are_read_back() -> None:
    program = ground(parse_gdl(shifting_counter(20)), max_rules=10**6, deadline=1e9)
    keywords = {"true", "does", "next", "legal", "goal", "terminal", "init", "role"}
    named = {key[0] for key, _ in program.names.values()}
    assert named == {"true", "does", "next", "legal", "goal", "terminal"}
    assert {key[0] for key, _ in program.facts} <= keywords  # no succ facts, no far atoms
