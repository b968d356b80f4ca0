"""Factoring: a rule whose body joins groups of literals that share few variables is
split into smaller rules before grounding.

Two players mark a cell on each of two boards at once, and a cell keeps its mark when
neither move touches it. Grounded as written, that frame rule is one rule per cell,
mark and pair of moves; factored, each move meets the cell apart. The compiled engine
tries the rules as written first and factors them only when they are too large, so
games that compile as written keep their networks; the factored game agrees with the
interpreter on every state it can reach.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable

import pytest
from compiled_checks import (
    fast_path_differences,
    reachable_states,
    state_disagreements,
    trace_differences,
)
from shared_material import shared_path

from server.gdl.compiled import CompiledEngine, GroundingTooLarge
from server.gdl.compiled.asp import Translator
from server.gdl.compiled.engine import FACTORED_MAX_BUDGET, factored_budget, rule_budget
from server.gdl.compiled.factor import factor_rule
from server.gdl.compiled.grounder import NothingToFactor, ground
from server.gdl.interpreter import Interpreter
from server.gdl.parser import parse_gdl, parse_term
from server.gdl.terms import RawTerm


def boards_game(size: int, rounds: int = 2) -> str:
    """Red and blue each mark one blank cell of each of two boards per round, at once;
    red wins a cell both mark. A score counts up by three each round."""
    indices = [str(k) for k in range(1, size + 1)]
    facts = " ".join(f"(index {i})" for i in indices)
    facts += " " + " ".join(f"(succ {k} {k + 1})" for k in range(3 * rounds + 1))
    init = " ".join(
        f"(init (cell{board} {x} {y} b))" for board in (1, 2) for x in indices for y in indices
    )
    boards = []
    for board in (1, 2):
        first = "?x ?y ?u ?v" if board == 1 else "?u ?v ?x ?y"
        red = "?xr ?yr ?ur ?vr" if board == 1 else "?ur ?vr ?xr ?yr"
        blue = "?xb ?yb ?ub ?vb" if board == 1 else "?ub ?vb ?xb ?yb"
        boards.append(f"""
        (<= (marked{board} ?r ?x ?y) (does ?r (mark {first})))
        (<= (next (cell{board} ?x ?y red)) (marked{board} red ?x ?y))
        (<= (next (cell{board} ?x ?y blue)) (marked{board} blue ?x ?y)
            (not (marked{board} red ?x ?y)))
        (<= (next (cell{board} ?x ?y ?m)) (true (cell{board} ?x ?y ?m))
            (does red (mark {red})) (does blue (mark {blue}))
            (differ ?x ?y ?xr ?yr) (differ ?x ?y ?xb ?yb))
        """)
    return f"""
    (role red) (role blue)
    {facts}
    {init}
    (init (score 0))
    (<= (differ ?x ?y ?u ?v) (index ?x) (index ?y) (index ?u) (index ?v) (distinct ?x ?u))
    (<= (differ ?x ?y ?u ?v) (index ?x) (index ?y) (index ?u) (index ?v) (distinct ?y ?v))
    (<= (legal ?r (mark ?x1 ?y1 ?x2 ?y2)) (role ?r)
        (true (cell1 ?x1 ?y1 b)) (true (cell2 ?x2 ?y2 b)))
    {"".join(boards)}
    (<= (next (score ?n)) (true (score ?o)) (does red (mark ?a ?b ?c ?d))
        (succ ?o ?p) (succ ?p ?q) (succ ?q ?n))
    (<= terminal (true (score {3 * rounds})))
    (<= (goal ?r 100) (role ?r) (true (cell1 1 1 ?r)))
    (<= (goal ?r 0) (role ?r) (not (true (cell1 1 1 ?r))))
    """


def numbered() -> Callable[[], str]:
    """Names for the new relations, from the translator that names them."""
    return Translator(factoring=True).new_factored_relation


def sentences(*texts: str) -> list[RawTerm]:
    """Body literals, written in KIF."""
    return [parse_term(text) for text in texts]


def test_each_move_meets_the_cell_in_a_rule_of_its_own() -> None:
    head = parse_term("(next (cell ?x ?y ?m))")
    body = sentences(
        "(true (cell ?x ?y ?m))",
        "(does red (mark ?xr ?yr))",
        "(does blue (mark ?xb ?yb))",
        "(differ ?x ?y ?xr ?yr)",
        "(differ ?x ?y ?xb ?yb)",
    )
    rules = factor_rule(head, body, frozenset(), numbered())
    # blue's move goes first (the tie between the moves is broken by name)
    assert rules == [
        (("#factor1", "?x", "?y"), (body[2], body[4])),
        (("#factor2", "?x", "?y"), (body[1], body[3])),
        (head, (body[0], ("#factor2", "?x", "?y"), ("#factor1", "?x", "?y"))),
    ]


def test_small_rules_and_rules_every_literal_shares_are_left_as_they_are() -> None:
    name = numbered()
    # tic-tac-toe's move: three variables, nothing to gain
    head = parse_term("(next (cell ?x ?y x))")
    body = sentences("(does ?r (mark ?x ?y))", "(true (control ?r))")
    assert factor_rule(head, body, frozenset(), name) is None
    # a line of four: the variable of the row is in every literal
    head = parse_term("(line ?p)")
    body = sentences(*(f"(true (cell ?r {c} ?p))" for c in range(4)))
    assert factor_rule(head, body, frozenset(), name) is None


def test_a_negated_literal_goes_only_with_literals_that_bind_its_variables() -> None:
    head = parse_term("(h ?x)")
    body = sentences(
        "(p ?x ?w)",
        "(q ?x ?y ?v)",
        "(r ?y ?z)",
        "(t ?z ?u)",
        "(not (s ?u ?w))",
        "(distinct ?v ?u)",
    )
    rules = factor_rule(head, body, frozenset(), numbered())
    assert rules is not None
    assert_safe(rules)


def assert_safe(rules: list[tuple[RawTerm, tuple[RawTerm, ...]]]) -> None:
    """Every variable of each rule occurs in a positive relation literal of its body."""
    for piece_head, piece_body in rules:
        bound: set[str] = set()
        for literal in piece_body:
            if literal[0] not in ("not", "distinct"):
                bound.update(_variables(literal))
        for literal in piece_body:
            assert set(_variables(literal)) <= bound, (piece_head, literal)
        assert set(_variables(piece_head)) <= bound


def test_a_piece_copies_the_literal_that_binds_its_negated_literal() -> None:
    # crossers3 ranks three robots by their step counters
    head = parse_term("(goal ?r1 20)")
    body = sentences(
        "allreached",
        "(true (steps ?r1 ?s1))",
        "(true (steps ?r2 ?s2))",
        "(distinct ?r1 ?r2)",
        "(true (steps ?r3 ?s3))",
        "(distinct ?r1 ?r3)",
        "(distinct ?r2 ?r3)",
        "(not (smaller ?s1 ?s2))",
        "(not (smaller ?s1 ?s3))",
    )
    rules = factor_rule(head, body, frozenset(), numbered())
    assert rules is not None
    guard = body[1]
    for negated in (body[7], body[8]):
        (piece,) = [piece_body for _, piece_body in rules if negated in piece_body]
        assert guard in piece
    # copied, the guard stays where it was too (in a later piece here)
    assert sum(guard in piece_body for _, piece_body in rules) == 3
    assert_safe(rules)


def _variables(term: RawTerm) -> list[str]:
    if isinstance(term, str):
        return [term] if term.startswith("?") else []
    return [v for part in term for v in _variables(part)]


def test_the_frame_rules_ground_thousands_of_rules_factored_instead_of_280_000() -> None:
    rules = parse_gdl(boards_game(3))
    deadline = time.thread_time() + 60
    as_written = ground(rules, max_rules=2_000_000, deadline=deadline)
    factored = ground(rules, max_rules=2_000_000, deadline=deadline, factoring=True)
    assert len(as_written.rules) > 250_000
    assert len(factored.rules) < 10_000


def test_a_game_too_large_as_written_compiles_factored() -> None:
    rules = parse_gdl(boards_game(3))
    with pytest.raises(GroundingTooLarge):
        CompiledEngine.from_rules(rules, max_ground_rules=50_000, factoring=False)
    engine = CompiledEngine.from_rules(rules, max_ground_rules=50_000)
    interpreter = Interpreter(rules)
    state = engine.initial_state()
    joint = [parse_term("(mark 1 1 2 2)"), parse_term("(mark 1 1 3 3)")]
    after = engine.next_state(state, joint)
    assert after == interpreter.next_state(state, joint)
    assert parse_term("(cell1 1 1 red)") in after.facts
    assert parse_term("(cell2 3 3 blue)") in after.facts
    assert engine.goal_values(after, "red") == ["100"]


def test_a_game_that_compiles_as_written_is_not_factored() -> None:
    rules = parse_gdl(boards_game(2))
    as_written = CompiledEngine.from_rules(rules, factoring=False)
    chosen = CompiledEngine.from_rules(rules)
    assert chosen.plan.network.stats == as_written.plan.network.stats


def test_when_both_attempts_fail_the_reason_tells_both() -> None:
    rules = parse_gdl(boards_game(3))
    with pytest.raises(GroundingTooLarge) as failure:
        CompiledEngine.from_rules(rules, max_ground_rules=2_000)
    assert failure.value.reason == (
        "more than 2000 ground rules, as written and with its rules factored"
    )


def test_a_factored_attempt_over_its_budget_fails_as_the_rules_as_written_did() -> None:
    # 5 x 5 boards: 625 moves a player, each piece of a frame rule some 15,000 rules
    rules = parse_gdl(boards_game(5))
    with pytest.raises(GroundingTooLarge) as failure:
        CompiledEngine.from_rules(rules, max_ground_rules=50_000)
    # the budgets of the factored attempt stop it (its estimate passes them first)
    reason = failure.value.reason
    assert reason.startswith("more than 50000 ground rules; with its rules factored, ")
    assert reason.endswith(
        "more than the time limit allows (counted from the rules, inputs and rule bodies)"
    )


def test_nothing_to_factor_is_said_before_grounding() -> None:
    # a chain of three variables: eliminating ?z is tried, and left, as the pieces are
    # as wide as the rule less one
    rules = parse_gdl(
        """(role a) (init (p 1 2)) (init (q 2 3)) (r 3)
        (<= (h ?x) (true (p ?x ?y)) (true (q ?y ?z)) (r ?z))
        (<= (legal a go) (h 1)) (<= (next (p 1 2)) (does a go)) (<= terminal (true (p 2 2)))"""
    )
    translator = Translator(factoring=True)
    translator.program(rules)
    assert translator.factored == 0 and translator.factored_relations > 0
    with pytest.raises(NothingToFactor):
        ground(rules, max_rules=10, deadline=time.thread_time() + 10, factoring=True)
    # a game too large for its cap that nothing factors fails once, for its size alone
    with pytest.raises(GroundingTooLarge) as failure:
        CompiledEngine.from_rules(rules, max_ground_rules=2)
    assert failure.value.reason == "more than 2 ground rules"
    translator = Translator(factoring=True)
    translator.program(parse_gdl(boards_game(2)))
    assert translator.factored >= 3


def test_every_reachable_state_of_the_factored_game_agrees_with_the_interpreter() -> None:
    rules = parse_gdl(boards_game(2))
    compiled = CompiledEngine.from_rules(rules, factoring=True)
    states = reachable_states(compiled, limit=5_000)
    assert len(states) > 100
    assert state_disagreements(compiled, Interpreter(rules), states) == []
    scores = {fact for state in states for fact in state.facts if fact[0] == "score"}
    assert scores == {("score", "0"), ("score", "3"), ("score", "6")}


def test_the_playout_loop_reads_a_factored_gate_only_a_next_rule_reads() -> None:
    # the score's chain of succ becomes gates on the state read by one next rule
    # body alone; the playout loop must compute them where that body reads them
    compiled = CompiledEngine.from_rules(parse_gdl(boards_game(2)), factoring=True)
    for seed in range(5):
        end = compiled.playout(compiled.initial_compact, random.Random(seed))
        assert end.terminal
        assert ("score", "6") in compiled.decode_facts(end.state)


def test_the_factored_attempt_has_smaller_budgets() -> None:
    # the default limit: both attempts failing stay within 0.5 s
    assert factored_budget(2.0) == pytest.approx(0.8)
    assert rule_budget(factored_budget(2.0)) == 32_000
    # a 60 s start clock: at most 190,000 ground rules factored
    assert factored_budget(10.0) == FACTORED_MAX_BUDGET
    assert rule_budget(factored_budget(10.0)) == 190_000
    assert factored_budget(1.0) == 0.0


FACTORED_TRACED = [
    "blockerParallel",
    "tron_10x10",
    "gt_centipede",
    "gt_chicken",
    "connectFour",
    "pentago",
    "cubicup_3player",
    "blocker",
    "checkersTiny",
    "reversi",
]
"""Corpus games with rules that factor (the first two are too large as written), from the
shared corpus: each compiled with its rules factored from the start. The last two also have
static helpers unfolded into some of their rules (:mod:`server.gdl.compiled.unfold`)."""


@pytest.mark.parametrize("name", FACTORED_TRACED)
def test_corpus_games_factored_follow_their_reference_traces(name: str) -> None:
    rules = parse_gdl(shared_path("conformance", "games", f"{name}.kif").read_text("utf-8"))
    translator = Translator(factoring=True)
    translator.program(rules)
    assert translator.factored > 0
    assert (translator.unfolded > 0) == (name in ("checkersTiny", "reversi"))
    engine = CompiledEngine.from_rules(rules, time_limit=60.0, factoring=True)
    trace = json.loads(shared_path("conformance", "traces", f"{name}.json").read_text("utf-8"))
    assert trace_differences(engine, trace) == []
    assert fast_path_differences(engine) == []
