"""Our players answer GGP-Base's game server: its captured requests, replayed byte for byte."""

from __future__ import annotations

import pytest
from player_http import send_raw
from protocol_captures import load_exchanges

from players.agent import PlayerAgent
from players.legal_player import LegalPlayer
from players.random_player import RandomPlayer
from players.serve import running
from server.gdl import Game
from server.protocol import Abort, Play, Start, Stop, parse_message, parse_move_reply


@pytest.mark.parametrize(
    "capture",
    [
        "ttt-transcript.txt",
        "nineboard-transcript.txt",
        "scrambled-transcript.txt",
        "abort-transcript.txt",
    ],
)
@pytest.mark.parametrize("player_class", [LegalPlayer, RandomPlayer])
async def test_each_captured_request_gets_the_right_kind_of_answer(capture, player_class):
    exchanges = load_exchanges(capture)
    players = sorted({exchange.who for exchange in exchanges})
    for who in players:
        game = state = role = None
        async with running(PlayerAgent(player_class())) as url:
            for exchange in (ex for ex in exchanges if ex.who == who):
                message = parse_message(exchange.request_body)
                reply = await send_raw(url, exchange.request)
                assert reply.status == 200
                match message:
                    case Start():
                        game, role = Game(message.rules), message.role
                        state = game.initial_state()
                        assert reply.body == "ready"
                    case Play():
                        if message.moves is not None:
                            state = game.next_state(state, message.moves)
                        assert parse_move_reply(reply.body) in game.legal_moves(state, role)
                    case Stop():
                        assert reply.body == "done"
                    case Abort():
                        assert reply.body == "aborted"
