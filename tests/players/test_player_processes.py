"""Bundled players run as their own processes, as the match manager starts them."""

from __future__ import annotations

import asyncio
import re
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from player_http import TICKING, send, start_message

from players.registry import create_player, player_names
from server.gdl import Game
from server.protocol import parse_info_reply, parse_move_reply, render_moves

GGP = Path(sys.executable).with_name("ggp")


@asynccontextmanager
async def player_process(*command: str) -> AsyncIterator[str]:
    """Start a player process and yield its URL once it says it is listening."""
    process = await asyncio.create_subprocess_exec(
        *command, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    try:
        assert process.stdout is not None
        line = (await asyncio.wait_for(process.stdout.readline(), 60)).decode()
        found = re.fullmatch(r"listening on (http://127\.0\.0\.1:(\d+))\n", line)
        assert found, f"unexpected first line {line!r}"
        assert int(found[2]) > 0
        yield found[1]
    finally:
        process.terminate()
        assert await asyncio.wait_for(process.wait(), 30) == 0


async def play_out(url: str, role: str, match_id: str) -> list[str]:
    """Play the ticking game with the player in ``role``; the moves it sent."""
    game = Game.from_text(TICKING)
    state, previous, sent = game.initial_state(), None, []
    assert (await send(url, start_message(match_id, role))).body == "ready"
    while not game.is_terminal(state):
        reply = parse_move_reply(
            (await send(url, f"( PLAY {match_id} {render_moves(previous)} )")).body
        )
        assert reply in game.legal_moves(state, role)
        sent.append(reply)
        previous = [reply if r == role else game.legal_moves(state, r)[0] for r in game.roles]
        state = game.next_state(state, previous)
    assert (await send(url, f"( STOP {match_id} {render_moves(previous)} )")).body == "done"
    return sent


async def test_python_dash_m_players_serves_a_bundled_player_on_a_free_port():
    async with player_process(
        sys.executable, "-m", "players", "random", "--port", "0", "--name", "Dice", "--seed", "4"
    ) as url:
        info = parse_info_reply((await send(url, "( INFO )")).body)
        assert (info.name, info.status) == ("Dice", "available")
        assert len(await play_out(url, "left", "p.1")) == 3


async def test_ggp_player_serves_a_bundled_player():
    if not GGP.exists():
        pytest.skip("the ggp command is not installed next to this Python")
    async with player_process(str(GGP), "player", "legal", "--port", "0") as url:
        assert parse_info_reply((await send(url, "( INFO )")).body).name == "Legal"
        assert await play_out(url, "right", "p.2") == ["noop", "tick", "noop"]


async def test_an_unknown_player_name_is_refused_with_the_known_names():
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "players",
        "nosuchplayer",
        "--port",
        "0",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    stdout, stderr = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 2
    assert stdout == b""
    assert (
        b"unknown player 'nosuchplayer'" in stderr and b"legal, mcts, montecarlo, random" in stderr
    )


def test_the_registry_knows_the_bundled_players():
    assert {"random", "legal"} <= set(player_names())
    assert create_player("random", display_name="R2").name == "R2"
    assert create_player("legal").name == "Legal"
    first = create_player("random", seed=7).rng.random()
    assert first == create_player("random", seed=7).rng.random()
