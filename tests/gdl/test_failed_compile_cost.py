"""A compile attempt that cannot succeed stops early: code too large is predicted before
any is generated, the slow loops of reading and optimising a wide ground program watch
the clock, only the atoms of the keyword relations are read back from the grounder, and
the cost estimate refuses a program before the names of its atoms are decoded."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from server.gdl.compiled import (
    CompiledEngine,
    GroundingTooLarge,
    GroundingTooSlow,
    NetworkOverBudget,
    code_limits,
    codegen,
    ground_size,
    grounder,
    network,
)
from server.gdl.compiled import engine as compiled_engine
from server.gdl.compiled.code_limits import MAX_NEXT_BODY_CHARS, MAX_SOURCE, CodeCaps, caps_for
from server.gdl.compiled.engine import _roles
from server.gdl.compiled.estimate import EstimateFloor, estimated_us
from server.gdl.compiled.grounder import ground
from server.gdl.compiled.network import build_network
from server.gdl.compiled.plan import build_plan
from server.gdl.parser import Rule, parse_gdl

ROOT = Path(__file__).resolve().parents[2]

CELLS = 1100


PREDICTED_TOO_LARGE = (
    f"the generated code would exceed {MAX_SOURCE} characters"
    " (predicted from the next-state rule bodies)"
)
"""The refusal of a program whose code is predicted past the cap, by either count."""


def capped(monkeypatch: pytest.MonkeyPatch, next_body_chars: int) -> None:
    """Compile with the cap on the next-state code at ``next_body_chars`` characters."""
    monkeypatch.setattr(
        compiled_engine,
        "caps_for",
        lambda time_limit: CodeCaps(max_next_body_chars=next_body_chars),
    )


def shifting_counter(cells: int) -> str:
    """One token moving along ``cells`` cells: every cell's next state is a rule body of
    its own (not a persist or move table, nor a shift of the state: a cell is seen once
    the token is on the cell mirroring it, at a distance of its own), and the game has
    over 1,024 named atoms."""
    succ = " ".join(f"(succ {i} {i + 1})" for i in range(cells - 1))
    mirror = " ".join(f"(mirror {i} {cells - 1 - i})" for i in range(cells))
    return f"""
    (role r)
    (init (cell 0))
    {succ}
    {mirror}
    (<= (legal r step) (true (cell ?x)))
    (<= (next (cell ?y)) (true (cell ?x)) (succ ?x ?y) (does r step))
    (<= (next (seen ?x)) (true (cell ?y)) (mirror ?x ?y))
    (<= (next (seen ?x)) (true (seen ?x)))
    (<= (far ?x) (true (seen ?x)) (true (cell ?x)))
    (<= terminal (true (cell {cells - 1})))
    (<= terminal (far ?x))
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


@pytest.mark.source_modules
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

    capped(monkeypatch, counted - 1)
    monkeypatch.setattr(codegen, "generate", no_generating)
    with pytest.raises(GroundingTooLarge) as caught:
        CompiledEngine.from_rules(rules, factoring=False)
    assert caught.value.reason == PREDICTED_TOO_LARGE


@pytest.mark.source_modules
def test_a_game_at_the_predicted_size_compiles(monkeypatch: pytest.MonkeyPatch) -> None:
    rules, predicted, counted = shifting_counter_sizes(monkeypatch)
    capped(monkeypatch, max(predicted[0], counted))
    engine = CompiledEngine.from_rules(rules)
    state = engine.next_state(engine.initial_state(), ["step"])
    assert ("cell", "1") in state.facts


def test_the_prediction_leaves_room_for_both_copies_of_the_next_state_code() -> None:
    for time_limit in (0.5, 2.0, 10.0, 60.0):
        caps = caps_for(time_limit)
        assert caps.max_next_body_chars <= caps.max_source


def test_the_caps_grow_with_the_time_limit() -> None:
    assert caps_for(2.0) == caps_for(0.5) == CodeCaps(MAX_SOURCE, MAX_NEXT_BODY_CHARS)
    assert caps_for(10.0) == CodeCaps(5 * MAX_SOURCE, 5 * MAX_NEXT_BODY_CHARS)


@pytest.mark.source_modules
def test_a_game_refused_at_the_default_time_limit_compiles_with_a_longer_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rules, predicted, counted = shifting_counter_sizes(monkeypatch)
    cap = max(predicted[0], counted) // 4  # under both counts, and five times it over both
    assert 5 * cap >= max(predicted[0], counted) and cap < min(predicted[0], counted)
    monkeypatch.setattr(code_limits, "MAX_NEXT_BODY_CHARS", cap)
    with pytest.raises(GroundingTooLarge):
        CompiledEngine.from_rules(rules, time_limit=2.0)
    engine = CompiledEngine.from_rules(rules, time_limit=10.0)
    assert ("cell", "1") in engine.next_state(engine.initial_state(), ["step"]).facts


@pytest.mark.source_modules
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


@pytest.mark.source_modules
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


def never_decode(text: str) -> tuple[object, ...]:
    raise AssertionError(f"decoded {text}")


@pytest.mark.source_modules
def test_the_estimate_refuses_a_program_before_any_name_is_decoded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rules = parse_gdl((ROOT / "server" / "games" / "nineBoardTicTacToe.kif").read_text())
    program = ground(rules, max_rules=10**6, deadline=1e9, work_budget=1e18)
    floor = program.estimate_floor
    estimate = build_network(program, _roles(rules)).stats["estimated_us"]
    # past the bound counted while grounding, short of the estimate counted after it
    monkeypatch.setattr(compiled_engine, "work_budget", lambda limit: (floor + estimate) / 2)
    monkeypatch.setattr(grounder, "decode_arguments", never_decode)
    with pytest.raises(NetworkOverBudget):
        CompiledEngine.from_rules(rules)


@pytest.mark.source_modules
def test_the_roles_of_the_moves_are_read_without_decoding_the_moves(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rules = parse_gdl((ROOT / "server" / "games" / "nineBoardTicTacToe.kif").read_text())
    program = ground(rules, max_rules=10**6, deadline=1e9, read_names=False)
    monkeypatch.setattr(grounder, "decode_arguments", never_decode)
    roles = program.does_roles()
    assert not program.names
    monkeypatch.undo()
    program.read_names()
    named = program.names
    assert roles == {atom: args[0] for atom, (key, args) in named.items() if key[0] == "does"}
    assert set(roles.values()) == {"xPlayer", "oPlayer"} and len(roles) > 2 * 81


def test_a_program_read_after_the_estimate_gives_the_same_code() -> None:
    rules = parse_gdl((ROOT / "server" / "games" / "nineBoardTicTacToe.kif").read_text())
    read_first = ground(rules, max_rules=10**6, deadline=1e9)
    read_later = ground(rules, max_rules=10**6, deadline=1e9, read_names=False)
    assert read_later.symbols and not read_later.names
    first = build_plan(build_network(read_first, _roles(rules)))
    later = build_plan(build_network(read_later, _roles(rules)))
    assert read_later.names == read_first.names and not read_later.symbols
    assert later.network.stats == first.network.stats
    assert codegen.generate(later) == codegen.generate(first)


def test_the_floor_counted_while_grounding_is_at_most_the_estimate() -> None:
    rules = parse_gdl((ROOT / "server" / "games" / "nineBoardTicTacToe.kif").read_text())
    program = ground(rules, max_rules=10**6, deadline=1e9, work_budget=1e18)
    estimate = build_network(program, _roles(rules)).stats["estimated_us"]
    # the bound merges more bodies than does-grouping, but not many more
    assert 0.5 * estimate < program.estimate_floor < estimate


REPEATED_BODIES = """
    (role r)
    (init (a 1)) (init (b 1))
    (index 1) (index 2) (index 3) (index 4) (index 5) (index 6)
    (<= (link ?x ?y) (index ?x) (index ?y))
    (<= (legal r (set ?x)) (index ?x))
    (<= (next (a ?x)) (does r (set ?x)))
    (<= (next (b ?x)) (true (a ?x)))
    (<= both (true (a ?x)) (true (b ?y)) (link ?x ?y))
    (<= both (true (b ?y)) (true (a ?x)) (link ?x ?y))
    (<= terminal both (true (a 6)))
    (<= (goal r 100) both)
    (<= (goal r 0) (not both))
    """
"""Two rules of ``both`` with the same literals in another order: clingo emits each
ground body twice."""


def test_a_body_emitted_twice_is_counted_once() -> None:
    rules = parse_gdl(REPEATED_BODIES)
    program = ground(rules, max_rules=10**6, deadline=1e9, work_budget=1e18)
    on_state = [body for _, body in program.rules if program.choices.issuperset(body)]
    both = [body for body in on_state if len(body) == 2]
    assert len(both) == 2 * 36  # every (x, y) twice
    distinct = {(head, *sorted(body)) for head, body in program.rules}
    assert len(distinct) == len(program.rules) - 36
    network = build_network(program, _roles(rules))
    assert network.stats["estimated_us"] == estimated_us(
        len(program.rules),
        len(program.choices),
        len(distinct),
        sum(len(key) - 1 for key in distinct),
    )
    assert 0 < program.estimate_floor <= network.stats["estimated_us"]


@pytest.fixture
def floor_counts(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The size of each batch of ground rules counted into the estimate's floor."""
    counted: list[int] = []
    add = EstimateFloor.add

    def counting(self: EstimateFloor, batch: list[tuple[int, tuple[int, ...]]]) -> None:
        counted.append(len(batch))
        add(self, batch)

    monkeypatch.setattr(EstimateFloor, "add", counting)
    return counted


@pytest.mark.source_modules
def test_grounding_stops_once_the_floor_passes_the_budget(floor_counts: list[int]) -> None:
    rules = parse_gdl(shifting_counter(CELLS))
    floor = ground(rules, max_rules=10**6, deadline=1e9, work_budget=1e18).estimate_floor
    floor_counts.clear()
    with pytest.raises(NetworkOverBudget):
        ground(rules, max_rules=10**6, deadline=1e9, work_budget=floor / 2)
    total = len(ground(rules, max_rules=10**6, deadline=1e9).rules)
    # stopped at the first look at the bound past the budget, not at the end
    assert 0 < sum(floor_counts) < total / 2 + 1024


SAMPLED_CELLS = 5000
"""A counter of 40,003 ground rules: past ``FLOOR_SAMPLED_FROM`` rules its floor is
sampled."""


@pytest.mark.source_modules
def test_past_its_first_rules_the_floor_counts_a_sample_of_the_batches(
    monkeypatch: pytest.MonkeyPatch, floor_counts: list[int]
) -> None:
    rules = parse_gdl(shifting_counter(SAMPLED_CELLS))
    sampled = ground(rules, max_rules=10**6, deadline=1e9, work_budget=1e18)
    total = len(sampled.rules)
    first = grounder.FLOOR_SAMPLED_FROM
    assert total > 2 * first
    # the first rules all, then one batch in four (and the last)
    assert first < sum(floor_counts) < first + (total - first) / 2
    monkeypatch.setattr(grounder, "FLOOR_SAMPLED_FROM", 10**9)
    floor_counts.clear()
    every_batch = ground(rules, max_rules=10**6, deadline=1e9, work_budget=1e18)
    assert sum(floor_counts) == total
    # a lower bound still, below the one counted from every batch
    assert 0.5 * every_batch.estimate_floor < sampled.estimate_floor < every_batch.estimate_floor
    estimate = build_network(every_batch, _roles(rules)).stats["estimated_us"]
    assert every_batch.estimate_floor <= estimate


def sampled_counter(monkeypatch: pytest.MonkeyPatch) -> tuple[list[Rule], int, int]:
    """The rules of the counter of ``SAMPLED_CELLS``, its count of ground rules, and its
    floor counted from every batch."""
    rules = parse_gdl(shifting_counter(SAMPLED_CELLS))
    total = len(ground(rules, max_rules=10**6, deadline=1e9).rules)
    with monkeypatch.context() as patched:
        patched.setattr(grounder, "FLOOR_SAMPLED_FROM", 10**9)
        exact = ground(rules, max_rules=10**6, deadline=1e9, work_budget=1e18).estimate_floor
    return rules, total, exact


@pytest.mark.source_modules
def test_a_sampled_floor_nearing_the_budget_counts_every_batch_and_stops_in_time(
    monkeypatch: pytest.MonkeyPatch, floor_counts: list[int]
) -> None:
    rules, total, exact = sampled_counter(monkeypatch)
    floor_counts.clear()
    with pytest.raises(NetworkOverBudget):
        ground(rules, max_rules=10**6, deadline=1e9, work_budget=0.8 * exact)
    # the batches left out were counted once the sample neared the budget, and grounding
    # stopped about where counting every batch stops it, well before the end
    assert 0.6 * total < sum(floor_counts) < 0.9 * total


@pytest.mark.source_modules
def test_a_sampled_floor_the_rule_cap_stops_first_leaves_its_batches_uncounted(
    monkeypatch: pytest.MonkeyPatch, floor_counts: list[int]
) -> None:
    rules, total, exact = sampled_counter(monkeypatch)
    cap = 3 * total // 5  # the floor comes to about 0.6 of ``exact`` there

    def counted_until_the_cap(work_budget: float) -> int:
        floor_counts.clear()
        with pytest.raises(GroundingTooLarge):
            ground(rules, max_rules=cap, deadline=1e9, work_budget=work_budget)
        return sum(floor_counts)

    # past half the budget before the cap, but the cap comes before the floor could
    # reach the budget: the batches left out stay uncounted
    first = grounder.FLOOR_SAMPLED_FROM
    assert counted_until_the_cap(exact) < first + (cap - first) / 2
    # a budget the floor could come near by the cap: every batch counted
    assert counted_until_the_cap(0.7 * exact) > cap - 2048


@pytest.mark.source_modules
@pytest.mark.parametrize("game", ["nineBoardTicTacToe", "double_tictactoe_dengji"])
def test_every_input_is_opened_before_a_rule_reads_it(
    monkeypatch: pytest.MonkeyPatch, game: str
) -> None:
    """What counting the floor in batches rests on: the inputs opened since a rule was
    emitted are not in its body, so the batch counts it as it was counted when emitted."""
    rules = parse_gdl((ROOT / "server" / "games" / f"{game}.kif").read_text())
    seen: list[tuple[list[int], set[int]]] = []
    rule = grounder._Collector.rule

    def recording(self: Any, choice: bool, head: list[int], body: list[int]) -> None:
        if not choice:
            seen.append((body, {literal for literal in body if literal in self.choices}))
        rule(self, choice, head, body)

    monkeypatch.setattr(grounder._Collector, "rule", recording)
    # through clingo's Python observer, which calls ``rule`` for every rule (the C
    # callbacks append the plain ones to the list themselves), in the same order
    monkeypatch.setattr(grounder, "register_rule_observer", lambda control, observer: None)
    program = ground(rules, max_rules=10**6, deadline=1e9, work_budget=1e18)
    assert len(seen) == len(program.rules) and program.choices
    on_inputs = [{literal for literal in body if literal in program.choices} for body, _ in seen]
    assert on_inputs == [known for _, known in seen]
    assert any(on_inputs)


def test_the_engine_refuses_by_the_floor_before_building_the_network(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rules = parse_gdl(shifting_counter(CELLS))

    def no_network(*args: object) -> None:
        raise AssertionError("the network was built")

    monkeypatch.setattr(compiled_engine, "work_budget", lambda time_limit: 1000.0)
    monkeypatch.setattr(compiled_engine, "build_network", no_network)
    with pytest.raises(NetworkOverBudget):
        CompiledEngine.from_rules(rules)


TABLES_ONLY = """
(role r)
(init (lamp))
(init (kept))
(<= (legal r push) (true (lamp)))
(<= (legal r stay) (true (lamp)))
(<= (legal r jump) (true (lamp)))
(<= pushed (does r push))
(<= pushed (does r jump))
(<= (next (lamp)) (true (lamp)) (not pushed))
(<= (next (seen)) (true (seen)))
(<= (next (on)) (does r push))
(<= (next (kept)) (true (kept)) (does r stay))
(<= terminal (true (on)))
(<= (goal r 100) terminal)
(<= (goal r 0) (not terminal))
"""
"""Every next-state body goes into the plan's tables: a fluent that persists unless a
move (through an atom defined by moves) is played, one that persists, one a move sets,
one that persists while a move is played."""

COUNTER = """
(succ 0 1) (succ 1 2) (succ 2 3) (succ 3 4)
(init (count 0))
(<= (next (count ?y)) (true (count ?x)) (succ ?x ?y) (does r stay))
"""
"""Next-state bodies left to code: each tests another fluent than the one it sets."""

KEPT_WHILE_LIT = """
(init (count 0))
(count 0) (count 1) (count 2) (count 3) (count 4)
(<= (legal r (set ?x)) (count ?x))
(<= (next (count ?x)) (does r (set ?x)))
(<= (next (count ?x)) (true (count ?x)) (true (lamp)) (count ?x))
"""
"""Next-state bodies left to code that copy their own fluent under the same other
literal: one action in the plan's count and in the prediction alike."""


def shifting_counter_sizes(
    monkeypatch: pytest.MonkeyPatch,
) -> tuple[list[Any], list[int], int]:
    """The rules of a 40-cell shifting counter, the sizes predicted of them and the
    plan's count (see :func:`predicted_and_counted`), the patches undone."""
    predicted, counted, _ = predicted_and_counted(monkeypatch, shifting_counter(40))
    monkeypatch.undo()
    return parse_gdl(shifting_counter(40)), predicted, counted


def predicted_and_counted(
    monkeypatch: pytest.MonkeyPatch, text: str
) -> tuple[list[int], int, list[object]]:
    """The sizes predicted from the ground program while the network is built, the
    count of the plan, and the plan's next-state bodies left to code."""
    predicted: list[int] = []
    predict = ground_size.predicted_next_chars

    def recording(*args: Any) -> int:
        predicted.append(predict(*args))
        return predicted[-1]

    monkeypatch.setattr(ground_size, "predicted_next_chars", recording)
    rules = parse_gdl(text)
    program = ground(rules, max_rules=10**6, deadline=1e9, read_names=False)
    plan = build_plan(build_network(program, _roles(rules)))
    assert plan.next is not None
    return predicted, codegen.next_body_chars(plan), list(plan.next.general)


@pytest.mark.source_modules
def test_bodies_the_plan_puts_in_tables_are_not_predicted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    predicted, counted, general = predicted_and_counted(monkeypatch, TABLES_ONLY)
    assert predicted == [0] and counted == 0 and general == []


@pytest.mark.source_modules
def test_the_prediction_from_the_ground_program_is_near_the_count_of_the_plan(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    predicted, counted, general = predicted_and_counted(monkeypatch, TABLES_ONLY + KEPT_WHILE_LIT)
    assert len(general) == 5 and 0.8 * counted <= predicted[0] <= 1.2 * counted
    monkeypatch.undo()
    # the plan writes the four counts, each moved up by one bit, as one action; the
    # prediction cannot tell the fluents' bits before they are sorted, so it counts four
    predicted, counted, general = predicted_and_counted(monkeypatch, TABLES_ONLY + COUNTER)
    assert len(general) == 4 and 2 * counted <= predicted[0]
    monkeypatch.undo()
    # the same for the token's 200 cells; its 200 fluents seen, each copied, count alike
    predicted, counted, _ = predicted_and_counted(monkeypatch, shifting_counter(200))
    assert counted < predicted[0] < 3 * counted


@pytest.mark.source_modules
def test_a_predicted_size_past_the_cap_is_refused_before_any_name_is_decoded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rules, predicted, counted = shifting_counter_sizes(monkeypatch)
    capped(monkeypatch, predicted[0] - 1)
    monkeypatch.setattr(grounder, "decode_arguments", never_decode)
    with pytest.raises(GroundingTooLarge) as caught:
        CompiledEngine.from_rules(rules, factoring=False)
    assert caught.value.reason == PREDICTED_TOO_LARGE
    monkeypatch.undo()
    capped(monkeypatch, max(predicted[0], counted))
    engine = CompiledEngine.from_rules(rules)
    assert ("cell", "1") in engine.next_state(engine.initial_state(), ["step"]).facts


def test_the_early_prediction_has_the_cap_of_the_plan_count() -> None:
    assert ground_size.MAX_PREDICTED_NEXT_CHARS == CodeCaps().max_next_body_chars
