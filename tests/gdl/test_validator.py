"""The GDL validator: each restriction of the GDL specification, shown on a small game.

Every test starts from a tiny valid game and adds the rules under test, so that the
assertion is about exactly one check.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from shared_material import shared_files, stem

from server.gdl.errors import GdlValidationError
from server.gdl.parser import parse_gdl
from server.gdl.validator import ValidationReport, check, validate

BASE = """
(role robot)
(init on)
(legal robot press)
(<= (next off) (true on))
(<= terminal (true off))
(goal robot 100)
"""
"""A complete, valid one-player game: one move, then the game is over."""


def report_for(extra: str, base: str = BASE) -> ValidationReport:
    return validate(parse_gdl(base + extra))


def errors_for(extra: str, base: str = BASE) -> list[str]:
    return report_for(extra, base).errors


def test_the_base_game_is_valid_and_clean() -> None:
    report = report_for("")
    assert report.errors == []
    assert report.warnings == []
    assert report.ok


# --- arities -------------------------------------------------------------------------


def test_a_relation_used_with_two_arities_is_refused() -> None:
    errors = errors_for(
        """
        (cell 1 1)
        (cell 1 2 3)
        (<= (legal robot wait) (cell ?x ?y))
        """
    )
    assert len(errors) == 1
    assert "relation cell is used here with 3 argument(s), but with 2" in errors[0]
    assert errors[0].startswith("line 10, column 9:")
    assert "(cell 1 2 3)" in errors[0]


def test_a_function_used_with_two_arities_is_refused() -> None:
    errors = errors_for("(legal robot (move 1))\n(legal robot (move 1 2))")
    assert len(errors) == 1
    assert "function move is used here with 2 argument(s), but with 1" in errors[0]


def test_a_proposition_and_its_parenthesised_form_are_two_relations_not_a_conflict() -> None:
    report = report_for(
        "(<= open (true on))\n(<= (open) (true on))\n(<= (legal robot a) open (open))"
    )
    assert report.errors == []
    assert any("unnecessary parentheses" in warning for warning in report.warnings)


def test_a_proposition_and_its_parenthesised_form_do_not_depend_on_each_other() -> None:
    # GGP-Base's test_case_3a relies on this: (calm) is true, calm is not.
    extra = "(<= (calm) (true on))\n(<= calm (not (calm)))\n(<= (legal robot wait) calm)"
    assert errors_for(extra) == []


def test_a_name_used_as_relation_and_as_function_is_only_a_warning() -> None:
    report = report_for("(cell a)\n(<= (legal robot (cell ?x)) (cell ?x))")
    assert report.errors == []
    assert any("both as a relation" in warning for warning in report.warnings)


# --- safety --------------------------------------------------------------------------


def test_a_head_variable_must_be_bound_by_a_positive_literal() -> None:
    errors = errors_for("(<= (legal ?player noop) (true on))")
    assert len(errors) == 1
    assert "unsafe rule" in errors[0]
    assert "?player in the head" in errors[0]


def test_a_fact_with_a_variable_is_unsafe() -> None:
    errors = errors_for("(ready ?x)\n(<= (legal robot wait) (ready now))")
    assert len(errors) == 1
    assert "?x in the head" in errors[0]


def test_a_variable_of_a_negation_must_be_bound_elsewhere() -> None:
    errors = errors_for("(<= (legal robot wait) (not (true (cell ?x))))")
    assert len(errors) == 1
    assert "?x in (not (true (cell ?x)))" in errors[0]


def test_a_variable_of_a_distinct_must_be_bound_elsewhere() -> None:
    errors = errors_for("(<= (legal robot wait) (true on) (distinct ?x on))")
    assert len(errors) == 1
    assert "?x in (distinct ?x on)" in errors[0]


def test_a_variable_bound_in_only_one_branch_of_an_or_is_unbound() -> None:
    errors = errors_for("(mode a)\n(<= (legal robot (set ?x)) (or (mode ?x) (true on)))")
    assert len(errors) == 1
    assert "?x in the head" in errors[0]
    assert "only some disjuncts" in errors[0]


def test_a_variable_bound_in_every_branch_of_an_or_is_bound() -> None:
    assert errors_for("(mode a)\n(<= (legal robot (set ?x)) (or (mode ?x) (true (mode ?x))))") == []


def test_a_negation_inside_an_or_needs_its_variable_bound_outside_that_branch() -> None:
    errors = errors_for("(mode a)\n(<= (legal robot wait) (or (mode ?x) (not (true (mode ?x)))))")
    assert len(errors) == 1
    assert "?x in (not (true (mode ?x)))" in errors[0]


def test_a_negated_distinct_with_bound_variables_is_accepted() -> None:
    assert errors_for("(mode a)\n(<= (legal robot (set ?x)) (mode ?x) (not (distinct ?x a)))") == []


def test_many_disjunctions_are_checked_without_expanding_every_branch() -> None:
    disjunctions = " ".join(f"(or (bit {i} ?x) (true (bit {i} ?x)))" for i in range(40))
    facts = "\n".join(f"(bit {i} one)" for i in range(40))
    assert errors_for(f"{facts}\n(<= (legal robot (pick ?x)) {disjunctions})") == []
    unsafe = disjunctions + " (or (bit 0 ?y) (true on))"
    errors = errors_for(f"{facts}\n(<= (legal robot (pick ?y)) {unsafe})")
    assert len(errors) == 1
    assert "?y in the head" in errors[0]


# --- stratified negation -------------------------------------------------------------


def test_recursion_through_negation_is_refused() -> None:
    errors = errors_for("(<= calm (not angry))\n(<= angry calm)\n(<= (legal robot wait) calm)")
    assert len(errors) == 1
    assert "negation is not stratified" in errors[0]
    assert "calm -> angry -> calm" in errors[0]


def test_a_relation_negating_itself_is_refused() -> None:
    errors = errors_for(
        "(cell 1)\n(<= (free ?x) (cell ?x) (not (free ?x)))\n(<= (legal robot (go ?x)) (free ?x))"
    )
    assert len(errors) == 1
    assert "negation is not stratified" in errors[0]


def test_a_goal_defined_by_negating_another_goal_value_is_accepted() -> None:
    # As in the repository's queens and hexPie games: (goal robot 0) never depends on
    # (goal robot 100), so the negation is stratified atom by atom.
    game = BASE.replace("(goal robot 100)", "")
    extra = "(<= (goal robot 0) (true off))\n(<= (goal robot 100) (not (goal robot 0)))"
    assert errors_for(extra, game) == []


# --- the recursion restriction -------------------------------------------------------


def test_recursion_that_builds_ever_larger_terms_is_refused() -> None:
    errors = errors_for(
        "(count zero)\n(<= (count (succ ?n)) (count ?n))\n(<= (legal robot (say ?n)) (count ?n))"
    )
    assert len(errors) == 1
    assert "recursion restriction violated" in errors[0]
    assert "the argument ?n" in errors[0]


def test_recursion_bounded_by_a_non_recursive_relation_is_accepted() -> None:
    # The shape of GGP-Base's test_case_5a.
    extra = """
    (r 0 0)
    (q 0)
    (<= (r ?v1 (f ?v1)) (r ?v2 ?v1) (q ?v2))
    (<= (legal robot wait) (r (f 0) (f (f 0))))
    """
    assert errors_for(extra) == []


def test_recursion_restriction_counts_an_or_only_when_every_branch_supports() -> None:
    facts = "(q a)\n(s a)\n(path a a)\n(<= (legal robot wait) (path a a))\n"
    supported = "(<= (path ?x ?z) (path ?x ?y) (or (q ?y) (s ?y)) (q ?z))"
    assert errors_for(facts + supported) == []
    supported_outside = "(<= (path ?x ?z) (path ?x ?y) (or (q ?y) (true on)) (q ?z) (s ?y))"
    assert errors_for(facts + supported_outside) == []
    broken = "(<= (path ?x ?z) (path ?x ?y) (or (q ?y) (true (here ?y))) (q ?z))"
    errors = errors_for(facts + broken)
    assert len(errors) == 1
    assert "the argument ?y" in errors[0]


# --- keywords ------------------------------------------------------------------------


def test_roles_must_be_facts() -> None:
    errors = errors_for("(<= (role helper) (true on))")
    assert any("role may only be declared by facts" in error for error in errors)


def test_a_role_must_be_a_constant() -> None:
    errors = errors_for("(role (team red))")
    assert any("a role must be a constant name" in error for error in errors)


def test_a_role_is_declared_once() -> None:
    errors = errors_for("(role robot)")
    assert len(errors) == 1
    assert "role robot is already declared at line 2, column 1" in errors[0]


def test_a_game_needs_a_role() -> None:
    errors = errors_for("", BASE.replace("(role robot)", ""))
    assert "the game declares no role: add facts such as (role white)" in errors


@pytest.mark.parametrize(
    ("removed", "keyword"),
    [("(<= terminal (true off))", "terminal"), ("(legal robot press)", "legal"),
     ("(goal robot 100)", "goal")],
)  # fmt: skip
def test_a_game_needs_terminal_legal_and_goal_rules(removed: str, keyword: str) -> None:
    errors = errors_for("", BASE.replace(removed, ""))
    assert errors == [f"the game has no {keyword} rule"]


def test_a_game_without_any_of_them_hears_about_all_three() -> None:
    bare = "(role robot)\n(init on)\n(<= (next off) (true on))\n"
    errors = errors_for("", bare)
    assert sorted(errors) == [
        f"the game has no {keyword} rule" for keyword in ("goal", "legal", "terminal")
    ]


def test_true_and_does_are_never_heads() -> None:
    errors = errors_for("(<= (true off) (true on))\n(does robot press)")
    assert len([error for error in errors if "never as a head" in error]) == 2


def test_next_and_init_are_never_in_bodies() -> None:
    errors = errors_for("(<= (legal robot wait) (next off))\n(<= (legal robot rest) (init on))")
    assert len(errors) == 2
    assert all("may only appear as a head" in error for error in errors)


def test_legal_goal_and_terminal_may_appear_in_bodies() -> None:
    assert errors_for("(<= (legal robot wait) (legal robot press) terminal (goal robot 100))") == []


def test_init_must_not_depend_on_the_current_state() -> None:
    errors = errors_for("(<= (init warm) (true on))")
    assert len(errors) == 1
    assert "init must not depend on true, but it does: init -> true" in errors[0]


def test_legal_must_not_depend_on_does_even_indirectly() -> None:
    errors = errors_for("(<= pressed (does robot press))\n(<= (legal robot wait) pressed)")
    assert len(errors) == 1
    assert "legal must not depend on does, but it does: legal -> pressed -> does" in errors[0]


def test_terminal_and_goal_must_not_depend_on_does() -> None:
    errors = errors_for("(<= terminal (does robot press))\n(<= (goal robot 0) (does robot press))")
    assert sorted(error.split(": ")[1].split(",")[0] for error in errors) == [
        "goal must not depend on does",
        "terminal must not depend on does",
    ]


def test_next_may_depend_on_does() -> None:
    assert errors_for("(<= (next pressed) (does robot press))") == []


def test_a_goal_value_must_be_an_integer_from_0_to_100() -> None:
    errors = errors_for("(<= (goal robot 150) (true off))\n(<= (goal robot high) (true off))")
    assert len(errors) == 2
    assert "goal value 150 is not an integer from 0 to 100" in errors[0]
    assert "goal value high" in errors[1]


def test_a_computed_goal_value_is_accepted() -> None:
    assert errors_for("(score 50)\n(<= (goal robot ?s) (score ?s) (true off))") == []


# --- warnings ------------------------------------------------------------------------


def test_inconsistent_capitalisation_is_a_warning_not_an_error() -> None:
    # As in alexChess, where nextRank is defined and nextrank is used.
    report = report_for("(nextRank 1 2)\n(<= (legal robot (up ?y)) (nextrank 1 ?y))")
    assert report.errors == []
    assert any(
        "inconsistent capitalisation: nextRank" in warning and "nextrank" in warning
        for warning in report.warnings
    )


def test_unusual_characters_are_a_warning() -> None:
    report = report_for("(++ 1 2)\n(<= (legal robot (up ?y)) (++ 1 ?y))")
    assert report.errors == []
    assert any("the symbol ++ has characters" in warning for warning in report.warnings)


def test_a_relation_defined_but_never_used_is_a_warning() -> None:
    report = report_for("(spare 1)")
    assert report.errors == []
    assert any("the relation spare is defined but never used" in w for w in report.warnings)


def test_a_relation_used_but_never_defined_is_a_warning() -> None:
    report = report_for("(<= (legal robot wait) squee)")
    assert report.errors == []
    assert any("the relation squee is used but never defined" in w for w in report.warnings)


# --- messages and the raising form ---------------------------------------------------


def test_a_long_rule_is_shortened_in_the_message() -> None:
    body = " ".join(f"(true (cell {i} ?x))" for i in range(30))
    errors = errors_for(f"(<= (legal robot (go ?y)) {body})")
    assert len(errors) == 1
    assert errors[0].endswith("...")
    assert "(<= (legal robot (go ?y)) (true (cell 0 ?x))" in errors[0]


def test_check_raises_with_every_problem() -> None:
    rules = parse_gdl(BASE + "(<= (legal ?p wait) (true on))\n(<= (init warm) (true on))")
    with pytest.raises(GdlValidationError) as raised:
        check(rules)
    assert len(raised.value.problems) == 2
    assert "unsafe rule" in str(raised.value)


def test_check_returns_the_report_of_a_valid_game() -> None:
    report = check(parse_gdl(BASE + "(spare 1)"))
    assert report.errors == []
    assert len(report.warnings) == 1


# --- the shared corpus ---------------------------------------------------------------

REFUSED = {
    "test_case_3b": "unsafe rule",
    "test_case_3e": "unsafe rule",
    "test_case_3f": "unsafe rule",
    "test_invalid_function_arities_differ": "the function a is used here with 2 argument(s)",
    "test_invalid_sentence_arities_differ": "the relation foo is used here with 2 argument(s)",
}
"""The corpus games that break the specification, with what the refusal says."""


@pytest.mark.parametrize("path", shared_files("conformance/games", "*.kif"), ids=stem)
def test_every_traced_game_is_valid_except_the_invalid_test_cases(path: Path) -> None:
    report = validate(parse_gdl(path.read_text(encoding="utf-8")))
    if path.stem in REFUSED:
        assert report.errors
        assert all(REFUSED[path.stem] in error for error in report.errors)
    else:
        assert report.errors == []


@pytest.mark.parametrize("path", shared_files("conformance/games-unverified", "*.kif"), ids=stem)
def test_every_unverified_game_is_validated_or_refused_cleanly(path: Path) -> None:
    rules = parse_gdl(path.read_text(encoding="utf-8"))
    try:
        check(rules)
    except GdlValidationError as error:
        assert error.problems


# --- places of problems --------------------------------------------------------------


def _placed(extra: str) -> list[tuple[int | None, int | None, str]]:
    """(line, column, message) of each error; ``extra`` starts on line 8 of the text."""
    return [
        (getattr(error, "line", None), getattr(error, "column", None), error)
        for error in errors_for(extra)
    ]


@pytest.mark.parametrize(
    ("extra", "line", "column", "says"),
    [
        # the negation holding the unbound variable, not the rule's first line
        ("(<= (legal robot wait)\n  (true on)\n  (not (true ?x)))", 10, 3, "unsafe rule"),
        # an unbound head variable: the rule (which starts with its head)
        ("(<= (legal robot (go ?x))\n  (true on))", 8, 1, "unsafe rule"),
        # the body atom used with another arity
        ("(cell 1 1)\n(<= (legal robot wait)\n  (true on)\n  (cell 1))", 11, 3, "relation cell"),
        # a keyword that belongs in heads only
        ("(<= (legal robot wait)\n  (true on)\n  (init on))", 10, 3, "init may only appear"),
        # the negative literal that closes the cycle
        ("(<= p (true on)\n    (not q))\n(<= q p)", 9, 5, "negation is not stratified"),
        # the recursive literal that breaks the restriction
        (
            "(count zero)\n(<= (count (succ ?n))\n  (count ?n))\n(<= (legal robot (say ?n)) (count ?n))",
            10,
            3,
            "recursion restriction",
        ),
        # a goal value out of range: the rule
        ("(<= (goal robot 200)\n  (true on))", 8, 1, "goal value 200"),
    ],
)
def test_an_error_names_the_line_and_column_of_the_offending_literal(
    extra: str, line: int, column: int, says: str
) -> None:
    found = [(at_line, at_column) for at_line, at_column, error in _placed(extra) if says in error]
    assert found == [(line, column)]
    [error] = [error for error in errors_for(extra) if says in error]
    assert error.startswith(f"line {line}, column {column}: ")


def test_a_problem_of_the_whole_game_has_no_place_and_every_problem_pickles() -> None:
    import pickle

    report = validate(parse_gdl("(role robot)\n(init on)"))
    missing = [error for error in report.errors if "has no" in error]
    assert len(missing) == 3
    assert all(error.line is None and error.column is None for error in missing)  # type: ignore[attr-defined]
    placed = errors_for("(<= (legal robot (go ?x))\n  (true on))")[0]
    copy = pickle.loads(pickle.dumps(placed))
    assert (copy, copy.line, copy.column) == (placed, 8, 1)  # type: ignore[attr-defined]


def test_literal_places_do_not_change_what_a_rule_equals() -> None:
    one = parse_gdl("(<= (legal robot wait) (true on))")[0]
    other = parse_gdl("(<= (legal robot wait)\n (true on))")[0]
    assert one == other and hash(one) == hash(other)
    assert one.places == ((1, 5), (1, 24)) and other.places == ((1, 5), (2, 2))
