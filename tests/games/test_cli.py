"""``ggp games`` lists the bundled games; ``ggp games show NAME`` prints one's GDL text only."""

from __future__ import annotations

import subprocess
import sys

import pytest

from server.cli import main
from server.games import game_info, game_text, list_games
from server.gdl import Game, parse_gdl


def run_ggp(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "server.cli", *args], capture_output=True, text=True, timeout=60
    )


def test_games_lists_every_bundled_game_with_its_title_and_roles(capsys):
    assert main(["games"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:3] == ["NAME", "TITLE", "ROLES"]
    for info, line in zip(list_games(), lines[1:], strict=True):
        assert line.startswith(info.name + " ")
        assert info.title in line
        assert ", ".join(info.roles) in line
        assert f"{info.start_clock}/{info.play_clock}" in line


@pytest.mark.parametrize("name", ["nineBoardTicTacToe", "double_tictactoe_dengji"])
def test_games_show_prints_the_gdl_text_and_nothing_else(name):
    shown = run_ggp("games", "show", name)
    assert shown.returncode == 0
    assert shown.stderr == ""
    assert shown.stdout == game_text(name)


@pytest.mark.parametrize("name", [info.name for info in list_games()])
def test_games_show_output_parses_back_as_the_same_rules(name, capsys):
    assert main(["games", "show", name]) == 0
    shown = capsys.readouterr().out
    rules = [str(rule) for rule in parse_gdl(shown)]
    assert rules == [str(rule) for rule in Game.from_text(game_text(name)).rules]
    assert Game.from_text(shown).roles == game_info(name).roles


def test_games_show_refuses_an_unknown_name_on_stderr():
    shown = run_ggp("games", "show", "tictactoe9x")
    assert shown.returncode == 2
    assert shown.stdout == ""
    assert "unknown game 'tictactoe9x'" in shown.stderr
    assert "tictactoex9" in shown.stderr
