"""Players read messages liberally, and say clearly what is wrong with garbage."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from server.games import game_text
from server.gdl.parser import Node, Rule, parse_gdl
from server.protocol import (
    Abort,
    Info,
    Play,
    Preview,
    ProtocolError,
    Start,
    Stop,
    parse_message,
    render_rules,
)
from server.protocol import parse as parse_module

RULES = "((role xplayer) (role oplayer) (<= terminal (true done)) (<= (legal ?r noop) (role ?r)))"


def test_start_reads_id_role_rules_and_clocks():
    message = parse_message(f"( START localtest.ttt.1 oplayer {RULES} 5 3)")
    assert isinstance(message, Start)
    assert (message.match_id, message.role, message.start_clock, message.play_clock) == (
        "localtest.ttt.1",
        "oplayer",
        5,
        3,
    )
    assert render_rules(message.rules) == render_rules(parse_gdl(RULES[1:-1]))


def test_keywords_in_any_case_and_any_whitespace():
    text = f"(start\n\tprobe.1   OPLAYER\r\n {RULES.replace('role', 'ROLE')}  10\n5 )"
    message = parse_message(text)
    assert isinstance(message, Start)
    assert message.rules[0].head == ("role", "xplayer")
    assert message.role == "OPLAYER"
    assert parse_message("\n\t(  Info \r\n )  \n") == Info()
    assert parse_message("(play probe.1 nil)") == Play(match_id="probe.1", moves=None)
    assert parse_message("(Stop probe.1 (noop (mark 2 2)))") == Stop(
        match_id="probe.1", moves=["noop", ("mark", "2", "2")]
    )
    assert parse_message("(aBoRt probe.1)") == Abort(match_id="probe.1")


def test_gdl_keywords_fold_to_lower_case_but_ids_and_names_keep_theirs():
    message = parse_message(f"( START Match.ID RANDOM {RULES} 5 3)")
    assert message.match_id == "Match.ID"
    assert message.role == "random"
    play = parse_message("( PLAY Match.ID ((DOES a) xPlayer) )")
    assert play.moves == [("does", "a"), "xPlayer"]


def test_extra_trailing_start_arguments_are_ignored():
    message = parse_message(f"( START probe.3 xplayer {RULES} 10 5 extra (more stuff))")
    assert isinstance(message, Start)
    assert message.play_clock == 5


def test_any_atom_in_the_moves_slot_means_no_moves():
    for atom in ("NIL", "nil", "Nil", "foo"):
        assert parse_message(f"( PLAY m {atom} )").moves is None
        assert parse_message(f"( STOP m {atom} )").moves is None


def test_joint_moves_are_terms_in_role_order():
    message = parse_message("(PLAY probe.1 ((mark 1 1)   noop))")
    assert message.moves == [("mark", "1", "1"), "noop"]


def test_preview_reads_rules_and_clock():
    message = parse_message(f"( PREVIEW {RULES} 4 )")
    assert isinstance(message, Preview)
    assert message.preview_clock == 4
    assert len(message.rules) == 4


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "empty message"),
        ("   \n ", "empty message"),
        ("( INFO ", "never closed"),
        ("( INFO ))", "unbalanced"),
        ("INFO", "must be a non-empty list"),
        ("()", "must be a non-empty list"),
        ("( INFO ) ( INFO )", "expected one message"),
        ("( PING )", "unknown message type 'PING'"),
        ("( (INFO) )", "the message type must be an atom"),
        ("( PLAY id NIL extra )", "PLAY takes 2 argument(s), got 3"),
        ("( PLAY id )", "PLAY takes 2 argument(s), got 1"),
        ("( ABORT )", "ABORT takes 1 argument(s), got 0"),
        ("( INFO now )", "INFO takes 0 argument(s), got 1"),
        ("( PLAY (id) NIL )", "the match id must be an atom"),
        ("( PLAY probe.1 (( ) noop) )", "invalid joint move"),
        ("( START bad.1 xplayer ( ( <= ) ( role ) ) 10 5 )", "invalid rules"),
        ("( START bad.1 xplayer rules 10 5 )", "the rules must be a list"),
        ("( START bad.1 xplayer ((role xplayer)) 10 )", "START needs"),
        ("( START bad.1 xplayer ((role xplayer)) ten 5 )", "start clock must be a whole number"),
        ("( START bad.1 xplayer ((role xplayer)) 10 2.5 )", "play clock must be a whole number"),
        ("( START bad.1 xplayer ((role xplayer)) -1 5 )", "start clock must be a whole number"),
    ],
)
def test_garbage_raises_a_protocol_error_with_the_reason(text, reason):
    with pytest.raises(ProtocolError, match=reason.replace("(", r"\(").replace(")", r"\)")):
        parse_message(text)


def test_a_huge_start_is_read():
    facts = " ".join(f"(extra {index})" for index in range(60_000))
    message = parse_message(f"( START big.1 xplayer ((role xplayer) {facts}) 10 5 )")
    assert len(message.rules) == 60_001


def test_a_message_nested_absurdly_deep_is_refused_not_a_crash() -> None:
    depth = 5000
    message = "(PLAY m1 (" + "(f " * depth + "a" + ")" * depth + "))"
    with pytest.raises(ProtocolError, match="nested deeper"):
        parse_message(message)


def test_a_semicolon_is_part_of_an_atom_in_a_message() -> None:
    # Messages carry no comments: ";" must not swallow the rest of the line.
    message = parse_message("(PLAY m;1 NIL)")
    assert message.match_id == "m;1"


GAME_RULES = render_rules(parse_gdl(game_text("tictactoex9")))
GAME_RULES_ON_LINES = GAME_RULES.replace(") (", ")\n (")


@pytest.mark.parametrize(
    "text",
    [
        f"( START m.1 xplayer {GAME_RULES} 10 5 )",
        f"(start m.2 OPLAYER\n\t{GAME_RULES_ON_LINES}\r\n 10\n5)",
        f"( START m.3 xplayer {GAME_RULES} 10 5 extra )",
        f"( START m.4 (xplayer) {GAME_RULES} 10 5 )",
        f"( START m.5 xplayer {GAME_RULES[:-1]} 10 5 )",
        f"( START m.6 xplayer {GAME_RULES}) 10 5 )",
        f"( START m.7 xplayer {GAME_RULES} 10 -5 )",
        f"( START m.8 xplayer {GAME_RULES.replace('(role oplayer)', '(role)')} 10 5 )",
        f"( START m;9 xplayer {GAME_RULES} 10 5 )",
    ],
)
def test_a_start_reads_the_same_the_second_time_its_rules_come(text: str) -> None:
    """Rules seen before are not read again, and nothing else changes: the message read
    whole, the same places (lines and columns) in its rules, the same errors."""

    def outcome(parse: Callable[[str], object]) -> object:
        try:
            message = parse(text)
        except ProtocolError as error:
            return str(error)
        assert isinstance(message, Start)
        return message, [(rule.line, rule.column, rule.places) for rule in message.rules]

    whole = outcome(parse_module._parse_whole)
    assert outcome(parse_message) == whole
    assert outcome(parse_message) == whole


def test_rules_that_came_before_are_not_read_again(monkeypatch: pytest.MonkeyPatch) -> None:
    read: list[int] = []
    whole = parse_module._rules

    def counted(node: Node) -> list[Rule]:
        rules = whole(node)
        if rules:
            read.append(len(rules))
        return rules

    monkeypatch.setattr(parse_module, "_rules", counted)
    monkeypatch.setattr(parse_module, "_KNOWN_RULES", {})
    expected = parse_gdl(game_text("tictactoex9"))
    for match in range(3):
        message = parse_message(f"( START m.{match} xplayer {GAME_RULES} 10 5 )")
        assert isinstance(message, Start) and message.match_id == f"m.{match}"
        assert [(rule.head, rule.body) for rule in message.rules] == [
            (rule.head, rule.body) for rule in expected
        ]
    assert read == [len(expected)]


@pytest.mark.parametrize(
    "text",
    [
        "( PLAY local.t.1 ( ( play 1 1 2 2 ) noop ) )",
        "(play m.2 NIL)",
        "( STOP m.3 ( ( play 1 1 2 2 ) noop ) )",
        "(Play\n m.4\t( (PLAY 1 1 2 2) NOOP ))",
        "( PLAY m.6 ( a ) ( b ) )",
        "( PLAY m.7 ( a ) ) )",
        "( PLAY m.8 ( (a ) )",
        "( PLAY m.10 ( (?x) noop ) )",
        "(PLAY m.11 (x y))extra",
        "( STOP m.12 ( ( mark 1 1 ) ( noop ) ) )",
        "( PLAY m;13 ( a b ) )",
        "(PLAY m.14(noop))",
        "(STOP m.15((mark 1 1) noop))",
    ],
)
def test_a_play_or_stop_reads_the_same_when_its_moves_came_before(text: str) -> None:
    def outcome(parse: Callable[[str], object]) -> object:
        try:
            return parse(text)
        except ProtocolError as error:
            return str(error)

    whole = outcome(parse_module._parse_whole)
    assert outcome(parse_message) == whole
    assert outcome(parse_message) == whole


def test_joint_moves_that_came_before_are_not_read_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    wholly: list[str] = []
    whole = parse_module._parse_whole

    def counted(text: str) -> object:
        wholly.append(text)
        return whole(text)

    monkeypatch.setattr(parse_module, "_parse_whole", counted)
    monkeypatch.setattr(parse_module, "_KNOWN_MOVES", {})
    for match in range(3):
        message = parse_message(f"( PLAY m.{match} ( ( mark 1 1 ) noop ) )")
        assert message == Play(match_id=f"m.{match}", moves=[("mark", "1", "1"), "noop"])
        stop = parse_message(f"( STOP m.{match} NIL )")
        assert stop == Stop(match_id=f"m.{match}", moves=None)
    assert wholly == ["( PLAY m.0 ( ( mark 1 1 ) noop ) )", "( STOP m.0 NIL )"]
