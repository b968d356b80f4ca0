"""Moves that are always legal, and goal values that always hold, are added to a role's
list in one call: the generated code extends the list with a constant tuple instead of
appending index by index, in the same order."""

from __future__ import annotations

from server.gdl.compiled import CompiledEngine
from server.gdl.compiled.codegen import merged_appends
from server.gdl.interpreter import Interpreter
from server.gdl.parser import parse_gdl


def test_a_run_of_appends_to_one_list_becomes_one_extend() -> None:
    lines = ["L0 = []", "L0.append(0)", "L0.append(1)", "L0.append(2)", "L0.sort()"]
    assert merged_appends(lines) == ["L0 = []", "L0.extend((0, 1, 2,))", "L0.sort()"]


def test_runs_end_at_another_list_another_indent_or_another_line() -> None:
    lines = [
        "L0.append(0)",
        "L1.append(5)",
        "L1.append(6)",
        "if s & 4:",
        "    L1.append(7)",
        "    L1.append(8)",
        "L1.append(9)",
        "G0.append(1)",
    ]
    assert merged_appends(lines) == [
        "L0.append(0)",
        "L1.extend((5, 6,))",
        "if s & 4:",
        "    L1.extend((7, 8,))",
        "L1.append(9)",
        "G0.append(1)",
    ]


def test_other_lines_are_left_as_they_are() -> None:
    lines = ["L0 = []", "x.append(1)", "L0.append(g1)", "L0.append(3)  # note", "return (L0, )"]
    assert merged_appends(lines) == lines


BLOTTO = """
(role red) (role blue)
(soldiers 0) (soldiers 1) (soldiers 2) (soldiers 3)
(init (round 0))
(<= (legal ?r (send ?n)) (role ?r) (soldiers ?n))
(<= (legal red (pass)) (true (round 1)))
(<= (next (round 1)) (true (round 0)))
(<= (next (sent ?r ?n)) (does ?r (send ?n)))
(<= terminal (true (round 1)))
(goal red 50) (goal blue 50)
(<= (goal red 100) (true (sent red 3)))
"""
"""Every role may always send any of four numbers; red may pass in the last round."""


def test_always_legal_moves_are_one_extend_and_the_engine_answers_as_the_interpreter() -> None:
    rules = parse_gdl(BLOTTO)
    engine = CompiledEngine.from_rules(rules)
    legal = engine.source.split("def legal(s):")[1].split("\ndef ")[0]
    # red's pass (move 0) is tested on the state; its four sends, and blue's, are not
    assert "L0.extend((1, 2, 3, 4,))" in legal
    assert "L1.extend((0, 1, 2, 3,))" in legal
    assert legal.count(".append(") == 1
    reference = Interpreter(rules)
    state = engine.initial_state()
    for role in ("red", "blue"):
        assert engine.legal_moves(state, role) == reference.legal_moves(state, role)
    following = engine.next_state(state, [("send", "3"), ("send", "0")])
    assert following == reference.next_state(state, [("send", "3"), ("send", "0")])
    for role in ("red", "blue"):
        assert engine.legal_moves(following, role) == reference.legal_moves(following, role)
        assert engine.goal_values(following, role) == reference.goal_values(following, role)
