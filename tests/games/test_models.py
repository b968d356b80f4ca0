"""The GDL of each seed game agrees with a plain-Python model of its rules (models.py).

Random games are played through both; at every step the legal moves of every role,
termination and the defined goals must be the same.
"""

from __future__ import annotations

import random

import pytest

from .models import MODELS
from .positions import game

GAMES_PER_RULESET = 40
STEP_LIMIT = 200


@pytest.mark.parametrize("name", list(MODELS))
def test_the_rules_agree_with_the_model_over_random_games(name):
    rules, model = game(name), MODELS[name]
    assert rules.roles == model.roles
    for seed in range(GAMES_PER_RULESET):
        rng = random.Random(seed)
        state, mirror = rules.initial_state(), model.initial()
        for step in range(STEP_LIMIT):
            where = f"{name}, game {seed}, step {step}"
            legal = {role: {str(m) for m in rules.legal_moves(state, role)} for role in rules.roles}
            assert legal == {role: model.legal(mirror, role) for role in rules.roles}, where
            assert rules.is_terminal(state) == model.terminal(mirror), where
            assert rules.defined_goals(state) == model.goals(mirror), where
            if rules.is_terminal(state):
                break
            joint = [rng.choice(sorted(legal[role])) for role in rules.roles]
            state, mirror = rules.next_state(state, joint), model.apply(mirror, joint)
