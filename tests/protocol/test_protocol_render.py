"""What we send is byte for byte what GGP-Base's game server sends."""

from __future__ import annotations

import re

import pytest
from protocol_captures import load_exchanges, shared_game_text
from pydantic import ValidationError

from server.gdl.parser import parse_gdl
from server.protocol import (
    Abort,
    Info,
    Play,
    Preview,
    Start,
    Stop,
    parse_message,
    render,
    render_rule,
)
from server.protocol.http import request_bytes, response_bytes

COUNTING = """
(role counter)
(init (count 0))
(succ 0 1) (succ 1 2)
(legal counter tick)
(<= (next (count ?n)) (true (count ?m)) (succ ?m ?n))
(<= terminal (true (count 2)) (not (distinct 2 2)) (or done (true (count 2))))
(<= (goal counter 100) terminal)
"""


def test_every_message_type_renders_as_ggp_base_writes_it():
    rules = parse_gdl("(role r) (<= terminal (true (count 2)))")
    assert render(Start(match_id="m.1", role="r", rules=rules, start_clock=5, play_clock=3)) == (
        "( START m.1 r (( role r ) ( <= terminal ( true ( count 2 ) ) ) ) 5 3)"
    )
    assert render(Play(match_id="m.1", moves=None)) == "( PLAY m.1 NIL )"
    assert render(Play(match_id="m.1", moves=[("mark", "2", "1"), "noop"])) == (
        "( PLAY m.1 (( mark 2 1 ) noop ) )"
    )
    assert render(Play(match_id="m.1", moves=["noop", ("play", "2", "2", "1", "1", "o")])) == (
        "( PLAY m.1 (noop ( play 2 2 1 1 o ) ) )"
    )
    assert render(Stop(match_id="m.1", moves=[("mark", "1", "1"), "noop"])) == (
        "( STOP m.1 (( mark 1 1 ) noop ) )"
    )
    assert render(Stop(match_id="m.1")) == "( STOP m.1 NIL )"
    assert render(Abort(match_id="abort.ticTacToe.1")) == "( ABORT abort.ticTacToe.1 )"
    assert render(Info()) == "( INFO )"
    assert render(Preview(rules=rules, preview_clock=4)) == (
        "( PREVIEW (( role r ) ( <= terminal ( true ( count 2 ) ) ) ) 4 )"
    )


def test_rules_render_like_gdl_to_string():
    rules = parse_gdl(COUNTING)
    assert [render_rule(rule) for rule in rules] == [
        "( role counter )",
        "( init ( count 0 ) )",
        "( succ 0 1 )",
        "( succ 1 2 )",
        "( legal counter tick )",
        "( <= ( next ( count ?n ) ) ( true ( count ?m ) ) ( succ ?m ?n ) )",
        "( <= terminal ( true ( count 2 ) ) ( not ( distinct 2 2 ) ) "
        "( or done ( true ( count 2 ) ) ) )",
        "( <= ( goal counter 100 ) terminal )",
    ]


def test_public_terms_render_like_raw_terms():
    from server.gdl.terms import Compound, Constant

    message = Play(match_id="m", moves=[Compound(("mark", "1", "2")), Constant("noop")])
    assert render(message) == "( PLAY m (( mark 1 2 ) noop ) )"
    assert message.moves == [("mark", "1", "2"), "noop"]


@pytest.mark.parametrize(
    ("fields", "reason"),
    [
        ({"match_id": "two words"}, "not a GDL symbol: 'two words'"),
        ({"match_id": ""}, "not a GDL symbol: ''"),
        ({"match_id": "m", "moves": ["(mark"]}, "not a GDL symbol: '(mark'"),
        ({"match_id": "m", "moves": [("mark", "1 1")]}, "not a GDL symbol: '1 1'"),
        ({"match_id": "m", "moves": [("mark", "1)")]}, "not a GDL symbol: '1)'"),
        ({"match_id": "m", "moves": [(("mark",), "1")]}, "not a GDL term: (('mark',), '1')"),
        ({"match_id": "m", "moves": [()]}, "not a GDL term: ()"),
        ({"match_id": "m", "moves": [3]}, "not a GDL term: 3"),
    ],
)
def test_a_message_built_in_code_refuses_what_could_not_be_sent(
    fields: dict[str, object], reason: str
) -> None:
    """A symbol with a space or a parenthesis would change the message's shape on the wire."""
    with pytest.raises(ValidationError, match=re.escape(reason)):
        Play.model_validate(fields)


def test_start_built_from_the_kif_file_matches_the_captured_start():
    rules = parse_gdl(shared_game_text("ticTacToe"))
    starts = [ex for ex in load_exchanges("ttt-transcript.txt") if "( START" in ex.request_body]
    assert len(starts) == 2
    for exchange in starts:
        role = exchange.who.split("(")[0]
        message = Start(
            match_id="localtest.ticTacToe.1795278634766",
            role=role,
            rules=rules,
            start_clock=5,
            play_clock=3,
        )
        assert render(message) == exchange.request_body


@pytest.mark.parametrize(
    "capture",
    [
        "ttt-transcript.txt",
        "nineboard-transcript.txt",
        "abort-transcript.txt",
        "scrambled-transcript.txt",
    ],
)
def test_every_captured_message_reads_back_and_renders_byte_for_byte(capture):
    for exchange in load_exchanges(capture):
        assert render(parse_message(exchange.request_body)) == exchange.request_body


@pytest.mark.parametrize(
    "capture",
    [
        "ttt-transcript.txt",
        "nineboard-transcript.txt",
        "abort-transcript.txt",
        "scrambled-transcript.txt",
    ],
)
def test_http_framing_is_byte_for_byte_ggp_base(capture):
    for exchange in load_exchanges(capture):
        receiver = exchange.request_head.split(b"Receiver: ")[1].split(b"\r\n")[0].decode()
        assert request_bytes(exchange.request_body, "127.0.0.1", receiver) == exchange.request
        assert response_bytes(exchange.response_body) == exchange.response


def test_info_ping_framing_has_an_empty_receiver():
    (exchange,) = load_exchanges("info-transcript.txt")
    assert exchange.request_body == render(Info())
    assert request_bytes(render(Info()), "localhost") == exchange.request
    assert response_bytes(exchange.response_body) == exchange.response
