"""Demand: a helper relation is grounded only for the arguments the rules ask about.

A game that counts the stones on two fixed lines of cells with ``(count a b c ?p
three)`` would, grounded in full, count over every triple of cells; with demand it is
grounded for the two lines alone, and the engine still agrees with the interpreter on
every state it can reach.
"""

from __future__ import annotations

import time
from itertools import pairwise

from compiled_checks import reachable_states, state_disagreements

from server.gdl.compiled import CompiledEngine
from server.gdl.compiled.asp import Translator
from server.gdl.compiled.demand import demanded_positions
from server.gdl.compiled.grounder import ground
from server.gdl.interpreter import Interpreter
from server.gdl.parser import parse_gdl, parse_term
from server.gdl.state import State


def lines_game(cells: int) -> str:
    """Two players place stones on a row of cells; three in a row at either end wins,
    and a chain of one player's stones from the first cell to the last wins too."""
    names = [f"c{k}" for k in range(cells)]
    facts = " ".join(f"(cell {name})" for name in names)
    facts += " " + " ".join(f"(adjacent {a} {b})" for a, b in pairwise(names))
    first, last = names[:3], names[-3:]
    return f"""
    (role white) (role black)
    (init (control white))
    {facts}
    (<= (occupied ?x) (true (stone ?x ?p)))
    (<= (owns ?x ?p) (true (stone ?x ?p)))
    (<= (free ?x) (cell ?x) (not (occupied ?x)))
    (<= (legal ?p (place ?x)) (true (control ?p)) (free ?x))
    (<= (legal ?p noop) (role ?p) (not (true (control ?p))))
    (<= (next (stone ?x ?p)) (does ?p (place ?x)))
    (<= (next (stone ?x ?p)) (true (stone ?x ?p)))
    (<= (next (control black)) (true (control white)))
    (<= (next (control white)) (true (control black)))
    (<= (count ?x ?y ?z ?p three) (owns ?x ?p) (owns ?y ?p) (owns ?z ?p))
    (<= (count ?x ?y ?z ?p two) (owns ?x ?p) (owns ?y ?p) (free ?z))
    (<= (line ?p) (count {" ".join(first)} ?p three))
    (<= (line ?p) (count {" ".join(last)} ?p three))
    (<= (threat ?p) (count {" ".join(first)} ?p two))
    (<= (threat ?p) (count {" ".join(last)} ?p two))
    (<= (reach ?p ?x ?y) (adjacent ?x ?y) (owns ?x ?p) (owns ?y ?p))
    (<= (reach ?p ?x ?z) (reach ?p ?x ?y) (adjacent ?y ?z) (owns ?z ?p))
    (<= (chain ?p) (reach ?p {names[0]} {names[-1]}))
    (<= (held ?p ?x) (true (stone ?x ?p)))
    (<= (ends ?p) (held ?p {names[0]}) (held ?p {names[-1]}))
    (<= somefree (free ?x))
    (<= terminal (line ?p))
    (<= terminal (chain ?p))
    (<= terminal (not somefree))
    (<= (goal ?p 100) (line ?p))
    (<= (goal ?p 100) (chain ?p))
    (<= (goal ?p 75) (ends ?p))
    (<= (goal ?p 50) (role ?p) (threat ?p) (not (line white)) (not (line black)))
    (<= (goal ?p 0) (role ?p) (not (count {" ".join(first)} ?p three))
        (not (count {" ".join(last)} ?p three)) (not (threat ?p)) (not (chain ?p)))
    """


def test_relations_read_with_constants_are_demanded_on_the_positions_every_read_fixes() -> None:
    translator = Translator()
    translator.program(parse_gdl(lines_game(6)))
    assert translator.demand == {
        # the cells and the result; ?p is bound nowhere else in (line ?p)
        ("count", 5, True): (0, 1, 2, 4),
        # the recursive read binds only ?y
        ("reach", 3, True): (2,),
        # two reads in one body bind nothing for each other: each would wait for the
        # other's demand
        ("held", 2, True): (1,),
        # threat is always read as (threat ?p) after (role ?p): no constant to demand
    }


def test_a_relation_read_without_a_constant_anywhere_is_not_demanded() -> None:
    rules = parse_gdl("(<= (p ?x) (true (q ?x))) (<= (r ?x) (role ?x) (p ?x))")
    bodies = [rule.body for rule in rules]
    dynamic = frozenset({("p", 1, True), ("r", 1, True), ("true", 1, True)})
    assert demanded_positions(bodies, dynamic) == {}
    static = frozenset({("true", 1, True)})
    constant = parse_gdl("(<= (p ?x) (q ?x)) (<= (r ?x) (role ?x) (p a))")
    assert demanded_positions([rule.body for rule in constant], static) == {}


def test_a_read_under_not_fixes_positions_too() -> None:
    rules = parse_gdl(
        "(<= (p ?x ?y) (true (q ?x ?y))) (<= (r ?y) (role ?y) (not (p a ?y)))"
        " (<= (s ?x) (role ?x) (p ?x b))"
    )
    dynamic = frozenset({("p", 2, True), ("r", 1, True), ("s", 1, True), ("true", 1, True)})
    assert demanded_positions([rule.body for rule in rules], dynamic) == {("p", 2, True): (0, 1)}


def test_demand_grounds_the_lines_not_every_triple_of_cells() -> None:
    rules = parse_gdl(lines_game(24))
    program = ground(rules, max_rules=1_000_000, deadline=time.thread_time() + 60)
    # in full, count alone grounds 2 * 24**3 rules per result (55,296)
    assert len(program.rules) < 3_000
    engine = CompiledEngine.from_rules(rules)
    state = State([parse_term("(control white)")])
    for cell, owner in [("c21", "white"), ("c22", "white"), ("c23", "white")]:
        state = State([*state.facts, parse_term(f"(stone {cell} {owner})")])
    assert engine.is_terminal(state)
    assert engine.goal_values(state, "white") == ["100"]


def test_every_reachable_state_agrees_with_the_interpreter() -> None:
    rules = parse_gdl(lines_game(6))
    compiled, interpreter = CompiledEngine.from_rules(rules), Interpreter(rules)
    states = reachable_states(compiled, limit=1_000)
    assert len(states) > 200  # the whole game
    assert state_disagreements(compiled, interpreter, states) == []
    # every goal rule fires somewhere among the states compared
    outcomes = {
        tuple(sorted(compiled.goal_values(state, role)))
        for state in states
        for role in compiled.roles
    }
    assert {("0",), ("50",), ("100",), ("0", "75"), ("50", "75")} <= outcomes
