"""A log that disagrees with its rules is caught, at the step where it first goes wrong.

The fixture is a five-step ticTacToe match: x plays (1 1), o (2 2), x (1 2), o (3 3),
x (1 3) and wins.  Step ``i`` is ``moves[i-1]`` and ``states[i]``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from server.cli import main
from server.replay import Outcome, ProblemKind, replay_file

Record = dict[str, Any]


def remove_step(record: Record, step: int) -> None:
    """Cut one whole step out of the log, consistently in every per-step list."""
    del record["moves"][step - 1]
    for field in ("states", "stateTimes", "errors"):
        del record[field][step]


@dataclass(frozen=True)
class Tamper:
    name: str
    change: Callable[[Record], None]
    step: int
    kind: ProblemKind
    says: str


def _set(path: tuple[Any, ...], value: Any) -> Callable[[Record], None]:
    def change(record: Record) -> None:
        target = record
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return change


def _replace_in_state(step: int, old: str, new: str) -> Callable[[Record], None]:
    def change(record: Record) -> None:
        assert old in record["states"][step]
        record["states"][step] = record["states"][step].replace(old, new)

    return change


def _append_step(record: Record) -> None:
    record["moves"].append(["noop", "( mark 3 1 )"])
    record["states"].append(record["states"][-1])
    record["stateTimes"].append(record["stateTimes"][-1] + 10)
    record["errors"].append(["", ""])


def _cut_last_step_but_stay_completed(record: Record) -> None:
    remove_step(record, 5)


TAMPERS = [
    Tamper(
        "a move changed to another legal move",
        _set(("moves", 2, 0), "( mark 2 1 )"),
        3,
        ProblemKind.STATE_MISMATCH,
        "missing (cell 1 2 b), (cell 2 1 x); not in the rules' state (cell 1 2 x), (cell 2 1 b)",
    ),
    Tamper(
        "a move changed to an illegal move",
        _set(("moves", 1, 1), "( mark 1 1 )"),
        2,
        ProblemKind.ILLEGAL_MOVE,
        "oplayer's move (mark 1 1) is not legal here",
    ),
    Tamper(
        "a goal changed",
        _set(("goalValues", 1), 50),
        5,
        ProblemKind.GOAL_MISMATCH,
        "oplayer: recorded 50, the rules give 0",
    ),
    Tamper(
        "a step removed",
        lambda record: remove_step(record, 3),
        3,
        ProblemKind.ILLEGAL_MOVE,
        "xplayer's move noop is not legal here",
    ),
    Tamper(
        "a recorded state changed",
        _replace_in_state(4, "( cell 3 3 o )", "( cell 3 3 b )"),
        4,
        ProblemKind.STATE_MISMATCH,
        "missing (cell 3 3 o); not in the rules' state (cell 3 3 b)",
    ),
    Tamper(
        "a fluent added to the initial state",
        _replace_in_state(0, "( control xplayer )", "( control xplayer ) ( control oplayer )"),
        0,
        ProblemKind.STATE_MISMATCH,
        "not in the rules' state (control oplayer)",
    ),
    Tamper(
        "a move after the end",
        _append_step,
        6,
        ProblemKind.MOVE_AFTER_TERMINAL,
        "after the rules ended the game at step 5",
    ),
    Tamper(
        "the last step cut off",
        _cut_last_step_but_stay_completed,
        4,
        ProblemKind.NOT_TERMINAL,
        "marked completed but the rules do not end the game here",
    ),
    Tamper(
        "a move missing from a joint move",
        _set(("moves", 0), ["( mark 1 1 )"]),
        1,
        ProblemKind.MOVE_COUNT,
        "1 moves recorded for 2 roles",
    ),
    Tamper(
        "a move that does not read",
        _set(("moves", 3, 1), "( mark 3 3"),
        4,
        ProblemKind.UNPARSABLE_MOVE,
        "oplayer's move '( mark 3 3' does not read",
    ),
    Tamper(
        "a state that does not read",
        _set(("states", 2), "( ( cell 1 1 x ) "),
        2,
        ProblemKind.MALFORMED,
        "the recorded state does not read",
    ),
    Tamper(
        "a state removed",
        lambda record: record["states"].pop(),
        5,
        ProblemKind.MALFORMED,
        "5 states recorded for 5 moves",
    ),
    Tamper(
        "every blank cell renamed",
        _replace_in_state(2, " b )", " z )"),
        2,
        ProblemKind.STATE_MISMATCH,
        "missing (cell 1 2 b), (cell 1 3 b), (cell 2 1 b), (cell 2 3 b), (cell 3 1 b), "
        "(cell 3 2 b) and 1 more; not in the rules' state (cell 1 2 z), (cell 1 3 z), "
        "(cell 2 1 z), (cell 2 3 z), (cell 3 1 z), (cell 3 2 z) and 1 more",
    ),
    Tamper(
        "every state removed",
        lambda record: record.update(states=[], stateTimes=[]),
        0,
        ProblemKind.MALFORMED,
        "0 states recorded for 5 moves (expected 6)",
    ),
    Tamper(
        "a state added",
        lambda record: (
            record["states"].append(record["states"][-1]),
            record["stateTimes"].append(record["stateTimes"][-1] + 10),
        ),
        6,
        ProblemKind.MALFORMED,
        "7 states recorded for 5 moves (expected 6)",
    ),
    Tamper(
        "two error lists added",
        lambda record: record["errors"].extend([["", ""], ["", ""]]),
        6,
        ProblemKind.MALFORMED,
        "8 error lists recorded for 5 moves (expected 6)",
    ),
    Tamper(
        "the last state time removed",
        lambda record: record["stateTimes"].pop(),
        5,
        ProblemKind.MALFORMED,
        "5 state times recorded for 6 states",
    ),
    Tamper(
        "the roles renamed",
        _set(("gameRoleNames",), ["white", "black"]),
        0,
        ProblemKind.ROLES,
        "the log names the roles white, black; the rules have xplayer, oplayer",
    ),
]


@pytest.mark.parametrize("tamper", TAMPERS, ids=[tamper.name for tamper in TAMPERS])
def test_the_first_bad_step_is_found(
    tamper: Tamper, other_server_record: Record, write_log: Callable[[Record], Path]
) -> None:
    tamper.change(other_server_record)

    replay = replay_file(write_log(other_server_record))

    first = replay.first_problem
    assert first is not None, "the change went unnoticed"
    assert (first.step, first.kind) == (tamper.step, tamper.kind), first
    assert tamper.says in first.message


@pytest.mark.parametrize("tamper", TAMPERS[:4], ids=[tamper.name for tamper in TAMPERS[:4]])
def test_check_names_the_first_bad_step_and_fails(
    tamper: Tamper,
    other_server_record: Record,
    write_log: Callable[[Record], Path],
    capsys: pytest.CaptureFixture[str],
) -> None:
    tamper.change(other_server_record)
    log = write_log(other_server_record)

    assert main(["replay", "--check", str(log)]) == 1

    out = capsys.readouterr().out
    assert out.startswith(f"MISMATCH in remote.ticTacToe.1700000000000 at step {tamper.step}")
    assert tamper.says in out
    assert out.count("\n") == 1


def test_a_changed_state_is_reported_once_and_replay_goes_on_from_the_rules(
    other_server_record: Record, write_log: Callable[[Record], Path]
) -> None:
    _replace_in_state(2, "( cell 2 2 o )", "( cell 2 2 x )")(other_server_record)

    replay = replay_file(write_log(other_server_record))

    assert [(problem.step, problem.kind) for problem in replay.problems] == [
        (2, ProblemKind.STATE_MISMATCH)
    ]
    assert len(replay.steps) == 6


def test_an_illegal_move_stops_the_replay_there(
    other_server_record: Record, write_log: Callable[[Record], Path]
) -> None:
    _set(("moves", 1, 1), "( mark 1 1 )")(other_server_record)

    replay = replay_file(write_log(other_server_record))

    assert replay.stopped_at == 2
    assert [step.number for step in replay.steps] == [0, 1]


def test_the_full_view_marks_the_bad_step(
    other_server_record: Record,
    write_log: Callable[[Record], Path],
    capsys: pytest.CaptureFixture[str],
) -> None:
    _set(("moves", 2, 0), "( mark 2 1 )")(other_server_record)

    assert main(["replay", str(write_log(other_server_record))]) == 1

    out = capsys.readouterr().out
    step_3 = out[out.index("Step 3:") : out.index("Step 4:")]
    assert "!! the recorded state is not the rules' state" in step_3
    assert out.rstrip().splitlines()[-1].startswith("MISMATCH in remote.ticTacToe")


def test_an_unfinished_log_replays_as_far_as_it_goes(
    other_server_record: Record,
    write_log: Callable[[Record], Path],
    capsys: pytest.CaptureFixture[str],
) -> None:
    remove_step(other_server_record, 5)
    remove_step(other_server_record, 4)
    other_server_record["isCompleted"] = False
    del other_server_record["goalValues"]

    log = write_log(other_server_record)
    replay = replay_file(log)
    assert main(["replay", "--check", str(log)]) == 0

    assert replay.ok and replay.outcome is Outcome.UNFINISHED
    assert capsys.readouterr().out.startswith(
        "OK (unfinished after 3 steps: the log ends before a terminal state): "
    )


def test_a_state_time_missing_at_the_end_leaves_the_last_step_untimed(
    other_server_record: Record, write_log: Callable[[Record], Path]
) -> None:
    times = other_server_record["stateTimes"]
    other_server_record["stateTimes"] = times[:-1]

    replay = replay_file(write_log(other_server_record))

    assert [step.elapsed_ms for step in replay.steps] == [
        None,
        *(later - earlier for earlier, later in zip(times[:4], times[1:5], strict=True)),
        None,
    ]
