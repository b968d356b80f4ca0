"""The upload check of the game library, on small games written here and the bundled ones."""

from __future__ import annotations

import pytest

from server.games import game_text, list_games, load_game
from server.games.lint import (
    HEAVY_SETUP_SECONDS,
    HEAVY_TRANSITIONS_PER_SECOND,
    LintReport,
    heavy_reason,
    lint_game,
)

RACE = """
; Two runners; each turn both step or wait, and the first to reach 3 wins.
(role left)
(role right)
(succ 0 1) (succ 1 2) (succ 2 3)
(init (at left 0))
(init (at right 0))
(<= (legal ?r step) (role ?r))
(<= (legal ?r wait) (role ?r))
(<= (next (at ?r ?n)) (does ?r step) (true (at ?r ?m)) (succ ?m ?n))
(<= (next (at ?r ?n)) (does ?r wait) (true (at ?r ?n)))
(<= (home ?r) (true (at ?r 3)))
(<= terminal (home ?r))
(<= (goal ?r 100) (home ?r))
(<= (goal ?r 0) (role ?r) (not (home ?r)))
"""


def errors(report: LintReport) -> list[str]:
    return [problem.message for problem in report.problems if problem.severity == "error"]


def test_a_good_game_lints_clean_with_its_engine_speed_and_playout_lengths() -> None:
    report = lint_game(RACE, playouts=5, seed=1)

    assert report.ok, report.problems
    assert report.problems == []
    assert report.roles == ["left", "right"]
    assert report.engine == "compiled"
    assert report.engine_reason is None
    assert report.setup_seconds is not None and report.setup_seconds >= 0
    assert report.transitions_per_second is not None and report.transitions_per_second > 0
    assert (report.playouts, report.playouts_terminated) == (5, 5)
    assert report.max_length is not None and report.max_length >= 3
    assert report.average_length is not None and 3 <= report.average_length <= report.max_length
    assert not report.heavy and report.heavy_reason is None


def test_the_same_seed_gives_the_same_playouts() -> None:
    first = lint_game(RACE, playouts=4, seed=7)
    again = lint_game(RACE, playouts=4, seed=7)

    assert (first.average_length, first.max_length) == (again.average_length, again.max_length)


def test_a_syntax_error_names_its_line_and_column() -> None:
    text = "(role r)\n(init p)\n(legal r (go)\n(goal r 100)\n"

    report = lint_game(text)

    assert not report.ok
    [problem] = report.problems
    assert problem.severity == "error"
    assert (problem.line, problem.column) == (3, 1)
    assert "never closed" in problem.message
    assert report.engine is None and report.playouts == 0


def test_an_unsafe_rule_is_an_error_at_the_rule() -> None:
    text = RACE + "\n  (<= (next (at ?r ?n)) (true (at ?r 3)))\n"

    report = lint_game(text)

    assert not report.ok
    [problem] = [p for p in report.problems if p.severity == "error"]
    assert "unsafe rule" in problem.message and "?n" in problem.message
    assert (problem.line, problem.column) == (RACE.count("\n") + 2, 3)
    assert report.roles == ["left", "right"]
    assert report.engine is None


def test_validator_warnings_are_reported_but_do_not_fail_the_game() -> None:
    report = lint_game(RACE + "(unused 1)\n", playouts=2)

    assert report.ok
    [warning] = report.problems
    assert warning.severity == "warning"
    assert "defined but never used" in warning.message
    assert (warning.line, warning.column) == (RACE.count("\n") + 1, 1)


def test_a_game_that_never_ends_fails_within_max_steps() -> None:
    endless = RACE.replace("(<= terminal (home ?r))", "(<= terminal (true (at left 4)))")

    report = lint_game(endless, playouts=3, max_steps=50)

    assert not report.ok
    assert errors(report) == [
        "playout 1 did not reach a terminal state within 50 steps (and in 2 more playouts)"
    ]
    assert (report.playouts, report.playouts_terminated) == (3, 0)
    assert report.average_length is None


def test_a_terminal_state_without_goals_names_the_role_and_step() -> None:
    goals_for_left_only = RACE.replace(
        "(<= (goal ?r 100) (home ?r))", "(<= (goal left 100) (home left))"
    ).replace("(<= (goal ?r 0) (role ?r) (not (home ?r)))", "(<= (goal left 0) (not (home left)))")

    report = lint_game(goals_for_left_only, playouts=1, seed=3)

    assert not report.ok
    [message] = errors(report)
    length = report.max_length
    assert message == (
        f"playout 1: role right has no unique goal in the terminal state reached at step "
        f"{length} (no goal value)"
    )


def test_two_goal_values_for_one_role_are_an_error() -> None:
    doubled = RACE + "(<= (goal left 50) (home right))\n"

    report = lint_game(doubled, playouts=20, seed=0)

    assert any("role left has no unique goal" in message for message in errors(report))
    assert any("goal values 0, 50" in message for message in errors(report))


def test_a_role_without_a_legal_move_is_an_error() -> None:
    stuck = RACE.replace("(<= (legal ?r wait) (role ?r))", "").replace(
        "(<= (legal ?r step) (role ?r))", "(<= (legal ?r step) (true (at ?r 0)))"
    )

    report = lint_game(stuck, playouts=1)

    assert errors(report) == [
        "playout 1: role left has no legal move at step 1 in a state that is not terminal"
    ]


def test_a_game_past_the_compiled_engine_caps_uses_the_interpreter_and_says_why(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("GGP_COMPILE_MAX_RULES", "1")

    report = lint_game(RACE, playouts=2)

    assert report.ok
    assert report.engine == "interpreter"
    assert report.engine_reason is not None and "ground rules" in report.engine_reason


def test_work_past_the_time_budget_stops_with_a_warning() -> None:
    endless = RACE.replace("(<= terminal (home ?r))", "(<= terminal (true (at left 4)))")

    # a budget that set-up fits in even on a loaded machine; the endless playout does not
    report = lint_game(endless, playouts=3, max_steps=10**9, time_budget=2.0)

    assert report.ok
    [warning] = report.problems
    assert warning.severity == "warning"
    assert "stopped after 0 of 3 playouts: the time budget of 2 s ran out" == warning.message
    assert report.playouts == 0
    assert report.heavy
    assert report.heavy_reason == "not one random playout finished within the time budget"


def test_the_heavy_rule() -> None:
    assert heavy_reason(0.5, 10_000.0) is None
    slow_setup = heavy_reason(HEAVY_SETUP_SECONDS + 1, 10_000.0)
    assert slow_setup is not None and slow_setup.startswith("set-up took")
    slow_steps = heavy_reason(0.5, HEAVY_TRANSITIONS_PER_SECOND / 2)
    assert slow_steps is not None and "transitions per second" in slow_steps
    assert heavy_reason(0.5, None, starved=True) is not None


@pytest.mark.parametrize("name", [info.name for info in list_games()])
def test_every_bundled_game_lints_clean(name: str) -> None:
    report = lint_game(game_text(name), playouts=3)

    assert errors(report) == []
    assert report.ok
    assert report.playouts_terminated == 3
    assert report.roles == load_game(name, engine="interpreter").roles
