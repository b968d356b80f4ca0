"""Reading players' replies on the server side, and writing them on the player side."""

from __future__ import annotations

import pytest

from server.protocol import (
    InfoReply,
    ProtocolError,
    match_legal_move,
    parse_info_reply,
    parse_move_reply,
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


def test_a_reply_differing_only_in_case_is_accepted_when_unambiguous():
    assert match_legal_move(parse_move_reply("NOOP"), LEGAL) == "noop"
    assert match_legal_move(parse_move_reply("( MARK 1 2 )"), LEGAL) == ("mark", "1", "2")
    ambiguous = ["Noop", "noop"]
    assert match_legal_move("NOOP", ambiguous) is None
    assert match_legal_move("Noop", ambiguous) == "Noop"


def test_the_matched_move_is_the_legal_move_itself():
    legal = [("place", "Red", "1")]
    assert match_legal_move(("place", "red", "1"), legal) is legal[0]


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
