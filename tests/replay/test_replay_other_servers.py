"""Logs written by other GGP servers in the ggp.org match format replay here."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from replay_paths import OTHER_SERVER_LOG
from shared_material import shared_path

from server.cli import main
from server.replay import Outcome, replay_file


def test_a_foreign_log_with_embedded_rules_replays() -> None:
    replay = replay_file(OTHER_SERVER_LOG)

    assert replay.ok, replay.problems
    assert replay.outcome is Outcome.COMPLETED
    assert replay.rules_source == "rules embedded in the log (gameRulesheet)"
    assert len(replay.steps) == 6  # the initial state and five moves
    assert replay.rule_goals == [100, 0]


def test_check_prints_one_verdict_line_and_exits_zero(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["replay", "--check", str(OTHER_SERVER_LOG)]) == 0

    out = capsys.readouterr().out
    assert out == (
        "OK: remote.ticTacToe.1700000000000 replays: 5 steps, every move legal, "
        "every state and the goals (100 0) match the rules\n"
    )


def test_rules_given_as_a_list_of_rule_texts_are_read_too(
    other_server_record: dict[str, Any], write_log: Callable[[dict[str, Any]], Path]
) -> None:
    rules = other_server_record.pop("gameRulesheet")
    other_server_record["rules"] = rules.splitlines()

    replay = replay_file(write_log(other_server_record))

    assert replay.ok, replay.problems
    assert replay.rules_source == "rules embedded in the log (rules)"


def _compact_and_reversed(state: str) -> str:
    """``( ( a 1 ) ( b 2 ) )`` printed as ``((b 2) (a 1))``."""
    facts = re.findall(r"\( ([^()]*) \)", state)
    return "(" + " ".join(f"({fact})" for fact in reversed(facts)) + ")"


def test_key_order_fact_order_and_spacing_do_not_matter(
    other_server_record: dict[str, Any], write_log: Callable[[dict[str, Any]], Path]
) -> None:
    reordered = dict(sorted(other_server_record.items()))
    reordered["states"] = [_compact_and_reversed(state) for state in reordered["states"]]
    assert reordered["states"][0].startswith("((cell 2 1 b) (cell 3 1 b) ")

    replay = replay_file(write_log(reordered))

    assert replay.ok, replay.problems


def _shared_log(name: str) -> Path:
    return shared_path("protocol", name)


@pytest.mark.parametrize(
    ("name", "outcome", "steps"),
    [
        ("ttt-match.json", Outcome.COMPLETED, 7),
        ("scrambled-match.json", Outcome.COMPLETED, 6),
        ("faults2-match.json", Outcome.COMPLETED, 7),
        ("abort-match.json", Outcome.ABORTED, 1),
    ],
)
def test_ggp_base_tic_tac_toe_logs_replay_against_the_rules_file(
    name: str, outcome: Outcome, steps: int
) -> None:
    log = _shared_log(name)
    tic_tac_toe = shared_path("conformance", "games", "ticTacToe.kif")

    replay = replay_file(log, game=str(tic_tac_toe))

    assert replay.ok, replay.problems
    assert replay.outcome is outcome
    assert replay.recorded_steps == steps


@pytest.mark.parametrize("name", ["nineboard-match.json", "faults-match.json"])
def test_ggp_base_nine_board_logs_find_the_bundled_game_by_their_meta_url(name: str) -> None:
    log = _shared_log(name)

    replay = replay_file(log)

    assert replay.ok, replay.problems
    assert replay.rules_source.startswith("bundled game nineBoardTicTacToe (gameMetaURL ")


def test_an_aborted_ggp_base_log_says_so_in_its_verdict(
    capsys: pytest.CaptureFixture[str],
) -> None:
    log = _shared_log("abort-match.json")
    tic_tac_toe = shared_path("conformance", "games", "ticTacToe.kif")

    assert main(["replay", "--check", str(log), "--game", str(tic_tac_toe)]) == 0

    assert capsys.readouterr().out.startswith("OK (aborted after 1 step): abort.ticTacToe.1 ")


def test_the_faults_log_shows_every_recorded_player_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    log = _shared_log("faults-match.json")

    assert main(["replay", str(log)]) == 0

    out = capsys.readouterr().out
    assert "player errors: xPlayer IL ( play 9 9 9 9 x )" in out
    assert "Player errors: xPlayer 6 IL, 1 TO, 2 CE" in out
    assert json.loads(log.read_text())["matchId"] in out
