"""A player that fails, cheats or overruns its clock still sends a legal move in time."""

from __future__ import annotations

import threading

from player_http import TICKING, send, start_message

from players.agent import PlayerAgent
from players.base import Player
from players.legal_player import LegalPlayer
from players.match import PlayerMatch
from players.serve import running
from server.gdl import Game, State
from server.gdl.terms import Term
from server.match import MatchConfig, MatchRunner
from server.match import Player as ServerPlayer

LEFT_OPENING = {"tick", "tock"}


class Crashing(Player):
    def play(self, match: PlayerMatch, state: State) -> Term:
        raise RuntimeError("out of ideas")


class Cheating(Player):
    def play(self, match: PlayerMatch, state: State) -> Term:
        return ("jump", "3")  # type: ignore[return-value]


class Shouting(Player):
    def play(self, match: PlayerMatch, state: State) -> Term:
        return match.legal_moves(state)[0].upper()  # type: ignore[return-value]


class Overrunning(Player):
    """Thinks for ``think`` seconds (or until released) on its first move only."""

    def __init__(self, think: float) -> None:
        super().__init__()
        self.release = threading.Event()
        self.think = think
        self.calls = 0

    def play(self, match: PlayerMatch, state: State) -> Term:
        self.calls += 1
        if self.calls == 1:
            self.release.wait(self.think)
        return match.legal_moves(state)[-1]


async def test_a_crashing_player_sends_a_random_legal_move():
    async with running(PlayerAgent(Crashing())) as url:
        await send(url, start_message("f.1", "left"))
        assert (await send(url, "( PLAY f.1 NIL )")).body in LEFT_OPENING


async def test_an_illegal_choice_is_replaced_by_a_random_legal_move():
    async with running(PlayerAgent(Cheating())) as url:
        await send(url, start_message("f.2", "left"))
        assert (await send(url, "( PLAY f.2 NIL )")).body in LEFT_OPENING


async def test_a_choice_in_the_wrong_letter_case_is_sent_as_the_legal_move():
    async with running(PlayerAgent(Shouting())) as url:
        await send(url, start_message("f.3", "left"))
        assert (await send(url, "( PLAY f.3 NIL )")).body == "tick"


async def test_a_player_still_thinking_at_the_deadline_gets_a_legal_move_sent_for_it():
    """In a real match the move arrives within the play clock: no ``TO`` is recorded and
    the recorded response time is under the clock, though the player thinks for 3 s."""
    player = Overrunning(think=3.0)
    config = MatchConfig(start_clock=2, play_clock=1, network_slack=0.5, seed=3)
    game = Game.from_text(TICKING)
    async with (
        running(PlayerAgent(player, reply_margin=0.3)) as slow,
        running(PlayerAgent(LegalPlayer())) as legal,
    ):
        runner = MatchRunner(
            game, [ServerPlayer("Slow", slow), ServerPlayer("Legal", legal)], config
        )
        record = await runner.run()
        player.release.set()

    assert record.is_completed
    assert record.errors == [["", ""]] * 4
    assert record.response_times is not None
    first_reply_ms = record.response_times[1][0]
    assert first_reply_ms is not None and first_reply_ms <= 1000
    assert record.moves[0][0] in LEFT_OPENING


async def test_after_an_overrun_the_player_answers_the_next_play_itself():
    player = Overrunning(think=5.0)
    async with running(PlayerAgent(player, reply_margin=0.5)) as url:
        await send(url, start_message("f.4", "left", play_clock=1))
        assert (await send(url, "( PLAY f.4 NIL )")).body in LEFT_OPENING
        player.release.set()
        assert (await send(url, "( PLAY f.4 (tick noop) )")).body == "noop"
