"""Logs written by the match runner itself replay cleanly and verify once signed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from server.games import load_game
from server.match import LogWriter, MatchConfig, run_match
from server.records import EndReason, dump_record, load_record
from server.records.signing import sign_record_file, verify_record, verify_record_file
from server.replay import Outcome, replay_file


@pytest.mark.parametrize(
    ("game", "steps", "outcome"),
    [
        ("nineBoardTicTacToe", None, Outcome.COMPLETED),
        ("ticTacHeaven", 6, Outcome.STEP_LIMIT),
    ],
)
async def test_a_match_run_by_the_server_replays_and_verifies(
    tmp_path: Path, game: str, steps: int | None, outcome: Outcome
) -> None:
    writer = LogWriter(tmp_path, durable=False)
    config = MatchConfig(start_clock=1, play_clock=1, seed=5, step_limit=steps)
    # No player URLs: the server plays every role itself with seeded random moves.
    record = await run_match(
        load_game(game), [None, None], config, game_name=game, observers=[writer]
    )
    log = writer.path_for(record.match_id)
    key = Ed25519PrivateKey.generate()
    sign_record_file(log, key)

    replay = replay_file(log)

    assert replay.ok, replay.problems
    assert replay.outcome is outcome
    assert record.end_reason in (EndReason.TERMINAL, EndReason.STEP_LIMIT)
    assert verify_record_file(log, key.public_key()).ok


async def test_a_signed_log_survives_a_load_and_dump_through_the_record_model(
    tmp_path: Path,
) -> None:
    writer = LogWriter(tmp_path, durable=False)
    game = load_game("nineBoardTicTacToe")
    record = await run_match(game, [None, None], MatchConfig(seed=9), observers=[writer])
    log = writer.path_for(record.match_id)
    key = Ed25519PrivateKey.generate()
    sign_record_file(log, key)

    rewritten = json.loads(dump_record(load_record(log)))

    assert verify_record(rewritten, key.public_key()).ok
