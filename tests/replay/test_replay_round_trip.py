"""Round trips: a match is played and recorded, signed, replayed and verified; tampering
with the signed log is caught both by the replay (at the right step) and by the signature."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from server.games import game_text, load_game
from server.gdl.terms import to_ggp
from server.records import EndReason, MatchRecord, write_record
from server.records.signing import (
    VerificationStatus,
    sign_record_file,
    verify_record_file,
)
from server.replay import Outcome, ProblemKind, replay_file


def play_and_record(name: str, seed: int, folder: Path) -> Path:
    """Play a bundled game with random moves through the Game API and write its record."""
    game = load_game(name)
    chooser = random.Random(seed)
    roles = game.roles
    state = game.initial_state()
    clock = 1_800_000_000_000
    record = MatchRecord(
        match_id=f"roundtrip.{name}.{seed}",
        start_time=clock,
        start_clock=10,
        play_clock=5,
        game_name=name,
        game_rulesheet=game_text(name),
        game_role_names=roles,
        player_names_from_host=[f"Random{index}" for index in range(len(roles))],
        states=[state.to_ggp()],
        state_times=[clock],
        errors=[[""] * len(roles)],
        response_times=[[3] * len(roles)],
    )
    while not game.is_terminal(state):
        joint = [chooser.choice(game.legal_moves(state, role)) for role in roles]
        state = game.next_state(state, joint)
        clock += 250
        record.moves.append([to_ggp(move) for move in joint])
        record.states.append(state.to_ggp())
        record.state_times.append(clock)
        assert record.errors is not None and record.response_times is not None
        record.errors.append([""] * len(roles))
        record.response_times.append([chooser.randrange(1, 200) for _ in roles])
    goals = game.goals(state)
    record.goal_values = [goals[role] for role in roles]
    record.rule_goal_values = [goals[role] for role in roles]
    record.is_completed = True
    record.end_reason = EndReason.TERMINAL
    return write_record(folder / f"{record.match_id}.json", record)


@pytest.fixture(scope="module")
def key() -> Ed25519PrivateKey:
    return Ed25519PrivateKey.generate()


@pytest.fixture
def signed_log(tmp_path: Path, key: Ed25519PrivateKey) -> Path:
    path = play_and_record("nineBoardTicTacToe", 7, tmp_path)
    sign_record_file(path, key)
    return path


@pytest.mark.parametrize(("name", "seed"), [("nineBoardTicTacToe", 1), ("tictactoex9", 2)])
def test_a_recorded_match_replays_and_its_signature_verifies(
    tmp_path: Path, key: Ed25519PrivateKey, name: str, seed: int
) -> None:
    path = play_and_record(name, seed, tmp_path)
    sign_record_file(path, key)

    replay = replay_file(path)

    assert replay.ok, replay.problems
    assert replay.outcome is Outcome.COMPLETED
    assert replay.rules_source == "rules embedded in the log (gameRulesheet)"
    assert verify_record_file(path, key.public_key()).ok


def _edit(path: Path, change: Callable[[dict[str, Any]], None]) -> None:
    record = json.loads(path.read_text(encoding="utf-8"))
    change(record)
    path.write_text(json.dumps(record, indent=1), encoding="utf-8")


def _change_move_of_step_3(record: dict[str, Any]) -> None:
    record["moves"][2] = list(reversed(record["moves"][2]))


def _change_a_goal(record: dict[str, Any]) -> None:
    record["goalValues"][0] = 0 if record["goalValues"][0] else 100


def _remove_step_2(record: dict[str, Any]) -> None:
    del record["moves"][1]
    for field in ("states", "stateTimes", "errors", "responseTimes"):
        del record[field][2]


@pytest.mark.parametrize(
    ("change", "step", "kind"),
    [
        (_change_move_of_step_3, 3, ProblemKind.ILLEGAL_MOVE),
        (_change_a_goal, None, ProblemKind.GOAL_MISMATCH),
        (_remove_step_2, 2, ProblemKind.ILLEGAL_MOVE),
    ],
    ids=["changed move", "changed goal", "removed step"],
)
def test_tampering_with_a_signed_log_is_caught_by_replay_and_by_verify(
    signed_log: Path,
    key: Ed25519PrivateKey,
    change: Callable[[dict[str, Any]], None],
    step: int | None,
    kind: ProblemKind,
) -> None:
    steps = len(json.loads(signed_log.read_text())["moves"])
    _edit(signed_log, change)

    replay = replay_file(signed_log)
    verification = verify_record_file(signed_log, key.public_key())

    first = replay.first_problem
    assert first is not None and first.kind is kind
    assert first.step == (steps if step is None else step)
    assert verification.status is VerificationStatus.BAD_SIGNATURE


def test_reformatting_a_signed_log_keeps_it_valid(signed_log: Path, key: Ed25519PrivateKey) -> None:
    _edit(signed_log, lambda record: None)

    assert replay_file(signed_log).ok
    assert verify_record_file(signed_log, key.public_key()).ok
