"""The small copies the interpreter makes of relations for constants are written in where
they are read (unfolding): chineseCheckers6's ``terminal`` becomes six rules of three cell
tests, not a copy of ``goal`` reading a copy of ``count``. The answers stay those of the
rules as written (checked on every reachable state in ``test_interpreter_specialise``)."""

from __future__ import annotations

from test_interpreter_specialise import CORNERS, FREE_BLUE, rules_of

from server.gdl.interpreter.inline import MAX_INLINED_RULES, inline_small_copies
from server.gdl.interpreter.program import FlatRule, expand_disjunctions
from server.gdl.interpreter.specialise import copy_name, specialise_to_constants
from server.gdl.parser import parse_gdl

SOURCE = expand_disjunctions(parse_gdl("(role p)"))[0].source


def rule(head: object, *body: object) -> FlatRule:
    return FlatRule(head, tuple(body), SOURCE)  # type: ignore[arg-type]


def test_the_corner_race_tests_cells_where_it_read_copies() -> None:
    rewritten = specialise_to_constants(rules_of(CORNERS))
    ends = sorted(r.body for r in rewritten if r.head == "terminal")
    assert ends == [
        (("true", ("cell", "a", "blue")), ("true", ("cell", "b", "blue"))),
        (("true", ("cell", "e", "red")), ("true", ("cell", "f", "red"))),
        (("true", ("step", "8")),),
    ]
    names = {r.head[0] for r in rewritten if isinstance(r.head, tuple)}
    assert copy_name(("goal", 2), ((1, "100"),)) not in names  # written in, then left out
    assert FREE_BLUE in names  # read under not: stays a relation


def test_the_copy_s_variables_are_renamed_apart_from_the_reader_s() -> None:
    rules = [
        rule(("h", "?x"), ("c", "?x", "a"), ("q", "?y")),
        rule(("c", "?y", "?z"), ("p", "?y", "?w"), ("r", "?w", "?z")),
    ]
    assert inline_small_copies(rules, {"c"}) == [
        rule(("h", "?x"), ("p", "?x", "?w'1"), ("r", "?w'1", "a"), ("q", "?y")),
    ]


def test_a_reader_s_variables_take_the_constants_of_each_rule_s_head() -> None:
    rules = [
        rule("done", ("c", "?who", "won")),
        rule(("c", "red", "won"), ("true", ("cell", "a", "red"))),
        rule(("c", "blue", "?r"), ("true", ("cell", "b", "?r"))),
        rule(("c", "green", "lost"), ("true", ("cell", "c", "green"))),  # lost is not won
    ]
    assert inline_small_copies(rules, {"c"}) == [
        rule("done", ("true", ("cell", "a", "red"))),
        rule("done", ("true", ("cell", "b", "won"))),
    ]


def test_copies_read_under_not_or_by_several_literals_stay_relations() -> None:
    two = [rule(("c", "?x"), ("true", ("on", "?x"))), rule(("c", "?x"), ("true", ("off", "?x")))]
    negated = [rule("done", ("role", "?x"), ("not", ("c", "?x"))), *two]
    assert inline_small_copies(negated, {"c"}) == negated
    read_twice = [rule("done", ("c", "a")), rule("over", ("c", "b")), *two]
    assert inline_small_copies(read_twice, {"c"}) == read_twice
    many = [rule(("c", "?x"), ("true", ("at", "?x", str(n)))) for n in range(MAX_INLINED_RULES + 1)]
    read_once = [rule("done", ("c", "a")), *many]
    assert inline_small_copies(read_once, {"c"}) == read_once


def test_a_copy_of_one_rule_is_written_in_everywhere_and_only_copies_are() -> None:
    one = rule(("c", "?x"), ("true", ("on", "?x")))
    helper = rule(("h", "?x"), ("true", ("off", "?x")))
    rules = [rule("done", ("c", "a"), ("h", "a")), rule("over", ("c", "b")), one, helper]
    assert inline_small_copies(rules, {"c"}) == [
        rule("done", ("true", ("on", "a")), ("h", "a")),
        rule("over", ("true", ("on", "b"))),
        helper,
    ]
