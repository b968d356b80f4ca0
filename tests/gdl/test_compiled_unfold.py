"""Unfolding: a static helper with one rule is written in place of the literals that
read it, when the rules are factored and that factors them narrower.

A line of four pieces wins when the four share an attribute. Written with a helper
that ties the four pieces together, the line grounds once per row and quadruple of
pieces; with the helper's body in its place, each cell meets the others only through
the attribute, and factoring gives each cell a small rule of its own.
"""

from __future__ import annotations

import json
import random
import time

import pytest
from compiled_checks import (
    fast_path_differences,
    reachable_states,
    state_disagreements,
    trace_differences,
)
from shared_material import shared_path

from server.gdl.compiled import CompiledEngine
from server.gdl.compiled.asp import Translator, dynamic_relations
from server.gdl.compiled.engine import FACTORED
from server.gdl.compiled.grounder import ground
from server.gdl.compiled.relations import relation_key
from server.gdl.compiled.unfold import unfold_helpers
from server.gdl.interpreter import Interpreter
from server.gdl.parser import parse_gdl
from server.gdl.terms import RawTerm

PIECES = [f"p{a}{b}{c}{d}" for a in "01" for b in "01" for c in "01" for d in "01"]


def lines_game() -> str:
    """Two players take turns placing any of sixteen pieces (four binary attributes,
    each piece used once) on a 4 x 4 board; a full row of pieces sharing an attribute
    ends the game, a win for the player who placed last."""
    indices = ["1", "2", "3", "4"]
    cells = " ".join(f"?p{k}" for k in indices)
    attribute_facts = " ".join(
        f"(attribute {n} {piece} {piece[n]})" for piece in PIECES for n in (1, 2, 3, 4)
    )
    same = " ".join(f"(attribute ?n ?p{k} ?bit)" for k in indices)
    return f"""
    (role white) (role black)
    {" ".join(f"(index {i})" for i in indices)}
    {" ".join(f"(piece {p})" for p in PIECES)}
    (bit 0) (bit 1) (attr 1) (attr 2) (attr 3) (attr 4)
    {attribute_facts}
    {" ".join(f"(init (cell {x} {y} empty))" for x in indices for y in indices)}
    (<= (init (pool ?p)) (piece ?p))
    (init (control white))
    (<= (legal ?r (place ?p ?x ?y)) (true (control ?r)) (true (pool ?p))
        (true (cell ?x ?y empty)))
    (<= (legal ?r noop) (role ?r) (not (true (control ?r))))
    (<= (next (cell ?x ?y ?p)) (does ?r (place ?p ?x ?y)))
    (<= (next (cell ?x ?y ?c)) (true (cell ?x ?y ?c)) (does ?r (place ?p ?u ?v))
        (distinct ?x ?u))
    (<= (next (cell ?x ?y ?c)) (true (cell ?x ?y ?c)) (does ?r (place ?p ?u ?v))
        (distinct ?y ?v))
    (<= (next (pool ?p)) (true (pool ?p)) (not (placed ?p)))
    (<= (placed ?p) (does ?r (place ?p ?x ?y)))
    (<= (next (control white)) (true (control black)))
    (<= (next (control black)) (true (control white)))
    (<= (next (last ?r)) (does ?r (place ?p ?x ?y)))
    (<= (alike {cells}) (bit ?bit) (attr ?n) {same})
    (<= row (index ?y) {" ".join(f"(true (cell {k} ?y ?p{k}))" for k in indices)}
        (alike {cells}))
    (<= open (true (cell ?x ?y empty)))
    (<= terminal row)
    (<= terminal (not open))
    (<= (goal ?r 100) (role ?r) row (true (last ?r)))
    (<= (goal ?r 0) (role ?r) row (not (true (last ?r))))
    (<= (goal ?r 50) (role ?r) (not row))
    """


def clauses_of(text: str) -> list[tuple[RawTerm, tuple[RawTerm, ...]]]:
    return [(rule.head, rule.body) for rule in parse_gdl(text)]


def unfold(text: str) -> list[tuple[RawTerm, tuple[RawTerm, ...]] | None]:
    rules = parse_gdl(text)
    return unfold_helpers(
        [(rule.head, rule.body) for rule in rules],
        dynamic_relations(rules),
        lambda head, body: frozenset(),
    )


def on_the_state(text: str, clauses: list) -> list:
    """The clauses of ``clauses`` whose relations depend on the state in the game
    ``text`` (no static helper that nothing reads is left out of them)."""
    dynamic = dynamic_relations(parse_gdl(text))
    return [c for c in clauses if c is not None and relation_key(c[0]) in dynamic]


def test_the_helper_body_takes_the_place_of_the_literal_and_the_helper_goes() -> None:
    text = lines_game()
    before = clauses_of(text)
    after = unfold(text)
    (row,) = [clause for clause in after if clause is not None and clause[0] == "row"]
    # the row and its four cells, then the helper's body: its head variables renamed to the
    # literal's arguments, its own variables to fresh ones
    assert row[1][:5] == before[[head for head, _ in before].index("row")][1][:5]
    assert row[1][5:] == (
        ("bit", "?bit 1"),
        ("attr", "?n 1"),
        *(("attribute", "?n 1", f"?p{k}", "?bit 1") for k in (1, 2, 3, 4)),
    )
    # nothing reads the helper any more, so its rule is dropped
    dropped = [before[k][0] for k, clause in enumerate(after) if clause is None]
    assert dropped == [("alike", "?p1", "?p2", "?p3", "?p4")]
    # everything else is as it was
    kept = [clause for clause in after if clause is not None and clause[0] != "row"]
    assert kept == [clause for clause in before if clause[0] not in ("row", dropped[0])]


@pytest.mark.parametrize(
    "helper",
    [
        # two rules: unfolding would need one body per rule
        "(<= (alike ?a ?b) (attr ?n) (attribute ?n ?a 0) (attribute ?n ?b 0)) "
        "(<= (alike ?a ?b) (attr ?n) (attribute ?n ?a 1) (attribute ?n ?b 1))",
        # a fact beside the rule
        "(alike p000 p000) (<= (alike ?a ?b) (bit ?c) (attr ?n) (attribute ?n ?a ?c) "
        "(attribute ?n ?b ?c))",
        # no variable of its own: nothing it could share that the literal does not show
        "(<= (alike ?a ?b) (attribute 1 ?a 0) (attribute 1 ?b 0))",
        # a constant in the head
        "(<= (alike ?a p000) (bit ?c) (attr ?n) (attribute ?n ?a ?c) (attribute ?n p000 ?c))",
        # on the state: not static
        "(<= (alike ?a ?b) (true (pool ?c)) (attribute 1 ?a ?c) (attribute 1 ?b ?c))",
    ],
)
def test_only_a_static_helper_with_one_rule_of_distinct_variables_is_unfolded(
    helper: str,
) -> None:
    text = f"""
    (bit 0) (bit 1) (attr 1) (attribute 1 p000 0) (attribute 1 p001 1) (init (pool 0))
    {helper}
    (<= (pair ?x ?y) (true (cell 1 ?x ?a)) (true (cell 2 ?y ?b)) (alike ?a ?b))
    """
    assert on_the_state(text, unfold(text)) == on_the_state(text, clauses_of(text))


def test_a_negated_helper_literal_and_a_rule_that_would_not_factor_narrower_stay() -> None:
    text = """
    (bit 0) (attr 1) (attribute 1 p000 0)
    (<= (alike ?a ?b) (bit ?c) (attr ?n) (attribute ?n ?a ?c) (attribute ?n ?b ?c))
    (<= (apart ?a ?b) (true (cell ?a)) (true (cell ?b)) (not (alike ?a ?b)))
    (<= (same ?a) (true (cell ?a)) (alike ?a ?a))
    """
    # (same ?a) unfolded joins four literals on ?a, ?c and ?n: no narrower than two
    assert on_the_state(text, unfold(text)) == on_the_state(text, clauses_of(text))


def test_the_lines_ground_a_fraction_of_the_rules_unfolded() -> None:
    rules = parse_gdl(lines_game())
    deadline = time.thread_time() + 60
    as_written = ground(rules, max_rules=2_000_000, deadline=deadline)
    factored = ground(rules, max_rules=2_000_000, deadline=deadline, factoring=True)
    translator = Translator(factoring=True)
    translator.program(rules)
    assert (translator.unfolded, translator.dropped) == (1, 1)
    assert len(as_written.rules) > 3 * len(factored.rules)


def test_every_reachable_state_of_the_unfolded_game_agrees_with_the_interpreter() -> None:
    rules = parse_gdl(lines_game())
    compiled = CompiledEngine.from_rules(rules, factoring=True)
    assert compiled.form == FACTORED
    states = reachable_states(compiled, limit=500)
    rng = random.Random(3)
    for _ in range(100):  # the lines are far from the initial state
        state = compiled.initial_state()
        while not compiled.is_terminal(state):
            joint = [rng.choice(compiled.legal_moves(state, role)) for role in compiled.roles]
            state = compiled.next_state(state, joint)
            states.append(state)
    # lines of alike pieces are reached, and end the game
    assert sum(("cell", "4", "4", "empty") not in state.facts for state in states) > 100
    assert any(compiled.goal_values(state, "white") == ["100"] for state in states)
    assert state_disagreements(compiled, Interpreter(rules), states) == []
    assert fast_path_differences(compiled) == []


@pytest.mark.parametrize("name", ["quarto", "quartoSuicide"])
def test_quarto_compiles_within_the_default_limit_and_follows_its_trace(name: str) -> None:
    rules = parse_gdl(shared_path("conformance", "games", f"{name}.kif").read_text("utf-8"))
    # the game's lines ground some 230,000 rules as written, 6,600 unfolded and factored
    engine = CompiledEngine.from_rules(rules)
    assert engine.form == FACTORED
    assert engine.network.stats["ground_rules"] < 10_000
    trace = json.loads(shared_path("conformance", "traces", f"{name}.json").read_text("utf-8"))
    assert trace_differences(engine, trace) == []
    assert fast_path_differences(engine) == []


def test_a_literal_with_a_constant_unfolds_with_it_and_each_literal_gets_fresh_variables() -> None:
    text = (
        lines_game()
        + """
    (<= twin (true (cell 1 1 ?a)) (true (cell 2 1 ?b)) (true (cell 3 1 ?c))
        (true (cell 4 1 ?d)) (alike ?a ?b ?c ?d) (true (cell 1 2 ?e)) (true (cell 2 2 ?f))
        (true (cell 3 2 ?g)) (alike ?e ?f ?g p0000))
    """
    )
    written = clauses_of(text)[-1][1]
    (twin,) = [clause for clause in unfold(text) if clause is not None and clause[0] == "twin"]
    first = [("attribute", "?n 2", piece, "?bit 2") for piece in ("?a", "?b", "?c", "?d")]
    second = [("attribute", "?n 3", piece, "?bit 3") for piece in ("?e", "?f", "?g", "p0000")]
    assert twin[1] == (
        *written[:4],
        ("bit", "?bit 2"),
        ("attr", "?n 2"),
        *first,
        *written[5:8],
        ("bit", "?bit 3"),
        ("attr", "?n 3"),
        *second,
    )


def test_static_helpers_no_rule_reads_are_left_out_of_the_rules_as_written_too() -> None:
    text = (
        lines_game()
        + """
    (<= (adjacent ?a ?b ?c ?d) (index ?a) (index ?b) (index ?c) (index ?d))
    (<= (far ?a ?b) (adjacent ?a ?a ?b ?b) (distinct ?a ?b))
    """
    )
    rules = parse_gdl(text)
    translator = Translator()
    translator.program(rules)
    # adjacent is read by far alone, which nothing reads; alike is still read by row
    assert (translator.unfolded, translator.dropped) == (0, 2)
    deadline = time.thread_time() + 60
    without = ground(parse_gdl(lines_game()), max_rules=2_000_000, deadline=deadline)
    assert len(ground(rules, max_rules=2_000_000, deadline=deadline).rules) == len(without.rules)
