"""``mcts`` as a bundled player in a full match, started as ``ggp match`` starts it."""

from __future__ import annotations

import pytest

from server.games import load_game
from server.match import MatchConfig, MatchRunner, Player
from server.match.local_players import local_players


async def test_mcts_plays_a_whole_match_against_random(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GGP_MCTS_ITERATIONS", "200")  # the child process reads it
    game = load_game("double_tictactoe_dengji")
    config = MatchConfig(start_clock=10, play_clock=2, network_slack=1.0, seed=5)
    async with local_players(["mcts", "random"], seed=1) as urls:
        players = [Player("mcts", urls[0]), Player("random", urls[1])]
        record = await MatchRunner(game, players, config).run()
    assert record.is_completed
    assert record.errors == [["", ""]] * (len(record.moves) + 1)
    assert record.goal_values is not None and record.goal_values[0] >= 50
