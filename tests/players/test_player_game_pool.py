"""A player keeps the games it loaded: a later match of the same rules skips compiling
them, and a game serves one match at a time."""

from __future__ import annotations

import asyncio
import threading

from player_http import TICKING_RULES, Remembering, send, start_message

from players.agent import PlayerAgent
from players.game_pool import GamePool
from players.match import PlayerMatch
from players.serve import running

OTHER_RULES = TICKING_RULES.replace("(goal ?r 50)", "(goal ?r 40)")


async def _idle_games(agent: PlayerAgent, count: int) -> int:
    """The agent's idle games, once ``count`` are there (a thread ending settles on the
    event loop just after the reply) or after 2 s."""
    for _ in range(100):
        if len(agent.games) >= count:
            break
        await asyncio.sleep(0.02)
    return len(agent.games)


async def _play_out(url: str, match_id: str) -> None:
    assert (await send(url, f"( PLAY {match_id} NIL )")).body
    assert (await send(url, f"( STOP {match_id} (tick noop) )")).body == "done"


async def test_a_later_match_of_the_same_rules_gets_the_game_loaded_before() -> None:
    player = Remembering()
    agent = PlayerAgent(player, max_matches=4)
    async with running(agent) as url:
        assert (await send(url, start_message("m.1", "left"))).body == "ready"
        await _play_out(url, "m.1")
        assert await _idle_games(agent, 1) == 1  # back in the pool once the match ended
        assert (await send(url, start_message("m.2", "right"))).body == "ready"
        assert player.games["m.2"] is player.games["m.1"]
        assert len(agent.games) == 0  # lent out again
        other = start_message("m.3", "left").replace(TICKING_RULES, OTHER_RULES)
        assert (await send(url, other)).body == "ready"
        assert player.games["m.3"] is not player.games["m.1"]  # other rules, loaded anew
        slower = start_message("m.4", "left", start_clock=60)
        assert (await send(url, slower)).body == "ready"
        assert player.games["m.4"] is not player.games["m.1"]  # another compile budget


async def test_matches_at_once_never_share_a_game() -> None:
    player = Remembering()
    agent = PlayerAgent(player, max_matches=3)
    async with running(agent) as url:
        for match_id in ("a", "b", "c"):
            assert (await send(url, start_message(match_id, "left"))).body == "ready"
        assert len({id(game) for game in player.games.values()}) == 3
        for match_id in ("a", "b", "c"):
            await _play_out(url, match_id)
        assert await _idle_games(agent, 3) == 3
        assert (await send(url, start_message("d", "left"))).body == "ready"
        assert any(player.games["d"] is player.games[earlier] for earlier in "abc")


async def test_a_game_still_in_use_after_the_match_ended_is_not_lent_again() -> None:
    release = threading.Event()

    class Lingering(Remembering):
        def stop(self, match: PlayerMatch) -> None:
            release.wait(10)  # still thinking with the game after STOP was answered

    player = Lingering()
    agent = PlayerAgent(player, max_matches=2)
    async with running(agent) as url:
        assert (await send(url, start_message("m.1", "left", play_clock=1))).body == "ready"
        await _play_out(url, "m.1")  # answered at the deadline; stop() runs on
        assert len(agent.games) == 0
        assert (await send(url, start_message("m.2", "left"))).body == "ready"
        assert player.games["m.2"] is not player.games["m.1"]
        assert await _idle_games(agent, 1) == 0
        release.set()
        assert await _idle_games(agent, 1) == 1  # back once stop() returned


def test_the_pool_keeps_a_few_idle_games_of_the_rules_used_last() -> None:
    pool = GamePool(idle_per_rules=2, rules_kept=2)
    games = [object() for _ in range(5)]
    for game in games[:3]:
        pool.give_back("a", game)  # type: ignore[arg-type]
    assert len(pool) == 2  # the third is dropped
    pool.give_back("b", games[3])  # type: ignore[arg-type]
    assert pool.take("a") is games[1]
    pool.give_back("c", games[4])  # type: ignore[arg-type]  # "b" was used longest ago
    assert pool.take("b") is None
    assert pool.take("c") is games[4] and pool.take("c") is None
    assert pool.take("a") is games[0] and pool.take("a") is None
