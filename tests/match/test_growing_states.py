"""Games whose state grows every step: long matches end cleanly with logs that replay.

A counter ``(s (s (s ...)))`` nests one level deeper each step; past the nesting cap
the server cannot keep the state, so the match ends with ``rules_limit`` at the step
before, its log consistent and signed.  A state that grows in breadth has no such cap
and plays on for a thousand steps.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from server.gdl import Game
from server.gdl.terms import MAX_TERM_DEPTH
from server.match import LogWriter, MatchConfig, MatchRunner
from server.records import EndReason
from server.records.signing import verify_record_file
from server.replay import replay_file

DEEPENING = """
(role counter)
(init (count zero))
(legal counter tick)
(<= (next (count (s ?n))) (true (count ?n)))
(<= terminal (true (count never)))
(goal counter 100)
"""


def widening(steps: int) -> str:
    """A game that adds one fluent per step and ends after ``steps`` steps."""
    lines = ["(role counter)", "(init (at 0))", "(legal counter tick)"]
    lines += [f"(succ {n} {n + 1})" for n in range(steps)]
    lines += [
        "(<= (next (at ?m)) (true (at ?n)) (succ ?n ?m))",
        "(<= (next (seen ?n)) (true (at ?n)))",
        "(<= (next (seen ?n)) (true (seen ?n)))",
        f"(<= terminal (true (at {steps})))",
        "(goal counter 100)",
    ]
    return "\n".join(lines)


async def _play_alone(game: Game, folder: Path, step_limit: int) -> tuple[Path, object]:
    key = Ed25519PrivateKey.generate()
    writer = LogWriter(folder, durable=False, signing_key=key)
    config = MatchConfig(start_clock=1, play_clock=1, seed=3, step_limit=step_limit)
    record = await MatchRunner(game, [None], config, game_name="growing", observers=[writer]).run()
    log = writer.path_for(record.match_id)
    assert verify_record_file(log, key.public_key()).ok
    return log, record


@pytest.fixture(autouse=True)
def _interpreter(monkeypatch: pytest.MonkeyPatch) -> None:
    # These games have no finite grounding; the interpreter plays them.
    monkeypatch.setenv("GGP_ENGINE", "interpreter")


async def test_a_state_nesting_past_the_cap_ends_the_match_cleanly(tmp_path: Path) -> None:
    log, record = await _play_alone(Game.from_text(DEEPENING), tmp_path, step_limit=1_200)

    assert record.end_reason is EndReason.RULES_LIMIT  # type: ignore[attr-defined]
    assert record.is_aborted and not record.is_completed  # type: ignore[attr-defined]
    assert str(MAX_TERM_DEPTH) in (record.end_message or "")  # type: ignore[attr-defined]
    # The last state kept is the deepest that fits: count plus the state's own list.
    assert len(record.moves) == MAX_TERM_DEPTH - 2  # type: ignore[attr-defined]
    assert len(record.states) == len(record.moves) + 1  # type: ignore[attr-defined]
    replay = replay_file(log)
    assert replay.ok, replay.problems


async def test_a_state_growing_in_breadth_plays_a_thousand_steps(tmp_path: Path) -> None:
    steps = 1_000
    log, record = await _play_alone(Game.from_text(widening(steps)), tmp_path, step_limit=5_000)

    assert record.end_reason is EndReason.TERMINAL  # type: ignore[attr-defined]
    assert len(record.moves) == steps  # type: ignore[attr-defined]
    assert record.states[-1].count("( seen ") == steps  # type: ignore[attr-defined]
    replay = replay_file(log)
    assert replay.ok, replay.problems
