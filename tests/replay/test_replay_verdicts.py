"""The one-line verdict of a replay, word for word, for every way a log can end."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from server.replay import Outcome, replay_file

Record = dict[str, Any]
MATCH = "remote.ticTacToe.1700000000000"


def test_a_completed_match_names_its_steps_and_goals(
    other_server_record: Record, write_log: Callable[[Record], Path]
) -> None:
    replay = replay_file(write_log(other_server_record))

    assert replay.verdict() == (
        f"OK: {MATCH} replays: 5 steps, every move legal, every state and the goals "
        "(100 0) match the rules"
    )


def test_a_log_cut_short_is_unfinished(
    other_server_record: Record, write_log: Callable[[Record], Path]
) -> None:
    record = other_server_record
    for key in ("moves",):
        record[key] = record[key][:1]
    for key in ("states", "stateTimes", "errors"):
        record[key] = record[key][:2]
    record.update(isCompleted=False)
    del record["goalValues"]

    replay = replay_file(write_log(record))

    assert replay.outcome is Outcome.UNFINISHED
    assert replay.verdict() == (
        f"OK (unfinished after 1 step: the log ends before a terminal state): {MATCH} "
        "replays as far as it goes, every move legal and every state matches the rules"
    )


def test_a_finished_game_without_goals_says_so(
    other_server_record: Record, write_log: Callable[[Record], Path]
) -> None:
    other_server_record.update(isCompleted=False)
    del other_server_record["goalValues"]

    replay = replay_file(write_log(other_server_record))

    assert replay.verdict() == (
        f"OK (unfinished after 5 steps: the last state is terminal but no goals were "
        f"recorded): {MATCH} replays as far as it goes, every move legal and every state "
        "matches the rules"
    )


def test_an_aborted_match_replays_as_far_as_it_goes(
    other_server_record: Record, write_log: Callable[[Record], Path]
) -> None:
    record = other_server_record
    record["moves"] = record["moves"][:2]
    for key in ("states", "stateTimes", "errors"):
        record[key] = record[key][:3]
    record.update(isCompleted=False, isAborted=True)
    del record["goalValues"]

    replay = replay_file(write_log(record))

    assert replay.verdict() == (
        f"OK (aborted after 2 steps): {MATCH} replays as far as it goes, every move legal "
        "and every state matches the rules; no goals recorded"
    )


def test_a_mismatch_names_the_first_problem(
    other_server_record: Record, write_log: Callable[[Record], Path]
) -> None:
    other_server_record["goalValues"] = [0, 100]

    replay = replay_file(write_log(other_server_record))

    assert replay.verdict() == (
        f"MISMATCH in {MATCH} at step 5 (goals): xplayer: recorded 0, the rules give 100; "
        "oplayer: recorded 100, the rules give 0"
    )


def test_a_mismatch_counts_the_problems_after_the_first(
    other_server_record: Record, write_log: Callable[[Record], Path]
) -> None:
    other_server_record["states"][2] = other_server_record["states"][1]
    other_server_record["goalValues"] = [0, 100]

    replay = replay_file(write_log(other_server_record))

    assert replay.verdict().startswith(
        f"MISMATCH in {MATCH} at step 2: the recorded state is not the rules' state: "
    )
    assert replay.verdict().endswith(" (1 more problem)")
