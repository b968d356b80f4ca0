"""Each bundled game replays its recorded playthrough line for line (see playthrough.py)."""

from __future__ import annotations

import pytest

from server.games import list_games

from .playthrough import SETTINGS, path_of, read, render

NAMES = [info.name for info in list_games()]


def test_every_bundled_game_has_a_playthrough():
    assert sorted(SETTINGS) == sorted(NAMES)
    assert all(path_of(name).exists() for name in NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_the_recorded_playthrough_replays_exactly(name):
    recorded = path_of(name).read_text(encoding="utf-8")
    game_name, seed, limit, moves = read(recorded)
    assert (game_name, seed, limit) == (name, *SETTINGS[name])
    replayed = render(name, seed, limit, moves)
    for number, (want, got) in enumerate(
        zip(recorded.splitlines(), replayed.splitlines(), strict=False), 1
    ):
        assert got == want, (
            f"{path_of(name).name} line {number} differs; if the change is intended, "
            f"run: python -m tests.games.regenerate {name}"
        )
    assert replayed == recorded


@pytest.mark.parametrize("name", NAMES)
def test_the_playthrough_ends_with_goals_for_every_role(name):
    recorded = path_of(name).read_text(encoding="utf-8")
    last_goals = [line for line in recorded.splitlines() if line.startswith("goals: ")][-1]
    roles = [line for line in recorded.splitlines() if line.startswith("roles: ")][0].split()[1:]
    assert [pair.split("=")[0] for pair in last_goals.split()[1:]] == roles
