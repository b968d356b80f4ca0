"""A match log survives writing, reading back and replaying against its rules, for a
random match of any bundled game (played through the public Game API)."""

from __future__ import annotations

import random
import tempfile
from pathlib import Path

from gdl_strategies import MODEST
from hypothesis import given, settings
from hypothesis import strategies as st

from server.games import game_text, list_games, load_game
from server.gdl.terms import to_ggp
from server.records import EndReason, MatchRecord, load_record, write_record
from server.replay import Outcome, replay_file

NAMES = sorted(info.name for info in list_games())
GAMES = {name: load_game(name) for name in NAMES}


def random_match(name: str, seed: int, max_steps: int) -> MatchRecord:
    """A record of random joint moves from the initial state, cut after ``max_steps``."""
    game, rng = GAMES[name], random.Random(seed)
    roles = game.roles
    state = game.initial_state()
    clock = 1_800_000_000_000 + seed
    record = MatchRecord(
        match_id=f"property.{name}.{seed}",
        start_time=clock,
        start_clock=10,
        play_clock=5,
        game_name=name,
        game_rulesheet=game_text(name),
        player_names_from_host=[f"P{index}" for index in range(len(roles))],
        states=[state.to_ggp()],
        state_times=[clock],
        errors=[[""] * len(roles)],
    )
    while not game.is_terminal(state) and len(record.moves) < max_steps:
        joint = [rng.choice(game.legal_moves(state, role)) for role in roles]
        state = game.next_state(state, joint)
        record.moves.append([to_ggp(move) for move in joint])
        record.states.append(state.to_ggp())
        record.state_times.append(clock + 100 * len(record.moves))
        assert record.errors is not None
        record.errors.append([""] * len(roles))
    if game.is_terminal(state):
        goals = game.goals(state)
        record.goal_values = [goals[role] for role in roles]
        record.is_completed = True
        record.end_reason = EndReason.TERMINAL
    return record


@settings(MODEST, max_examples=15)
@given(st.sampled_from(NAMES), st.integers(0, 2**32), st.integers(1, 90))
def test_a_written_log_reads_back_equal_and_replays_clean(
    name: str, seed: int, max_steps: int
) -> None:
    record = random_match(name, seed, max_steps)
    with tempfile.TemporaryDirectory() as folder:
        path = write_record(Path(folder) / "match.json", record, durable=False)

        assert load_record(path) == record
        replay = replay_file(path)

    assert replay.ok, replay.problems
    assert replay.recorded_steps == len(record.moves)
    expected = Outcome.COMPLETED if record.is_completed else Outcome.UNFINISHED
    assert replay.outcome is expected
