"""Which legal move a reply stands for, and what an unreadable reply is told."""

from __future__ import annotations

import pytest

from server.protocol import (
    InfoReply,
    ProtocolError,
    match_legal_move,
    parse_info_reply,
    parse_move_reply,
    render_info_reply,
)

BOARD = [("mark", "1", "1"), ("mark", "1", "2"), ("move", ("piece", "K"), "e1")]


def test_letter_case_counts_by_default_as_ggp_base_judges_it() -> None:
    assert match_legal_move(parse_move_reply("(move (piece K) e1)"), BOARD) is BOARD[2]
    assert match_legal_move(parse_move_reply("(MOVE (PIECE k) E1)"), BOARD) is None
    assert match_legal_move(parse_move_reply("NOOP"), ["noop"]) is None


def test_an_exact_match_wins_over_one_that_differs_only_in_case() -> None:
    legal = [("Go", "north"), ("go", "north")]
    assert match_legal_move(("go", "north"), legal, ignore_case=True) is legal[1]
    assert match_legal_move(("Go", "north"), legal, ignore_case=True) is legal[0]
    assert match_legal_move(("GO", "NORTH"), legal, ignore_case=True) is None  # two candidates


def test_when_lenient_case_is_ignored_inside_nested_terms_too() -> None:
    reply = parse_move_reply("(MOVE (PIECE k) E1)")
    assert match_legal_move(reply, BOARD, ignore_case=True) is BOARD[2]
    assert (
        match_legal_move(parse_move_reply("(move (piece q) e1)"), BOARD, ignore_case=True) is None
    )


def test_a_move_of_the_right_name_but_wrong_shape_is_not_legal() -> None:
    assert match_legal_move(parse_move_reply("(mark 1)"), BOARD) is None
    assert match_legal_move(parse_move_reply("(mark 1 1 1)"), BOARD) is None
    assert match_legal_move(parse_move_reply("mark"), BOARD) is None
    assert match_legal_move("noop", []) is None


def test_keywords_in_a_reply_read_as_the_gdl_parser_reads_them() -> None:
    assert parse_move_reply("(NOT x)") == ("not", "x")
    assert parse_move_reply("(Mark X)") == ("Mark", "X")


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        ("", "empty move"),
        ("a b", "expected one move, found 2 S-expressions"),
        ("((mark) 1)", "unreadable move: line 1, column 2: a term must start with a name"),
        ("(?x 1)", "unreadable move: line 1, column 2: a variable (?x) cannot be a function name"),
    ],
)
def test_an_unreadable_move_is_refused_with_a_reason(reply: str, message: str) -> None:
    with pytest.raises(ProtocolError) as caught:
        parse_move_reply(reply)
    assert str(caught.value).startswith(message)


def test_an_info_value_of_several_words_is_kept_whole_and_only_status_is_lowered() -> None:
    reply = parse_info_reply("((Name Deep Blue) (STATUS Available) (Species (tree search)))")
    assert reply == InfoReply(name="Deep Blue", status="available", species="( tree search )")


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        ("((name))", "an INFO reply must be a list of (key value) pairs"),
        ("(name x)", "an INFO reply must be a list of (key value) pairs"),
        ("(((name) x))", "an INFO key must be an atom"),
        ("((name ((x) y)))", "unreadable INFO value for name"),
        ("", "empty INFO reply"),
    ],
)
def test_an_unreadable_info_reply_is_refused_with_a_reason(reply: str, message: str) -> None:
    with pytest.raises(ProtocolError) as caught:
        parse_info_reply(reply)
    assert str(caught.value).startswith(message)


def test_an_empty_info_reply_renders_as_an_empty_list() -> None:
    assert render_info_reply(InfoReply()) == "( )"
    assert render_info_reply(InfoReply(status="busy")) == "( ( status busy ) )"


@pytest.mark.parametrize("name", ["", "a b", "a(b", "a)b", "a;b", "a\tb"])
def test_a_name_that_would_not_read_back_as_one_word_is_refused(name: str) -> None:
    with pytest.raises(ValueError) as caught:
        render_info_reply(InfoReply(name=name, status="available"))
    assert str(caught.value) == f"name must be one word without spaces or parentheses: {name!r}"
