"""Random playouts of every bundled game: each one ends, and ends with a goal for every role.

ticTacHeaven may go on forever (noop is always legal), so its playouts stop at a step
limit of 500, where the rules still give every role a goal.
"""

from __future__ import annotations

import random

import pytest

from server.games import list_games, load_game

STEP_LIMIT = {"ticTacHeaven": 500}
SEEDS = range(3)


@pytest.mark.parametrize("name", [info.name for info in list_games()])
@pytest.mark.parametrize("seed", SEEDS)
def test_a_random_playout_ends_with_goals_for_every_role(name, seed):
    game = load_game(name)
    rng = random.Random(seed)
    state = game.initial_state()
    steps = 0
    while not game.is_terminal(state) and steps < STEP_LIMIT.get(name, 81 * 2):
        legal = {role: game.legal_moves(state, role) for role in game.roles}
        assert all(legal.values()), f"a role has no legal move at step {steps}"
        state = game.next_state(state, [rng.choice(legal[role]) for role in game.roles])
        steps += 1
    if name not in STEP_LIMIT:
        assert game.is_terminal(state)
    goals = game.goals(state)
    assert list(goals) == game.roles
    assert all(0 <= value <= 100 for value in goals.values())
    if game.is_terminal(state):
        assert sum(goals.values()) == 100
