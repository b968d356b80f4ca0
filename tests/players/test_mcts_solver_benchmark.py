"""The solver against plain UCT on generated endgames (``benchmarks/mcts_solver.py``).

connectFour comes from the shared corpus (``../shared``); the test skips when it is absent.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

from players.mcts.model import model_of
from players.mcts.search import Search
from server.gdl import Game

ROOT = Path(__file__).resolve().parents[2]
CONNECT_FOUR = ROOT.parent / "shared" / "conformance" / "games" / "connectFour.kif"
sys.path.insert(0, str(ROOT / "benchmarks"))

from mcts_solver import Position, endgames  # noqa: E402


def chosen_right(game: Game, position: Position, iterations: int, *, solver: bool) -> bool:
    model = model_of(game)
    tree = Search(model, random.Random(7), solver=solver)
    root = tree.set_root(position.key)
    tree.run(iterations=iterations)
    if solver and position.kind == "win":
        assert tree.finished, "a forced win in at most 3 plies was not proven"
    move = tree.best_move(position.mover)
    return list(root.legal[position.mover]).index(move) in position.right


@pytest.mark.skipif(not CONNECT_FOUR.is_file(), reason="the shared corpus (../shared) is absent")
def test_the_solver_takes_every_short_forced_win_and_uct_does_no_better() -> None:
    game = Game.from_file(CONNECT_FOUR)
    model = model_of(game)
    positions = endgames(
        model, model.key(game.initial_state()), count=8, seed="test", depth=3, back=4
    )
    short = [p for p in positions if p.kind == "defend" or (p.win_plies or 0) <= 3]
    assert sum(p.kind == "win" for p in short) >= 3
    solver = [chosen_right(game, p, 300, solver=True) for p in short]
    uct = [chosen_right(game, p, 300, solver=False) for p in short]
    assert all(right for right, p in zip(solver, short, strict=True) if p.kind == "win")
    assert sum(solver) >= sum(uct)
