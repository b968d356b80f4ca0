"""Our own additions to the ggp.org format are understood: step limits, forfeits, clock use."""

from __future__ import annotations

from pathlib import Path

from server.games import game_text, load_game
from server.gdl.terms import to_ggp
from server.records import EndReason, ErrorDetail, ErrorKind, MatchRecord, write_record
from server.replay import Outcome, ProblemKind, render_replay, replay_file

NOOP_STEPS = 4


def passing_match(folder: Path, **changes: object) -> Path:
    """ticTacHeaven where both players pass until a step limit of four ends the match."""
    game = load_game("ticTacHeaven")
    state = game.initial_state()
    record = MatchRecord(
        match_id="ours.ticTacHeaven.1",
        start_clock=10,
        play_clock=2,
        game_rulesheet=game_text("ticTacHeaven"),
        states=[state.to_ggp()],
        state_times=[1_000],
        errors=[["", ""]],
        response_times=[[12, 15]],
        error_details=[[None, None]],
        step_limit=NOOP_STEPS,
    )
    for step in range(1, NOOP_STEPS + 1):
        joint = ["noop", "noop"]
        state = game.next_state(state, joint)
        record.moves.append([to_ggp(move) for move in joint])
        record.states.append(state.to_ggp())
        record.state_times.append(1_000 + 2_500 * step)
        late = step == 2
        assert record.errors is not None and record.error_details is not None
        assert record.response_times is not None
        record.errors.append(["TO" if late else "", ""])
        record.error_details.append(
            [
                ErrorDetail(kind=ErrorKind.TIMEOUT, message="no reply within 3.0 s")
                if late
                else None,
                None,
            ]
        )
        record.response_times.append([3_000 if late else 40, 25])
    rule_goals = [game.goal(state, role) for role in game.roles]
    record.rule_goal_values = rule_goals
    record.goal_values = [0 if goal is None else goal for goal in rule_goals]
    record.is_completed = True
    record.end_reason = EndReason.STEP_LIMIT
    for name, value in changes.items():
        setattr(record, name, value)
    return write_record(folder / "match.json", record)


def test_a_match_ended_by_the_step_limit_replays_with_the_goals_of_its_last_state(
    tmp_path: Path,
) -> None:
    replay = replay_file(passing_match(tmp_path))

    assert replay.ok, replay.problems
    assert replay.outcome is Outcome.STEP_LIMIT
    assert replay.verdict().startswith("OK (ended by the step limit after 4 steps): ")


def test_more_steps_than_the_limit_allows_is_a_mismatch(tmp_path: Path) -> None:
    replay = replay_file(passing_match(tmp_path, step_limit=3))

    assert replay.first_problem is not None
    assert replay.first_problem.kind is ProblemKind.MALFORMED
    assert "beyond the step limit of 3" in replay.first_problem.message


def test_a_forfeited_role_is_recorded_with_goal_zero(tmp_path: Path) -> None:
    honest = replay_file(passing_match(tmp_path))
    assert honest.rule_goals is not None and honest.rule_goals[0] != 0
    forfeit_goals = [0, *honest.rule_goals[1:]]

    replay = replay_file(
        passing_match(tmp_path, forfeited=[True, False], goal_values=forfeit_goals)
    )

    assert replay.ok, replay.problems


def test_a_forfeit_without_goal_zero_is_a_mismatch(tmp_path: Path) -> None:
    replay = replay_file(passing_match(tmp_path, forfeited=[True, False]))

    assert replay.first_problem is not None
    assert replay.first_problem.kind is ProblemKind.GOAL_MISMATCH
    assert "(forfeited)" in replay.first_problem.message


def test_the_view_shows_clock_use_and_player_errors(tmp_path: Path) -> None:
    view = render_replay(replay_file(passing_match(tmp_path)))

    step_2 = view[view.index("Step 2:") : view.index("Step 3:")]
    assert (
        "clock: step took 2.50 s of a 2 s clock; replies: xplayer 3.00 s, oplayer 0.03 s" in step_2
    )
    assert "player errors: xplayer TO (no reply within 3.0 s)" in step_2
    assert "Clock use: xplayer mean 0.78 s, longest 3.00 s; oplayer mean 0.03 s" in view
    assert "End reason (recorded): step_limit" in view


HALF_SCORED = """
(role first) (role second)
(init (step 0))
(<= (legal ?role noop) (role ?role))
(<= (next (step 1)) (true (step 0)))
(<= (next (step 2)) (true (step 1)))
(<= terminal (true (step 2)))
(<= (goal first 100) (true (step 2)))
(goal second 50)
"""
"""A game whose first role has a goal only at the end, and whose second always has 50."""


def half_scored_match(folder: Path, goal_values: list[int]) -> Path:
    """One step of HALF_SCORED, ended by a step limit of 1: the rules give first no goal."""
    record = MatchRecord(
        match_id="ours.halfScored.1",
        start_clock=10,
        play_clock=2,
        game_rulesheet=HALF_SCORED,
        states=["( ( step 0 ) )", "( ( step 1 ) )"],
        moves=[["noop", "noop"]],
        state_times=[1_000, 1_200],
        errors=[["", ""], ["", ""]],
        step_limit=1,
        rule_goal_values=[None, 50],
        goal_values=goal_values,
        is_completed=True,
        end_reason=EndReason.STEP_LIMIT,
    )
    return write_record(folder / "half.json", record)


def test_a_role_the_rules_give_no_goal_may_have_any_recorded_goal(tmp_path: Path) -> None:
    replay = replay_file(half_scored_match(tmp_path, [30, 50]))

    assert replay.ok, replay.problems
    assert replay.rule_goals == [None, 50]


def test_the_roles_after_one_the_rules_give_no_goal_are_still_checked(tmp_path: Path) -> None:
    replay = replay_file(half_scored_match(tmp_path, [30, 70]))

    assert [(problem.step, problem.kind, problem.message) for problem in replay.problems] == [
        (1, ProblemKind.GOAL_MISMATCH, "second: recorded 70, the rules give 50")
    ]
