"""Stored matches and players as the tournament core reads them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from server.league.driver import planned_of, player_status
from server.league.results import match_result
from server.store import MatchRow, MatchStatus, PlayerRecord


def stored_match(**changes: Any) -> MatchRow:
    fields: dict[str, Any] = {
        "id": "ggp.g.1",
        "game_name": "g",
        "game_version": 1,
        "status": MatchStatus.FINISHED,
        "players": ["a", "b"],
        "start_clock": 5,
        "play_clock": 2,
        "policy": "random",
        "config": {},
        "tournament_id": "t1",
        "schedule_key": "2/1/0/1-0",
        "requeued_from": None,
        "queued_at": 1_000,
        "started_at": 2_000,
        "finished_at": 1_700_000_000_500,
        "end_reason": "terminal",
        "end_message": None,
        "goals": [100, 0],
    }
    return MatchRow.model_validate({**fields, **changes})


@dataclass
class Step:
    errors: list[str]
    response_times: list[int | None]


def test_a_result_counts_errors_by_kind_and_keeps_the_times_that_came() -> None:
    steps = [
        Step(["", ""], [12, None]),  # START: the second player never answered
        Step(["IL ( mark 1 1 )", "TO"], [30, None]),
        Step(["CE", "XX", "extra"], [None, 40, 99]),  # an unknown code and a third column
    ]

    result = match_result(stored_match(), steps, ["white", "black"])

    assert result.key == "2/1/0/1-0" and result.game == "g"
    assert (result.players, result.roles, result.goals) == (
        ["a", "b"],
        ["white", "black"],
        [100, 0],
    )
    assert result.errors == [{"IL": 1, "CE": 1}, {"TO": 1}]
    assert result.response_times_ms == [[12.0, 30.0], [40.0]]
    assert result.steps == 2 and not result.aborted_by_server
    assert result.finished_at == datetime(2023, 11, 14, 22, 13, 20, 500_000, tzinfo=UTC)


def test_an_aborted_match_counts_for_nothing_with_goals_of_zero() -> None:
    aborted = stored_match(status=MatchStatus.ABORTED, goals=None, finished_at=None)

    result = match_result(aborted, [], ["white"])  # roles that do not fit are left out

    assert result.aborted_by_server
    assert (result.goals, result.roles, result.steps, result.finished_at) == ([0, 0], [], 0, None)
    assert match_result(stored_match(goals=[100]), [], []).goals == [0, 0]  # goals that do not fit


def test_a_player_the_registry_does_not_know_or_has_suspended_has_failed() -> None:
    player = PlayerRecord.model_validate(
        {
            "name": "a",
            "url": "http://127.0.0.1:9/",
            "status": "available",
            "failures": 0,
            "suspended": True,
            "suspended_reason": None,
            "max_matches": 3,
            "created_at": 0,
            "owner": None,
            "contact": "",
            "notes": "",
            "last_ping_at": None,
            "last_reply": None,
            "latency_ms": None,
        }
    )

    assert player_status(None, cleared=False).failed == "not registered"
    assert player_status(player, cleared=False).failed == "suspended: no reason given"
    assert player_status(player, cleared=True).failed is None  # an operator cleared it
    assert player_status(player, cleared=False).capacity == 3
    unsuspended = player.model_copy(update={"suspended": False})
    assert player_status(unsuspended, False, "could not join 2 matches").failed == (
        "could not join 2 matches"
    )


def test_an_active_match_is_placed_in_the_schedule_by_its_key() -> None:
    planned = planned_of(stored_match(status=MatchStatus.RUNNING, schedule_key="3/2/1/0-1#2"))
    assert (planned.key, planned.round, planned.table, planned.game_index) == (
        "3/2/1/0-1#2",
        3,
        2,
        1,
    )
    assert (planned.players, planned.startclock, planned.playclock) == (["a", "b"], 5, 2)
    odd = planned_of(stored_match(schedule_key=None, players=["a", None]))
    assert (odd.key, odd.round, odd.table, odd.game_index) == ("ggp.g.1", 0, 0, 0)
    assert odd.players == ["a", ""]
