"""Reading players' replies on the server side, and writing them on the player side."""

from __future__ import annotations

import pytest

from server.protocol import (
    QUOTE_LIMIT,
    InfoReply,
    ProtocolError,
    match_legal_move,
    parse_info_reply,
    parse_move_reply,
    quote_move,
    render_info_reply,
    render_move,
)

LEGAL = [("mark", "1", "2"), ("mark", "2", "1"), "noop"]


def test_a_move_reply_is_one_term_with_whitespace_trimmed():
    assert parse_move_reply("( mark 1 2 )") == ("mark", "1", "2")
    assert parse_move_reply("\r\n  (mark 1\n2)\t ") == ("mark", "1", "2")
    assert parse_move_reply("noop") == "noop"
    assert parse_move_reply("nil") == "nil"


@pytest.mark.parametrize(
    "reply", ["", "   ", "((( this is not a move", "noop noop", "( )", "((mark) 1)", ")"]
)
def test_an_unreadable_move_reply_raises_protocol_error(reply):
    with pytest.raises(ProtocolError):
        parse_move_reply(reply)


def test_moves_compare_as_terms():
    assert match_legal_move(parse_move_reply("( mark 2 1 )"), LEGAL) == ("mark", "2", "1")
    assert match_legal_move(parse_move_reply("(mark 2 1)"), LEGAL) == ("mark", "2", "1")
    assert match_legal_move(parse_move_reply("( mark 9 9 )"), LEGAL) is None
    assert match_legal_move(parse_move_reply("busy"), LEGAL) is None


def test_letter_case_counts_by_default_as_in_ggp_base():
    assert match_legal_move(parse_move_reply("NOOP"), LEGAL) is None
    assert match_legal_move(parse_move_reply("( MARK 1 2 )"), LEGAL) is None
    assert match_legal_move(parse_move_reply("  ( mark\n1   2 ) "), LEGAL) == ("mark", "1", "2")


def test_ignoring_case_accepts_a_reply_matching_one_legal_move():
    assert match_legal_move(parse_move_reply("NOOP"), LEGAL, ignore_case=True) == "noop"
    assert match_legal_move(parse_move_reply("( MARK 1 2 )"), LEGAL, ignore_case=True) == (
        "mark",
        "1",
        "2",
    )
    ambiguous = ["Noop", "noop"]
    assert match_legal_move("NOOP", ambiguous, ignore_case=True) is None
    assert match_legal_move("Noop", ambiguous, ignore_case=True) == "Noop"


def test_the_matched_move_is_the_legal_move_itself():
    legal = [("place", "Red", "1")]
    assert match_legal_move(("place", "red", "1"), legal, ignore_case=True) is legal[0]


def test_a_move_is_quoted_exactly_when_short_and_cut_when_long():
    assert quote_move(("mark", "2", "1")) == "( mark 2 1 )"
    assert quote_move("noop") == "noop"
    long_move = ("say", *(["word"] * 10_000))
    quoted = quote_move(long_move)
    assert quoted.startswith("( say word word") and quoted.endswith("...")
    assert len(quoted) == QUOTE_LIMIT + 3
    deep: object = "x"
    for _ in range(50_000):
        deep = ("f", deep)
    assert quote_move(deep) == ("( f " * 50)[:QUOTE_LIMIT] + "..."  # type: ignore[arg-type]


def test_moves_render_as_players_send_them():
    assert render_move(("mark", "2", "1")) == "( mark 2 1 )"
    assert render_move("noop") == "noop"


def test_info_replies_in_the_ggp_base_form_and_any_case():
    assert parse_info_reply("( ( name Random ) ( status available ) )") == InfoReply(
        name="Random", status="available"
    )
    reply = parse_info_reply("((NAME SampleMonteCarloGamer) (Status BUSY) (species alien))")
    assert reply == InfoReply(name="SampleMonteCarloGamer", status="busy", species="alien")
    assert not reply.available
    assert parse_info_reply("((name X) (colour blue))") == InfoReply(name="X")


def test_a_bare_atom_info_reply_is_the_status():
    assert parse_info_reply("available") == InfoReply(status="available")
    assert parse_info_reply(" AVAILABLE\n").available


@pytest.mark.parametrize("reply", ["", "((name", "(name x)", "((name))", "(((a) b))"])
def test_unreadable_info_replies_raise_protocol_error(reply):
    with pytest.raises(ProtocolError):
        parse_info_reply(reply)


def test_info_replies_render_as_ggp_base_players_send_them():
    assert render_info_reply(InfoReply(name="Random", status="available")) == (
        "( ( name Random ) ( status available ) )"
    )
    assert render_info_reply(InfoReply(name="Mc", status="busy", species="tree")) == (
        "( ( name Mc ) ( status busy ) ( species tree ) )"
    )
    with pytest.raises(ValueError, match="one word"):
        render_info_reply(InfoReply(name="two words", status="available"))
