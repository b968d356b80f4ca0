"""A player asked to compile aside plays a game its start clock could not compile on
the interpreter at once, and on the compiled engine once another process made it."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys

import pytest
from player_http import Remembering, send, start_message

from players.agent import PlayerAgent
from players.mcts import MctsPlayer
from players.mcts.model import CompiledModel, InterpretedModel
from players.mcts.player import MEMORY_KEY
from players.serve import running
from server.gdl.game import forget_compiled_engines, forget_failed_compiles


@pytest.fixture(autouse=True)
def over_the_start_clocks_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    """A rule cap the ticking game is over: its set-up falls back to the interpreter."""
    monkeypatch.setenv("GGP_COMPILE_MAX_RULES", "5")
    monkeypatch.delenv("GGP_COMPILE_ASIDE", raising=False)
    forget_failed_compiles()
    forget_compiled_engines()


@pytest.mark.parametrize("compile_aside", [True, False])
async def test_a_player_switches_to_the_engine_compiled_aside_when_asked_to(
    compile_aside: bool,
) -> None:
    player = Remembering()
    agent = PlayerAgent(player, compile_aside=compile_aside)
    async with running(agent) as url:
        assert (await send(url, start_message("m.1", "left"))).body == "ready"
        game = player.games["m.1"]
        assert game.engine.name == "interpreter"
        assert "more than 5 ground rules" in (game.fallback_reason or "")
        if not compile_aside:
            assert game.compile_aside is None
        else:
            assert game.compile_aside is not None
            ended = await asyncio.get_running_loop().run_in_executor(
                None, game.compile_aside.wait, 120
            )
            assert ended and game.engine.name == "compiled"
        assert (await send(url, "( PLAY m.1 NIL )")).body == "tick"  # the first legal move
        assert (await send(url, "( PLAY m.1 (tick noop) )")).body == "noop"
        assert (await send(url, "( STOP m.1 (noop tick) )")).body == "done"


async def test_a_search_player_asks_for_it_and_searches_on_the_compiled_engine_after() -> None:
    agent = PlayerAgent(MctsPlayer(seed=1, iterations=40))
    async with running(agent) as url:
        assert (await send(url, start_message("m.2", "left"))).body == "ready"
        match = agent.matches["m.2"]
        assert match.memory[MEMORY_KEY].search.model.__class__ is InterpretedModel
        aside = match.game.compile_aside
        assert aside is not None  # no flag, no environment: the player asked for it
        ended = await asyncio.get_running_loop().run_in_executor(None, aside.wait, 120)
        assert ended and match.game.engine.name == "compiled"
        assert (await send(url, "( PLAY m.2 NIL )")).body in ("tick", "tock")
        assert match.memory[MEMORY_KEY].search.model.__class__ is CompiledModel


async def test_the_environment_says_no_over_what_the_player_wants(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("GGP_COMPILE_ASIDE", "0")
    agent = PlayerAgent(MctsPlayer(seed=1, iterations=40))
    async with running(agent) as url:
        assert (await send(url, start_message("m.3", "left"))).body == "ready"
        assert agent.matches["m.3"].game.compile_aside is None


def test_a_player_command_refuses_a_compile_aside_setting_it_cannot_read() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "players", "random", "--port", "0"],
        env={**os.environ, "GGP_COMPILE_ASIDE": "maybe"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stderr.strip().endswith(
        "GGP_COMPILE_ASIDE is 'maybe'; use 1, true, yes or on "
        "to compile aside, 0, false, no or off not to"
    )
    assert "Traceback" not in done.stderr
