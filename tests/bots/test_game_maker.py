"""The checker's games: new symbols and sizes per seed, always valid and always ending."""

from __future__ import annotations

import random

from server.bots.game_maker import PLAIN_NAMES, make_game
from server.gdl.parser import KEYWORDS


def play_out(seed: int) -> tuple[int, dict[str, int]]:
    game = make_game(seed).game
    rng, state, steps = random.Random(seed), game.initial_state(), 0
    while not game.is_terminal(state):
        state = game.next_state(state, [rng.choice(game.legal_moves(state, r)) for r in game.roles])
        steps += 1
    return steps, game.goals(state)


def test_every_seed_gives_a_short_game_with_a_goal_for_every_role() -> None:
    for seed in range(20):
        steps, goals = play_out(seed)
        assert 3 <= steps <= 4
        assert sorted(goals.values()) in ([0, 100], [50, 50])


def test_the_same_seed_gives_the_same_game_and_another_seed_new_symbols() -> None:
    assert make_game(7).text == make_game(7).text
    first, second = make_game(7).text, make_game(8).text
    words = {word.strip("()") for word in first.split()} - KEYWORDS
    assert not words & set(PLAIN_NAMES.values())
    assert words - {word.strip("()") for word in second.split()}


def test_the_readable_version_keeps_plain_names() -> None:
    made = make_game(7, fresh=False)
    assert "(legal ?r (claim ?c))" in made.text
    assert made.game.roles == [made.text.split()[1].strip(")"), made.text.split()[3].strip(")")]
