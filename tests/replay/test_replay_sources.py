"""Where the rules of a log come from: the user, the log itself, or a bundled game it names."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from server.cli import main
from server.records import MatchRecord
from server.replay import (
    ResolvedGames,
    RulesNotFound,
    game_name_from_meta_url,
    replay_file,
    replay_record,
    resolve_game,
)

Record = dict[str, Any]


@pytest.mark.parametrize(
    ("url", "name"),
    [
        ("http://games.ggp.org/base/games/nineBoardTicTacToe/v0/", "nineBoardTicTacToe"),
        ("http://games.ggp.org/base/games/ticTacToe/v1", "ticTacToe"),
        ("https://example.org/repo/games/connectFour/", "connectFour"),
        ("http://example.org/not-a-game-repository/", None),
    ],
)
def test_the_game_is_read_from_a_ggp_org_repository_url(url: str, name: str | None) -> None:
    assert game_name_from_meta_url(url) == name


def test_a_rules_file_given_by_the_user_comes_first(
    tmp_path: Path, other_server_record: Record, write_log: Callable[[Record], Path]
) -> None:
    rules = tmp_path / "my-tictactoe.kif"
    rules.write_text(other_server_record["gameRulesheet"])

    replay = replay_file(write_log(other_server_record), game=str(rules))

    assert replay.ok
    assert replay.rules_source == f"--game {rules}"


def test_a_bundled_game_named_in_the_log_is_used() -> None:
    resolved = resolve_game({"gameName": "nineBoardTicTacToe"})

    assert resolved.game.roles == ["xPlayer", "oPlayer"]
    assert resolved.source == "bundled game nineBoardTicTacToe (gameName nineBoardTicTacToe)"


def test_a_game_name_that_is_not_bundled_falls_back_to_the_meta_url() -> None:
    resolved = resolve_game(
        {
            "gameName": "Nine Board Tic Tac Toe",
            "gameMetaURL": "http://games.ggp.org/base/games/nineBoardTicTacToe/v0/",
        }
    )

    assert resolved.source.startswith("bundled game nineBoardTicTacToe (gameMetaURL ")


def test_an_unknown_game_asks_for_its_rules(
    other_server_record: Record,
    write_log: Callable[[Record], Path],
    capsys: pytest.CaptureFixture[str],
) -> None:
    del other_server_record["gameRulesheet"]
    del other_server_record["gameName"]
    other_server_record["gameMetaURL"] = "http://games.ggp.org/base/games/ticTacToe/v0/"

    assert main(["replay", "--check", str(write_log(other_server_record))]) == 2

    error = capsys.readouterr().err
    assert "gameMetaURL http://games.ggp.org/base/games/ticTacToe/v0/" in error
    assert "pass its rules with --game FILE.kif" in error


def test_a_log_without_rules_or_a_game_asks_for_them() -> None:
    with pytest.raises(RulesNotFound, match="--game NAME_OR_KIF"):
        resolve_game({"matchId": "m"})


def test_embedded_rules_that_do_not_load_are_reported() -> None:
    with pytest.raises(RulesNotFound, match=r"embedded in the log \(gameRulesheet\) do not load"):
        resolve_game({"gameRulesheet": "(role x) (<= (legal x"})


def test_a_missing_rules_file_is_reported(tmp_path: Path) -> None:
    with pytest.raises(RulesNotFound, match="cannot load --game"):
        resolve_game({}, str(tmp_path / "absent.kif"))


def test_a_file_that_is_not_a_match_log_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "notes.json"
    log.write_text('["not", "a", "record"]')

    assert main(["replay", str(log)]) == 2
    assert "not a match log" in capsys.readouterr().err


def test_logs_replayed_one_after_another_share_the_game_their_rules_come_from(
    other_server_record: Record,
) -> None:
    """An archive's lines: the same embedded rules load once, whatever the match."""
    games = ResolvedGames()
    first = games.resolve(other_server_record)
    later = games.resolve({**other_server_record, "matchId": "remote.ticTacToe.2"})
    assert later is first
    assert replay_record(MatchRecord.model_validate(other_server_record), later.game).ok
    assert replay_record(MatchRecord.model_validate(other_server_record), later.game).ok
    by_name = {key: value for key, value in other_server_record.items() if key != "gameRulesheet"}
    by_name["gameName"] = "ticTacHeaven"
    assert games.resolve(by_name).game is not first.game
    assert games.resolve(other_server_record, game_option="ticTacHeaven").source == (
        "--game ticTacHeaven"
    )


def test_only_the_games_used_last_are_kept_and_a_broken_one_loads_anew(
    other_server_record: Record,
) -> None:
    games = ResolvedGames(kept=1)
    first = games.resolve(other_server_record)
    by_name = {key: value for key, value in other_server_record.items() if key != "gameRulesheet"}
    by_name["gameName"] = "ticTacHeaven"
    games.resolve(by_name)
    assert games.resolve(other_server_record) is not first  # dropped for the other game
    kept = games.resolve(other_server_record)
    games.discard(other_server_record)
    assert games.resolve(other_server_record) is not kept


def test_a_game_name_or_url_that_is_not_text_is_passed_over() -> None:
    """Liberal in what it reads: a log from another server with odd fields still resolves."""
    resolved = resolve_game(
        {"gameName": 5, "gameMetaURL": "http://games.ggp.org/base/games/ticTacHeaven/v0/"}
    )
    assert resolved.source.startswith("bundled game ticTacHeaven (gameMetaURL ")

    with pytest.raises(RulesNotFound, match="the log carries no rules and names no game"):
        resolve_game({"gameName": ["ticTacHeaven"], "gameMetaURL": 7})


def test_logs_naming_different_games_get_each_their_own_game() -> None:
    games = ResolvedGames(kept=2)
    nine = games.resolve({"gameName": "nineBoardTicTacToe"})
    heaven = games.resolve({"gameName": "ticTacHeaven"})

    assert heaven.game is not nine.game
    assert heaven.source == "bundled game ticTacHeaven (gameName ticTacHeaven)"
    assert games.resolve({"gameName": "nineBoardTicTacToe"}) is nine  # both kept
    assert games.resolve({"gameName": "ticTacHeaven"}) is heaven
