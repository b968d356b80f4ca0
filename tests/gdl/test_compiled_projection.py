"""Variables that occur once in a rule are left to clingo to project away: a body that
joins the state with a move of some shape grounds once per value of the arguments it
uses, not once per move."""

from __future__ import annotations

from compiled_checks import engine_disagreements

from server.gdl.compiled import GroundingTooLarge, compile_engine
from server.gdl.compiled.asp import Translator
from server.gdl.interpreter import Interpreter
from server.gdl.parser import parse_gdl

FILL_THE_GRID = """
(role filler)
(index 1) (index 2) (index 3) (index 4)
(digit 1) (digit 2) (digit 3) (digit 4)
(pen red) (pen blue)
(<= (init (cell ?i ?j b)) (index ?i) (index ?j))
(init (step 0))
(succ 0 1) (succ 1 2) (succ 2 3) (succ 3 4)
(<= (legal filler (mark ?i ?j ?d ?p)) (true (cell ?i ?j b)) (digit ?d) (pen ?p)
    (not (row ?i ?d)) (not (col ?j ?d)))
(<= (legal filler skip) (true (step ?n)))
(<= (row ?i ?d) (true (cell ?i ?j ?d)))
(<= (col ?j ?d) (true (cell ?i ?j ?d)))
(<= (next (cell ?i ?j ?d)) (does filler (mark ?i ?j ?d ?p)))
(<= (next (cell ?i ?j ?c)) (true (cell ?i ?j ?c)) (does filler (mark ?s ?t ?e ?q))
    (distinct ?s ?i))
(<= (next (cell ?i ?j ?c)) (true (cell ?i ?j ?c)) (does filler (mark ?s ?t ?e ?q))
    (distinct ?t ?j))
(<= (next (cell ?i ?j ?c)) (true (cell ?i ?j ?c)) (does filler skip))
(<= (next (step ?m)) (true (step ?n)) (succ ?n ?m))
(<= open (true (cell ?i ?j b)))
(<= terminal (true (step 4)))
(<= terminal (not open))
(<= (goal filler 100) (not open))
(<= (goal filler 0) open)
"""
"""A 4 x 4 grid filled one digit at a time. Each frame rule asks whether some mark
is played off the cell's row (or column): unprojected, it grounds once per cell,
content and mark (80 x 128, some 10,000 rules each); projected, once per cell,
content and row (80 x 4)."""


def test_a_frame_rule_over_moves_of_some_shape_grounds_once_per_used_value() -> None:
    engine = compile_engine(parse_gdl(FILL_THE_GRID), max_ground_rules=3_000)
    assert engine.network.stats["ground_rules"] <= 3_000


def test_the_projected_game_plays_like_the_interpreter() -> None:
    rules = parse_gdl(FILL_THE_GRID)
    engine = compile_engine(rules, max_ground_rules=3_000)
    assert engine_disagreements(engine, Interpreter(rules), "fill the grid", playouts=4) == []


def test_a_rule_over_every_pair_of_cells_still_meets_the_cap() -> None:
    # every variable of the join is used: nothing can be projected
    text = FILL_THE_GRID + "(<= (pair ?i ?j ?k ?l) (true (cell ?i ?j b)) (true (cell ?k ?l b)))\n"
    text += "(<= (goal filler 50) (pair 1 1 4 4))\n"
    try:
        compile_engine(parse_gdl(text), max_ground_rules=200)
    except GroundingTooLarge:
        return
    raise AssertionError("a program over the cap was compiled")


def _translated(text: str) -> list[str]:
    """The ASP rules of a program, without the open inputs."""
    return Translator().program(parse_gdl(text)).split("\n")[3:]


def test_the_unused_arguments_of_a_move_joined_with_the_state_are_anonymous() -> None:
    (frame,) = _translated(
        "(<= (next (cell ?i ?c)) (true (cell ?i ?c)) (does ?r (mark ?s ?e ?f ?g)) (distinct ?s ?i))"
    )
    assert frame == 'n(("cell",V0,V1)) :- t(("cell",V0,V1)), d(V2, ("mark",V3,_,_,_)), V3 != V0.'


def test_a_move_with_few_unused_arguments_is_left_as_it_is() -> None:
    # tic-tac-toe's frame rule: projecting one argument would slow the generated code
    (frame,) = _translated(
        "(<= (next (cell ?i ?c)) (true (cell ?i ?c)) (does ?r (mark ?s ?e)) (distinct ?s ?i))"
    )
    assert "_" not in frame


def test_a_body_without_the_state_keeps_its_variables() -> None:
    rule = _translated("(<= (moved ?x) (does ?r (move ?x ?y ?z ?w)) (role ?r))")[0]
    assert rule == 'r8(V0) :- d(V1, ("move",V0,V2,V3,V4)), o(V1).'


def test_variables_of_negative_literals_and_of_distinct_are_never_anonymous() -> None:
    (rule,) = _translated(
        "(<= (free ?x) (true (cell ?x ?y)) (does ?r (put ?x ?a ?b ?c)) (not (blocked ?x ?z))"
        " (distinct ?w 1))"
    )
    assert rule.endswith(', not r9(V0, V2), V3 != "1".')
    assert rule.count("_") == 4
