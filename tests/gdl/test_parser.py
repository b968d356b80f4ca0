"""Reading GDL in KIF syntax: what the parser keeps, what it folds, what it refuses.

Each test shows a short piece of GDL text and the rules or terms it becomes. Rules come
back as :class:`Rule` objects whose head and body are plain terms: a constant is a
``str``, a variable a ``str`` starting with ``?``, a compound term a ``tuple``.
Malformed text raises :class:`GdlSyntaxError` naming the line and column (both 1-based)
of the offending S-expression.
"""

from __future__ import annotations

import pytest

from server.gdl import Compound, Constant, GdlError, GdlSyntaxError, parse_gdl, to_ggp, to_kif
from server.gdl.parser import MAX_NESTING, parse_term, read_nodes
from server.gdl.terms import wrap


def only_rule(text: str):
    rules = parse_gdl(text)
    assert len(rules) == 1
    return rules[0]


# --- facts, rules and positions ------------------------------------------------------


def test_facts_and_rules_become_rules_with_heads_and_bodies() -> None:
    rules = parse_gdl(
        """
        (role robot)
        (init (cell 1 1 b))
        (<= (legal robot (mark ?x ?y))
            (true (cell ?x ?y b)))
        """
    )
    assert [rule.head for rule in rules] == [
        ("role", "robot"),
        ("init", ("cell", "1", "1", "b")),
        ("legal", "robot", ("mark", "?x", "?y")),
    ]
    assert [rule.body for rule in rules] == [(), (), (("true", ("cell", "?x", "?y", "b")),)]


def test_each_rule_remembers_where_it_starts() -> None:
    rules = parse_gdl("(role robot)\n\n   (<= terminal\n  (true done))")
    assert [(rule.line, rule.column) for rule in rules] == [(1, 1), (3, 4)]
    assert rules[1].where == "line 3, column 4"


def test_a_proposition_head_and_a_rule_without_body() -> None:
    assert only_rule("(<= terminal (true done))").head == "terminal"
    # (<= head) with no body is a fact, as GGP-Base reads it.
    rule = only_rule("(<= (goal you 100))")
    assert rule.head == ("goal", "you", "100")
    assert rule.body == ()


def test_rules_print_back_as_kif() -> None:
    text = "(<= (legal robot (mark ?x)) (true (cell ?x b)) (not (true done)))"
    assert str(only_rule(text)) == text
    assert str(only_rule("(role robot)")) == "(role robot)"


# --- comments and whitespace ---------------------------------------------------------


def test_comments_run_from_a_semicolon_to_the_end_of_the_line() -> None:
    rules = parse_gdl(
        """
        ;; A game with (unbalanced ( parentheses in its comments
        (role robot) ; (role ghost)
        (init on);no space before the comment
        """
    )
    assert [rule.head for rule in rules] == [("role", "robot"), ("init", "on")]


def test_a_semicolon_ends_a_symbol() -> None:
    assert only_rule("(init on;off\n)").head == ("init", "on")


def test_tabs_and_windows_line_ends_are_whitespace() -> None:
    rules = parse_gdl("(role\trobot)\r\n(init\r\n on)\r\n")
    assert [rule.head for rule in rules] == [("role", "robot"), ("init", "on")]


def test_empty_text_and_text_with_only_comments_have_no_rules() -> None:
    assert parse_gdl("") == []
    assert parse_gdl("  ; nothing here\n\n;; nor here\n") == []


# --- symbols: keywords folded, everything else kept ----------------------------------


def test_keywords_in_any_case_are_folded_to_lower_case() -> None:
    rules = parse_gdl(
        """
        (ROLE xPlayer)
        (Init (Cell 1 B))
        (<= (LEGAL xPlayer (Mark ?X))
            (TRUE (Cell ?X B))
            (NOT (Distinct ?X 2))
            (Or (DOES xPlayer Noop) (True Ready)))
        (<= Terminal (tRuE Done))
        (<= (NEXT (Cell 1 X)) (DoEs xPlayer (Mark 1)))
        (<= (GOAL xPlayer 100) (True Done))
        (BASE (Cell 1 B))
        (INPUT xPlayer Noop)
        """
    )
    assert [rule.head for rule in rules] == [
        ("role", "xPlayer"),
        ("init", ("Cell", "1", "B")),
        ("legal", "xPlayer", ("Mark", "?X")),
        "terminal",
        ("next", ("Cell", "1", "X")),
        ("goal", "xPlayer", "100"),
        ("base", ("Cell", "1", "B")),
        ("input", "xPlayer", "Noop"),
    ]
    assert rules[2].body == (
        ("true", ("Cell", "?X", "B")),
        ("not", ("distinct", "?X", "2")),
        ("or", ("does", "xPlayer", "Noop"), ("true", "Ready")),
    )
    assert rules[3].body == (("true", "Done"),)
    assert rules[4].body == (("does", "xPlayer", ("Mark", "1")),)


def test_other_symbols_keep_their_case_so_differently_spelled_names_differ() -> None:
    rules = parse_gdl("(nextRank 1 2) (nextrank 1 2) (NEXTRANK 1 2)")
    assert [rule.head[0] for rule in rules] == ["nextRank", "nextrank", "NEXTRANK"]


def test_variables_keep_their_case() -> None:
    rule = only_rule("(<= (p ?X ?x) (q ?X) (q ?x))")
    assert rule.head == ("p", "?X", "?x")


def test_numbers_are_plain_constants_spelled_as_written() -> None:
    rule = only_rule("(step 007 10 -1 2.5)")
    assert rule.head == ("step", "007", "10", "-1", "2.5")
    assert all(isinstance(argument, str) for argument in rule.head[1:])


def test_symbols_may_contain_punctuation_other_than_parentheses_and_semicolons() -> None:
    rule = only_rule("(at white_king a-1 x.y+z <> !)")
    assert rule.head == ("at", "white_king", "a-1", "x.y+z", "<>", "!")


# --- terms ----------------------------------------------------------------------------


def test_function_terms_nest_to_any_depth() -> None:
    rule = only_rule("(init (board (row (cell 1 (piece white king)) (cell 2 empty))))")
    assert rule.head == (
        "init",
        ("board", ("row", ("cell", "1", ("piece", "white", "king")), ("cell", "2", "empty"))),
    )


def test_a_constant_and_a_zero_argument_compound_are_different_terms() -> None:
    assert parse_term("p") == "p"
    assert parse_term("(p)") == ("p",)
    assert parse_term("p") != parse_term("(p)")
    rules = parse_gdl("(<= p (true a)) (<= (p) (true b))")
    assert rules[0].head != rules[1].head


def test_parse_term_reads_one_move_or_fluent() -> None:
    assert parse_term("noop") == "noop"
    assert parse_term(" ( mark 1 2 ) ") == ("mark", "1", "2")
    assert parse_term("(move (pos 1 2) (pos 2 3))") == (
        "move",
        ("pos", "1", "2"),
        ("pos", "2", "3"),
    )
    assert parse_term("?x") == "?x"


@pytest.mark.parametrize("text", ["", "a b", "(mark 1) (mark 2)"])
def test_parse_term_refuses_anything_but_exactly_one_term(text: str) -> None:
    with pytest.raises(GdlSyntaxError, match="expected exactly one term"):
        parse_term(text)


def test_public_terms_compare_equal_to_plain_terms_and_print_as_kif() -> None:
    move = wrap(parse_term("(mark 1 (pos 2 3))"))
    assert isinstance(move, Compound)
    assert move == ("mark", "1", ("pos", "2", "3"))
    assert hash(move) == hash(("mark", "1", ("pos", "2", "3")))
    assert move.name == "mark"
    assert move.args == (Constant("1"), Compound(("pos", "2", "3")))
    assert str(move) == "(mark 1 (pos 2 3))"
    assert str(move.args[1]) == "(pos 2 3)"
    noop = wrap(parse_term("noop"))
    assert isinstance(noop, Constant)
    assert noop == "noop"
    assert noop.name == "noop"
    assert noop.args == ()
    assert str(Compound(("f",))) == "(f)"


@pytest.mark.parametrize(
    "text",
    [
        "noop",
        "xPlayer",
        "(mark 1 2)",
        "(f)",
        "(move (pos 1 2) (pos 2 3))",
        "(cell 007 (f) (g (h x)))",
    ],
)
def test_str_of_a_term_parses_back_to_the_same_term(text: str) -> None:
    term = wrap(parse_term(text))
    assert str(term) == text
    assert parse_term(str(term)) == term
    assert parse_term(to_kif(term)) == term
    assert parse_term(to_ggp(term)) == term


def test_to_ggp_prints_terms_as_ggp_base_does() -> None:
    assert to_ggp(parse_term("(mark 1 2)")) == "( mark 1 2 )"
    assert to_ggp(parse_term("(move (pos 1 2) (f))")) == "( move ( pos 1 2 ) ( f ) )"
    assert to_ggp(parse_term("noop")) == "noop"
    assert to_kif(parse_term("( move ( pos 1 2 ) ( f ) )")) == "(move (pos 1 2) (f))"


# --- connectives -------------------------------------------------------------------------


def test_not_distinct_and_or_are_body_literals() -> None:
    rule = only_rule(
        "(<= (p ?x ?y) (q ?x) (q ?y) (not (r ?x)) (distinct ?x ?y) (or (s ?x) (t ?y) u))"
    )
    assert rule.body == (
        ("q", "?x"),
        ("q", "?y"),
        ("not", ("r", "?x")),
        ("distinct", "?x", "?y"),
        ("or", ("s", "?x"), ("t", "?y"), "u"),
    )


def test_or_may_hold_any_literal_and_nest() -> None:
    rule = only_rule("(<= p (q ?x) (or (not (r ?x)) (distinct ?x a) (or s t)))")
    assert rule.body[1] == ("or", ("not", ("r", "?x")), ("distinct", "?x", "a"), ("or", "s", "t"))


def test_not_may_negate_a_distinct() -> None:
    rule = only_rule("(<= (same ?x ?y) (q ?x) (q ?y) (not (distinct ?x ?y)))")
    assert rule.body[2] == ("not", ("distinct", "?x", "?y"))


def test_distinct_compares_whole_terms() -> None:
    rule = only_rule("(<= p (q ?x) (distinct (f ?x) (f (g a))))")
    assert rule.body[1] == ("distinct", ("f", "?x"), ("f", ("g", "a")))


# --- malformed text --------------------------------------------------------------------


def syntax_error(text: str) -> GdlSyntaxError:
    with pytest.raises(GdlSyntaxError) as caught:
        parse_gdl(text)
    return caught.value


def test_a_parenthesis_never_closed_is_reported_where_it_opens() -> None:
    error = syntax_error("(role robot)\n(init on)\n  (<= terminal\n     (true on)\n")
    assert (error.line, error.column) == (3, 3)
    assert "unbalanced '('" in error.reason
    assert str(error).startswith("line 3, column 3: ")


def test_a_closing_parenthesis_too_many_is_reported_where_it_is() -> None:
    error = syntax_error("(role robot)\n(<= terminal\n    (true on)))\n(init on)")
    assert (error.line, error.column) == (3, 15)
    assert "unbalanced ')'" in error.reason


def test_parentheses_inside_comments_do_not_count() -> None:
    error = syntax_error("; ((((\n(role robot)) ; ))\n")
    assert (error.line, error.column) == (2, 13)


def test_a_rule_with_no_head_is_refused() -> None:
    error = syntax_error("(role robot)\n  (<=)")
    assert (error.line, error.column) == (2, 3)
    assert "needs a head" in error.reason


def test_a_lone_arrow_is_refused() -> None:
    error = syntax_error("(role robot) <=")
    assert (error.line, error.column) == (1, 14)


@pytest.mark.parametrize(
    ("text", "line", "column", "message"),
    [
        ("(role robot)\n?x", 2, 1, "a bare variable (?x) cannot stand as a sentence"),
        ("(<= ?head (true on))", 1, 5, "a bare variable (?head) cannot stand as the head"),
        ("(<= (p)\n    (true on) ?x)", 2, 15, "a bare variable (?x) cannot stand as a literal"),
        ("(<= (p) (not ?x))", 1, 14, "a bare variable (?x) cannot stand as a literal"),
        ("(<= (p) (or (q) ?x))", 1, 17, "a bare variable (?x) cannot stand as a literal"),
    ],
)
def test_a_bare_variable_cannot_be_a_sentence(
    text: str, line: int, column: int, message: str
) -> None:
    error = syntax_error(text)
    assert (error.line, error.column) == (line, column)
    assert message in error.reason


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("(role a b)", "'role' takes 1 argument(s), but is used here with 2"),
        ("(ROLE)", "'role' takes 1 argument(s), but is used here with 0"),
        ("(init)", "'init' takes 1 argument(s), but is used here with 0"),
        ("(<= (p) (true))", "'true' takes 1 argument(s), but is used here with 0"),
        ("(<= (p) (true a b))", "'true' takes 1 argument(s), but is used here with 2"),
        ("(<= (p) (does r))", "'does' takes 2 argument(s), but is used here with 1"),
        ("(<= (next a b) (p))", "'next' takes 1 argument(s), but is used here with 2"),
        ("(legal r)", "'legal' takes 2 argument(s), but is used here with 1"),
        ("(<= (goal r) (p))", "'goal' takes 2 argument(s), but is used here with 1"),
        ("(<= (terminal x) (p))", "'terminal' takes no arguments, but is used here with 1"),
        ("(<= (terminal) (p))", "'terminal' takes no arguments, but is used here with 0"),
        ("(base)", "'base' takes 1 argument(s), but is used here with 0"),
        ("(input r)", "'input' takes 2 argument(s), but is used here with 1"),
        ("(<= (p) (not (q) (r)))", "'not' takes 1 argument, but is used here with 2"),
        ("(<= (p) (distinct a))", "'distinct' takes 2 arguments, but is used here with 1"),
        ("(<= (p) (distinct a b c))", "'distinct' takes 2 arguments, but is used here with 3"),
        ("(<= (p) (or))", "'or' needs at least one argument"),
    ],
)
def test_a_keyword_used_with_the_wrong_arity_is_refused(text: str, message: str) -> None:
    error = syntax_error("(role r)\n" + text)
    assert error.line == 2
    assert message in error.reason


def test_the_arity_error_points_at_the_misused_keyword() -> None:
    error = syntax_error("(<= (legal r go)\n    (true on)\n    (legal r))")
    assert (error.line, error.column) == (3, 5)


@pytest.mark.parametrize(
    ("text", "line", "column"),
    [("()", 1, 1), ("(role r)\n(init ())", 2, 7), ("(<= (p) ())", 1, 9), ("(p (q ()))", 1, 7)],
)
def test_empty_parentheses_are_not_a_term(text: str, line: int, column: int) -> None:
    error = syntax_error(text)
    assert (error.line, error.column) == (line, column)
    assert "empty parentheses" in error.reason


def test_a_term_must_start_with_a_name() -> None:
    assert "must start with a name" in syntax_error("((cell 1) b)").reason
    assert "cannot be a function name" in syntax_error("(init (?f a))").reason


def test_connectives_cannot_stand_as_sentences() -> None:
    assert "'not' cannot stand as a sentence" in syntax_error("(not p)").reason
    assert "cannot stand as the head of a rule" in syntax_error("(<= (or a b) c)").reason


def test_syntax_errors_are_gdl_errors_and_value_errors() -> None:
    error = syntax_error("(role")
    assert isinstance(error, GdlError)
    assert isinstance(error, ValueError)


def _nested(depth: int) -> str:
    """``(f (f ... a))``: a term ``depth`` parentheses deep."""
    return "(f " * depth + "a" + ")" * depth


def test_parentheses_nested_exactly_at_the_cap_are_read() -> None:
    (node,) = read_nodes(_nested(MAX_NESTING))
    for _ in range(MAX_NESTING - 1):
        node = node.value[1]
    assert [child.value for child in node.value] == ["f", "a"]


def test_one_level_past_the_cap_is_refused_where_it_starts() -> None:
    with pytest.raises(GdlSyntaxError) as caught:
        read_nodes("\n" + _nested(MAX_NESTING + 1))
    assert caught.value.reason == "parentheses nested deeper than 400 levels"
    assert (caught.value.line, caught.value.column) == (2, 3 * MAX_NESTING + 1)


def test_a_game_counts_its_own_parentheses_towards_the_cap() -> None:
    rules = parse_gdl(f"(role r)\n(init {_nested(MAX_NESTING - 1)})")
    term = rules[1].head[1]
    for _ in range(MAX_NESTING - 1):
        assert term[0] == "f"
        term = term[1]
    assert term == "a"
    with pytest.raises(GdlSyntaxError) as caught:
        parse_gdl(f"(role r)\n(init {_nested(MAX_NESTING)})")
    assert caught.value.line == 2


def test_nesting_far_past_the_cap_is_refused_not_a_crash() -> None:
    with pytest.raises(GdlSyntaxError):
        parse_gdl(f"(role r)\n(init {_nested(100_000)})")
