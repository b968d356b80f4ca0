"""The ``mcts`` player over real loopback HTTP: clocks, INFO while thinking, ABORT, its tree."""

from __future__ import annotations

import asyncio
import time

from player_http import send

from players.agent import PlayerAgent
from players.match import PlayerMatch
from players.mcts import MctsPlayer, MonteCarloPlayer
from players.mcts.player import MEMORY_KEY
from players.registry import create_player, player_names
from players.serve import running
from server.games import load_game
from server.protocol import Start, parse_info_reply, parse_move_reply, render

GAME = "nineBoardTicTacToe"


def start_message(match_id: str, role: str, start_clock: int, play_clock: int) -> str:
    game = load_game(GAME)
    message = Start(
        match_id=match_id,
        role=role,
        rules=game.rules,
        start_clock=start_clock,
        play_clock=play_clock,
    )
    return render(message)


def test_mcts_and_montecarlo_are_bundled_players() -> None:
    assert {"mcts", "montecarlo"} <= set(player_names())
    assert isinstance(create_player("mcts", seed=1), MctsPlayer)
    assert isinstance(create_player("montecarlo"), MonteCarloPlayer)


def test_options_come_from_the_environment(monkeypatch) -> None:
    monkeypatch.setenv("GGP_MCTS_ITERATIONS", "25")
    monkeypatch.setenv("GGP_MCTS_EXPLORATION", "1.5")
    monkeypatch.setenv("GGP_MCTS_MEMORY_MB", "2")
    monkeypatch.setenv("GGP_MCTS_SOLVER", "0")
    player = MctsPlayer()
    assert (player.iterations, player.exploration, player.max_nodes) == (25, 1.5, 2_000)
    assert not player.solver


async def test_info_is_answered_quickly_while_it_thinks_and_the_move_is_on_time() -> None:
    agent = PlayerAgent(MctsPlayer(seed=1))
    async with running(agent) as url:
        assert (await send(url, start_message("m.1", "xPlayer", 2, 2))).body == "ready"
        sent = time.monotonic()
        play = asyncio.ensure_future(send(url, "( PLAY m.1 NIL )"))
        delays = []
        while not play.done():
            asked = time.monotonic()
            reply = await send(url, "( INFO )")
            delays.append(time.monotonic() - asked)
            assert parse_info_reply(reply.body).status == "busy"
            await asyncio.sleep(0.05)
        answered = time.monotonic() - sent
        move = parse_move_reply((await play).body)
    assert move in load_game(GAME).legal_moves(load_game(GAME).initial_state(), "xPlayer")
    assert len(delays) >= 5
    delays.sort()
    assert delays[len(delays) // 2] < 0.1  # the median; a loaded machine may delay a few
    # it uses its clock, and its reply reaches the server before the deadline (the clock
    # plus the server's 1 s of network slack) even when a loaded machine delays it
    assert 1.0 < answered < 3.0
    thinking = agent.matches["m.1"].memory[MEMORY_KEY]
    assert thinking.search.iterations > 50


async def test_abort_ends_the_search_at_once() -> None:
    agent = PlayerAgent(MctsPlayer(seed=1))
    async with running(agent) as url:
        await send(url, start_message("m.2", "xPlayer", 2, 20))
        sent = time.monotonic()
        play = asyncio.ensure_future(send(url, "( PLAY m.2 NIL )"))
        await asyncio.sleep(0.5)
        assert (await send(url, "( ABORT m.2 )")).body == "aborted"
        await play
        assert time.monotonic() - sent < 2.0  # not the 20-second clock
        assert parse_info_reply((await send(url, "( INFO )")).body).available
    assert agent.matches == {}


def test_the_tree_is_kept_from_one_step_to_the_next() -> None:
    game = load_game(GAME)
    player = MctsPlayer(seed=1, iterations=300)
    state = game.initial_state()
    match = PlayerMatch("m.3", "oPlayer", game, 10, 10, state, deadline=time.monotonic() + 60)
    assert str(player.play(match, state)) == "noop"
    search = match.memory[MEMORY_KEY].search
    root = search.root
    joint, child = max(root.children.items(), key=lambda item: item[1].n)
    visits_before = child.n
    moves = [search.model.move_term(r, root.legal[r][j]) for r, j in enumerate(joint)]
    state = game.next_state(state, moves)
    player.play(match, state)
    assert search.root is child
    assert child.n == visits_before + 300
    player.stop(match)
    assert MEMORY_KEY not in match.memory
