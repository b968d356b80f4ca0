"""Full matches over loopback HTTP between bundled player processes, on every bundled game."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator

import pytest

from server.games import list_games, load_game
from server.match import MatchConfig, MatchRunner, Player
from server.match.local_players import local_player, looks_like_url
from server.records import EndReason

QUICK = MatchConfig(start_clock=5, play_clock=1, network_slack=0.5, seed=3)


def _spawn(name: str) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        [sys.executable, "-m", "players", name, "--port", "0", "--seed", "1"],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    assert line.startswith("listening on "), line
    return process, line.split()[-1]


@pytest.fixture(scope="module")
def player_urls() -> Iterator[dict[str, str]]:
    """A random and a legal player process, shared by the matches of this module."""
    processes = {name: _spawn(name) for name in ("random", "legal")}
    yield {name: url for name, (_, url) in processes.items()}
    for process, _ in processes.values():
        process.terminate()
        process.wait(10)


@pytest.mark.parametrize("game_name", [info.name for info in list_games()])
async def test_random_plays_legal_to_the_end_without_errors(
    game_name: str, player_urls: dict[str, str]
) -> None:
    game = load_game(game_name)
    players = [Player("random", player_urls["random"]), Player("legal", player_urls["legal"])]
    record = await MatchRunner(game, players, QUICK, game_name=game_name).run()

    assert record.is_completed and not record.is_aborted
    assert record.end_reason in (EndReason.TERMINAL, EndReason.STEP_LIMIT)
    assert record.errors == [["", ""]] * (len(record.moves) + 1)
    assert record.stop_errors == [None, None]
    assert record.goal_values is not None and len(record.goal_values) == 2
    assert all(0 <= goal <= 100 for goal in record.goal_values)


async def test_a_bundled_player_is_started_on_a_free_port_and_stopped_afterwards() -> None:
    async with local_player("legal") as url:
        assert looks_like_url(url) and url.startswith("http://127.0.0.1:")
        game = load_game("double_tictactoe_dengji")
        async with local_player("random") as other:
            record = await MatchRunner(
                game, [Player("legal", url), Player("random", other)], QUICK
            ).run()
    assert record.is_completed and record.errors == [["", ""]] * (len(record.moves) + 1)


def test_urls_and_player_names_are_told_apart() -> None:
    assert looks_like_url("http://example.org:9147/")
    assert looks_like_url("127.0.0.1:9147")
    assert not looks_like_url("random")
    assert not looks_like_url("legal")
