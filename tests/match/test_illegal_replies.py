"""An illegal reply is recorded as ``IL`` and the move in GGP-Base's canonical form,
whatever the spacing it arrived in, and in the game's true symbols in a scrambled match."""

from __future__ import annotations

from server.gdl import Game
from server.match import MatchConfig, MatchRunner, Player
from server.protocol import Scrambler, render_move
from server.records import ErrorKind

from .fakes import FakePlayer, counting_game

QUICK = MatchConfig(start_clock=1, play_clock=1, network_slack=0.25, seed=7)
GAME = counting_game(3)


async def _errors(script: list[str], config: MatchConfig = QUICK) -> list[list[str]]:
    game = Game.from_text(GAME)
    async with FakePlayer(script=script) as scripted, FakePlayer() as honest:
        record = await MatchRunner(
            game, [Player("Scripted", scripted.url), Player("Honest", honest.url)], config
        ).run()
    assert record.errors is not None and record.error_details is not None
    for codes, details in zip(record.errors, record.error_details, strict=True):
        if codes[0].startswith("IL ") and codes[0] != "IL null":
            assert details[0] is not None and details[0].kind is ErrorKind.ILLEGAL
    return [codes[0] for codes in record.errors[1:]]


async def test_oddly_spaced_replies_are_recorded_in_canonical_form() -> None:
    script = ["(push\t\t3\n)", "\r\n  (  push   1  )  ", "  ( push\n 2"]

    errors = await _errors(script)

    assert errors == ["IL ( push 3 )", "", "IL null"]


async def test_a_scrambled_illegal_reply_is_recorded_in_the_true_symbols() -> None:
    config = QUICK.model_copy(update={"scramble": True})
    scrambler = Scrambler(Game.from_text(GAME).rules, QUICK.seed or 0)
    push = scrambler.scramble_symbol("push")
    assert push != "push"
    script = [
        f"( {push} 3 )",
        f"\n({push}   2)\t",
        f"(  {push}\n  7 )",
    ]

    errors = await _errors(script, config)

    assert errors == ["IL ( push 3 )", "", "IL ( push 7 )"]


async def test_a_canonical_illegal_reply_is_recorded_as_sent() -> None:
    errors = await _errors([render_move(("push", "3")), "noop", "( push 2 )"])

    assert errors == ["IL ( push 3 )", "", ""]
