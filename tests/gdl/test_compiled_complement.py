"""Complemented move tests: a frame rule that keeps a cell when the move played leaves
it alone is ground as "the move played touches it", not once per cell and move.

Board games say "this cell stays as it is when some move of this shape, distinct from
it, is played"; grounded as written that is one rule per fluent and move. Each role
plays one move a step, so the compiled engine grounds instead whether the move played
touches the cell: only the pairs where it does reach the ground program. The rewritten
game plays exactly like the interpreter on every joint move.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from compiled_checks import fast_path_differences, reachable_states, state_disagreements

from server.gdl.compiled import CompiledEngine, GroundingTooLarge, asp
from server.gdl.compiled.complement import complement_move_test
from server.gdl.interpreter import Interpreter
from server.gdl.parser import parse_gdl, parse_term

SKIRMISH_LITE = """
(role white) (role black)
(index 1) (index 2) (index 3) (index 4) (index 5)
(succ 1 2) (succ 2 3) (succ 3 4) (succ 4 5)
(<= (near ?a ?b) (succ ?a ?b))
(<= (near ?a ?b) (succ ?b ?a))
(<= (near ?a ?a) (index ?a))
(<= (step ?x1 ?y1 ?x2 ?y2) (near ?x1 ?x2) (near ?y1 ?y2) (distinctCell ?x1 ?y1 ?x2 ?y2))
(<= (distinctCell ?x1 ?y1 ?x2 ?y2) (index ?x1) (index ?y1) (index ?x2) (index ?y2)
    (distinct ?x1 ?x2))
(<= (distinctCell ?x1 ?y1 ?x2 ?y2) (index ?x1) (index ?y1) (index ?x2) (index ?y2)
    (distinct ?y1 ?y2))
(<= (init (cell ?x 2 white)) (index ?x))
(<= (init (cell ?x 4 black)) (index ?x))
(init (control white))
(init (captures white 0)) (init (captures black 0))
(init (turn 0))
(init (ice 3 3))
(<= (occupied ?x ?y ?p) (true (cell ?x ?y ?p)))
(<= (frozen ?x ?y) (true (ice ?x ?y)))
(<= (legal ?p (move ?x1 ?y1 ?x2 ?y2)) (true (control ?p)) (true (cell ?x1 ?y1 ?p))
    (not (frozen ?x1 ?y1)) (step ?x1 ?y1 ?x2 ?y2) (not (occupied ?x2 ?y2 ?p)))
(<= (legal ?p noop) (role ?p) (not (true (control ?p))))
(<= (next (cell ?x2 ?y2 ?p)) (does ?p (move ?x1 ?y1 ?x2 ?y2)))
(<= (next (cell ?x ?y ?q)) (true (cell ?x ?y ?q)) (role ?p) (does ?p (move ?x1 ?y1 ?x2 ?y2))
    (distinctCell ?x ?y ?x1 ?y1) (distinctCell ?x ?y ?x2 ?y2) (not (frozen ?x1 ?y1)))
(<= (next (ice ?x ?y)) (true (ice ?x ?y)))
(<= (next (captures ?p ?n)) (true (captures ?p ?n)) (does ?p (move ?x1 ?y1 ?x2 ?y2))
    (role ?q) (distinct ?p ?q) (not (occupied ?x2 ?y2 ?q)))
(<= (next (captures ?p ?m)) (true (captures ?p ?n)) (does ?p (move ?x1 ?y1 ?x2 ?y2))
    (role ?q) (distinct ?p ?q) (occupied ?x2 ?y2 ?q) (succ ?n ?m))
(<= (next (captures ?p ?n)) (true (captures ?p ?n)) (does ?p noop))
(<= (next (control black)) (true (control white)))
(<= (next (control white)) (true (control black)))
(<= (next (turn ?m)) (true (turn ?n)) (succ ?n ?m))
(<= (next (turn 1)) (true (turn 0)))
(<= terminal (true (turn 5)))
(<= terminal (true (captures ?p 3)))
(<= (goal ?p ?n) (true (captures ?p ?n)))
"""
"""Pawns that step to any of the eight neighbouring cells of a 5 x 5 board, capturing
what they land on; a pawn that steps on the ice in the middle stays there. The frame
rule keeps a cell no move starts or ends on (and whose pawn is not frozen), and a
capture counter stays when the destination holds no opponent: both ask a move of
four variables about the state through tests of them."""


def _rule(kif: str) -> tuple[object, tuple[object, ...]]:
    term = parse_term(kif)
    assert isinstance(term, tuple) and term[0] == "<="
    return term[1], tuple(term[2:])


def _names() -> Callable[[], str]:
    count = iter(range(1, 100))
    return lambda: f"f{next(count)}"


def test_a_frame_rule_asks_whether_the_move_played_touches_its_cell() -> None:
    head, body = _rule(
        "(<= (next (location ?x ?y ?p)) (true (location ?x ?y ?p)) (role ?r)"
        " (does ?r (move ?x1 ?y1 ?x2 ?y2)) (distinctCell ?x ?y ?x1 ?y1)"
        " (distinctCell ?x ?y ?x2 ?y2))"
    )
    rules = complement_move_test(head, body, _names())
    does = ("does", "?r", ("move", "?x1", "?y1", "?x2", "?y2"))
    assert rules is not None and rules.guard == ("f2", "?x", "?y")
    assert rules.rules == [
        (("f1", "?r"), (does,)),
        (("f2", "?x", "?y"), (("true", ("location", "?x", "?y", "?p")), ("role", "?r"))),
        (
            ("f3", "?r", "?x", "?y"),
            (does, ("f2", "?x", "?y"), ("not", ("distinctCell", "?x", "?y", "?x1", "?y1"))),
        ),
        (
            ("f3", "?r", "?x", "?y"),
            (does, ("f2", "?x", "?y"), ("not", ("distinctCell", "?x", "?y", "?x2", "?y2"))),
        ),
        (
            head,
            (
                ("true", ("location", "?x", "?y", "?p")),
                ("role", "?r"),
                ("f1", "?r"),
                ("not", ("f3", "?r", "?x", "?y")),
            ),
        ),
    ]


def test_a_test_on_the_state_is_negated_too() -> None:
    head, body = _rule(
        "(<= (next (captures ?p ?n)) (true (captures ?p ?n)) (does ?p (move ?x1 ?y1 ?x2 ?y2))"
        " (role ?q) (not (occupied ?x2 ?y2 ?q)) (distinct ?x1 ?q))"
    )
    rules = complement_move_test(head, body, _names())
    assert rules is not None
    touched = [rule_body[-1] for rule_head, rule_body in rules.rules if rule_head[0] == "f3"]
    assert touched == [("occupied", "?x2", "?y2", "?q"), ("not", ("distinct", "?x1", "?q"))]
    # unless the relations on the state are named: then the rule is left as it is
    on_the_state = frozenset({("occupied", 3, True), ("true", 1, True)})
    assert complement_move_test(head, body, _names(), on_the_state) is None


def test_rules_of_other_shapes_are_left_as_they_are() -> None:
    left_alone = [
        # not a next rule: what reads it could depend on it through negation
        "(<= (kept ?x) (true (cell ?x)) (does ?r (move ?a ?b ?c)) (distinct ?x ?a))",
        # two moves
        "(<= (next (cell ?x)) (true (cell ?x)) (does ?r (move ?a ?b ?c)) (does ?s (move ?d ?e ?f))"
        " (distinct ?x ?a))",
        # a move of two variables (tic-tac-toe's mark): few rules as written
        "(<= (next (cell ?x ?y)) (true (cell ?x ?y)) (does ?r (mark ?a ?b)) (distinct ?x ?a))",
        # a move variable in the head
        "(<= (next (cell ?a)) (true (cell ?x)) (does ?r (move ?a ?b ?c)) (distinct ?x ?b))",
        # a move variable in the rest of the body
        "(<= (next (cell ?x)) (true (cell ?a)) (does ?r (move ?a ?b ?c)) (distinct ?x ?b))",
        # the tests share nothing with the rest: grounded once per move as written
        "(<= (next moved) (does ?r (move ?a ?b ?c)) (distinct ?a ?b))",
        # a test variable the rest does not bind
        "(<= (next (cell ?x)) (true (cell ?x)) (does ?r (move ?a ?b ?c)) (near ?a ?z))",
        # the shared variable bound only under negation
        "(<= (next (cell ?x)) (not (true (cell ?x))) (does ?r (move ?a ?b ?c)) (distinct ?x ?a))",
    ]
    for kif in left_alone:
        head, body = _rule(kif)
        assert complement_move_test(head, body, _names()) is None, kif


def test_a_frame_rule_whose_unused_move_arguments_are_projected_is_left_to_that() -> None:
    # sudoku's frame rules: three of the mark's arguments are unused, and projecting
    # them away grounds as few rules
    translator = asp.Translator()
    translator.program(
        parse_gdl(
            "(<= (next (cell ?i ?c)) (true (cell ?i ?c)) (does ?r (mark ?s ?e ?f ?g))"
            " (distinct ?s ?i))"
        )
    )
    assert translator.complemented == 0


def test_rules_whose_tests_read_the_state_are_complemented_only_when_asked() -> None:
    # the frame rule asks whether the pawn is frozen, the capture counters where the
    # opponent stands: as written in the first attempt, complemented in the second
    as_written = asp.Translator()
    as_written.program(parse_gdl(SKIRMISH_LITE))
    assert as_written.complemented == 0
    complemented = asp.Translator(state_tests=True)
    complemented.program(parse_gdl(SKIRMISH_LITE))
    assert complemented.complemented == complemented.state_tests_complemented == 3
    assert asp.Translator(factoring=True).state_tests  # the factored attempt as well


def test_a_game_too_large_as_written_compiles_with_its_tests_complemented() -> None:
    # 15,000 ground rules as written, 4,000 complemented; a 10 s limit (a start clock
    # of a minute) gives the later attempts the budget the complemented one needs
    rules = parse_gdl(SKIRMISH_LITE)
    with pytest.raises(GroundingTooLarge):
        CompiledEngine.from_rules(rules, max_ground_rules=8_000, factoring=False)
    engine = CompiledEngine.from_rules(rules, max_ground_rules=8_000, time_limit=10)
    assert engine.network.stats["ground_rules"] < 8_000
    interpreter = Interpreter(rules)
    states = reachable_states(engine, 150)
    assert len(states) >= 150
    assert state_disagreements(engine, interpreter, states) == []
    assert fast_path_differences(engine) == []


def test_when_every_attempt_fails_the_reason_tells_each() -> None:
    with pytest.raises(GroundingTooLarge) as failure:
        CompiledEngine.from_rules(parse_gdl(SKIRMISH_LITE), max_ground_rules=1_000, time_limit=10)
    assert failure.value.reason == (
        "more than 1000 ground rules, as written, with its move tests on the state"
        " complemented and with its rules factored"
    )


def test_at_the_default_limit_the_tests_are_not_complemented_in_a_later_attempt() -> None:
    # its budget there (32,000 ground rules) fits none of the games it compiles, and a
    # failed compile must stay short
    with pytest.raises(GroundingTooLarge) as failure:
        CompiledEngine.from_rules(parse_gdl(SKIRMISH_LITE), max_ground_rules=1_000)
    assert failure.value.reason == (
        "more than 1000 ground rules, as written and with its rules factored"
    )


def test_the_game_as_written_plays_like_the_interpreter_too() -> None:
    rules = parse_gdl(SKIRMISH_LITE)
    engine = CompiledEngine.from_rules(rules, time_limit=60)
    assert engine.network.stats["ground_rules"] > 8_000  # the first attempt compiled
    states = reachable_states(engine, 150)
    assert state_disagreements(engine, Interpreter(rules), states) == []
