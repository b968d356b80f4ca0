"""Scrambling renames every symbol of a game except keywords and numbers, reversibly."""

from __future__ import annotations

import re

from protocol_captures import load_exchanges, shared_game_text

from server.gdl.parser import KEYWORDS, parse_gdl
from server.protocol import Abort, Info, Play, Scrambler, Start, Stop, render, render_rules

GAME = """
(role white) (role black) (role random)
(init (cell 1 blank)) (init (control white))
(<= (legal ?p (mark ?x)) (true (control ?p)) (true (cell ?x blank)))
(<= (legal ?p noop) (role ?p) (not (true (control ?p))))
(<= (next (cell ?x ?p)) (does ?p (mark ?x)))
(<= terminal (not (true (cell 1 blank))) (distinct white black))
(<= (goal ?p 100) (role ?p) (or (true (cell 1 ?p)) terminal))
(x 1) (<= (y ?x) (x ?x))
"""


def test_every_symbol_but_keywords_and_numbers_is_renamed():
    rules = parse_gdl(GAME)
    scrambler = Scrambler(rules, seed=7)
    wire = render_rules(scrambler.scramble_rules(rules))
    tokens = set(re.findall(r"[^\s()]+", wire))
    for kept in (
        "role",
        "init",
        "legal",
        "true",
        "does",
        "next",
        "terminal",
        "goal",
        "not",
        "distinct",
        "or",
        "<=",
        "random",
        "1",
        "100",
    ):
        assert kept in tokens
    for renamed in (
        "white",
        "black",
        "cell",
        "blank",
        "control",
        "mark",
        "noop",
        "x",
        "y",
        "?p",
        "?x",
    ):
        assert renamed not in tokens
    assert all(
        token in KEYWORDS or token.isdigit() or token.lstrip("?").isalpha() for token in tokens
    )


def test_variables_and_constants_of_the_same_name_get_different_words():
    scrambler = Scrambler(parse_gdl(GAME), seed=7)
    assert scrambler.scramble_symbol("?x") != "?" + scrambler.scramble_symbol("x")
    assert scrambler.scramble_symbol("?x").startswith("?")


def test_the_mapping_is_one_to_one_and_avoids_every_true_symbol():
    rules = parse_gdl(GAME)
    mapping = Scrambler(rules, seed=1).mapping
    words = [word.lstrip("?") for word in mapping.values()]
    assert len(set(words)) == len(words)
    originals = {symbol.lstrip("?").casefold() for symbol in mapping}
    assert not originals & set(words)
    assert not set(words) & {"nil", "busy", "ready", "done", "aborted"}


def test_the_same_seed_gives_the_same_words_and_another_seed_others():
    rules = parse_gdl(GAME)
    assert Scrambler(rules, seed=3).mapping == Scrambler(parse_gdl(GAME), seed=3).mapping
    assert Scrambler(rules, seed=3).mapping != Scrambler(rules, seed=4).mapping


def test_moves_round_trip_and_unknown_words_pass_through():
    scrambler = Scrambler(parse_gdl(GAME), seed=5)
    move = ("mark", "1")
    wire = scrambler.scramble_term(move)
    assert wire != move and wire[1] == "1"
    assert scrambler.unscramble_term(wire) == move
    assert scrambler.unscramble_term(("whatever", "2")) == ("whatever", "2")


def test_messages_scramble_roles_rules_and_moves_but_not_ids_or_clocks():
    rules = parse_gdl(GAME)
    scrambler = Scrambler(rules, seed=9)
    start = scrambler.scramble_message(
        Start(match_id="m.white.1", role="white", rules=rules, start_clock=5, play_clock=3)
    )
    assert start.match_id == "m.white.1" and (start.start_clock, start.play_clock) == (5, 3)
    assert start.role == scrambler.scramble_symbol("white") != "white"
    assert render(start).startswith(f"( START m.white.1 {start.role} (( role {start.role} )")
    play = scrambler.scramble_message(Play(match_id="m", moves=[("mark", "1"), "noop", "noop"]))
    assert play.moves == [
        scrambler.scramble_term(("mark", "1")),
        *[scrambler.scramble_term("noop")] * 2,
    ]
    assert scrambler.scramble_message(Play(match_id="m")).moves is None
    assert scrambler.scramble_message(Stop(match_id="m", moves=["noop"])).moves != ["noop"]
    assert scrambler.scramble_message(Abort(match_id="m")) == Abort(match_id="m")
    assert scrambler.scramble_message(Info()) == Info()


def _consistent_renaming(ours: str, theirs: str) -> bool:
    """True when ``theirs`` is ``ours`` with each word replaced one-to-one by another."""
    ours_tokens, their_tokens = ours.split(" "), theirs.split(" ")
    if len(ours_tokens) != len(their_tokens):
        return False
    renaming: dict[str, str] = {}
    for mine, other in zip(ours_tokens, their_tokens, strict=True):
        if renaming.setdefault(mine, other) != other:
            return False
    return len(set(renaming.values())) == len(renaming)


def test_scrambled_start_has_the_shape_of_ggp_base_scrambling():
    """Word for word, our scrambled START and GGP-Base's differ only by a consistent renaming."""
    rules = parse_gdl(shared_game_text("ticTacToe"))
    first_start = load_exchanges("scrambled-transcript.txt")[0]  # sent to the second role
    scrambler = Scrambler(rules, seed=2)

    def ours(role: str) -> str:
        message = Start(
            match_id="scrambled.ticTacToe.1", role=role, rules=rules, start_clock=3, play_clock=2
        )
        return render(scrambler.scramble_message(message))

    assert _consistent_renaming(ours("oplayer"), first_start.request_body)
    assert not _consistent_renaming(ours("xplayer"), first_start.request_body)
