"""A player that fails, cheats or overruns its clock still sends a legal move in time."""

from __future__ import annotations

import threading

from player_http import send, start_message

from players.agent import PlayerAgent
from players.base import Player
from players.match import PlayerMatch
from players.serve import running
from server.gdl import State
from server.gdl.terms import Term

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
    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()
        self.calls = 0

    def play(self, match: PlayerMatch, state: State) -> Term:
        self.calls += 1
        if self.calls == 1:
            self.release.wait(30)
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
    player = Overrunning()
    async with running(PlayerAgent(player, reply_margin=0.5)) as url:
        await send(url, start_message("f.4", "left", play_clock=1))
        assert (await send(url, "( PLAY f.4 NIL )")).body in LEFT_OPENING
        player.release.set()
        assert (await send(url, "( PLAY f.4 (tick noop) )")).body == "noop"
