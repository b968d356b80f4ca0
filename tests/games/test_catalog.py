"""The bundled games: metadata, loading by name or path, and clear errors."""

from __future__ import annotations

import pytest

from server.games import (
    GameInfo,
    UnknownGameError,
    game_info,
    game_text,
    is_bundled,
    list_games,
    load_game,
)
from server.gdl import Game

SEED_GAMES = [
    "ticTacHeaven",
    "tictactoex9",
    "nineBoardTicTacToe",
    "nineBoardTicTacToePie",
    "double_tictactoe_dengji",
]


def test_the_five_seed_games_are_bundled_under_their_ggp_org_names_in_seed_order():
    assert [info.name for info in list_games()] == SEED_GAMES


@pytest.mark.parametrize("name", SEED_GAMES)
def test_each_game_passes_the_gdl_validator(name):
    game = Game.from_text(game_text(name), validate=True)
    assert game.roles


@pytest.mark.parametrize("name", SEED_GAMES)
def test_the_metadata_agrees_with_the_rules(name):
    info = game_info(name)
    assert isinstance(info, GameInfo)
    assert info.roles == load_game(name).roles
    assert info.title and info.description
    assert 0 < info.play_clock <= info.start_clock
    assert info.file == f"{name}.kif"


def test_roles_are_kept_exactly_as_the_issue_names_them():
    roles = {info.name: info.roles for info in list_games()}
    assert roles == {
        "ticTacHeaven": ["xplayer", "oplayer"],
        "tictactoex9": ["xplayer", "oplayer"],
        "nineBoardTicTacToe": ["xPlayer", "oPlayer"],
        "nineBoardTicTacToePie": ["red", "blue"],
        "double_tictactoe_dengji": ["xplayer", "oplayer"],
    }


def test_a_game_loads_from_any_kif_path_as_well_as_by_name(tmp_path):
    path = tmp_path / "copy of nine boards.kif"
    path.write_text(game_text("nineBoardTicTacToe"), encoding="utf-8")
    from_path, by_name = load_game(path), load_game("nineBoardTicTacToe")
    assert from_path.roles == by_name.roles
    assert from_path.initial_state() == by_name.initial_state()
    assert load_game(str(path)).roles == by_name.roles


def test_options_reach_the_game():
    assert load_game("tictactoex9", engine="interpreter").engine.name == "interpreter"


def test_an_unknown_name_is_refused_with_the_list_of_known_games():
    with pytest.raises(UnknownGameError) as refused:
        load_game("nineBoardTicTacToo")
    message = str(refused.value)
    assert "nineBoardTicTacToo" in message
    assert all(name in message for name in SEED_GAMES)
    with pytest.raises(UnknownGameError):
        game_text("chess")
    with pytest.raises(LookupError):
        game_info("chess")
    assert not is_bundled("chess")


def test_a_missing_file_is_refused_with_its_path(tmp_path):
    missing = tmp_path / "nowhere.kif"
    with pytest.raises(FileNotFoundError, match="nowhere.kif"):
        load_game(missing)
    with pytest.raises(FileNotFoundError, match="nowhere.kif"):
        load_game(str(missing))
    with pytest.raises(FileNotFoundError):
        load_game(str(tmp_path))
