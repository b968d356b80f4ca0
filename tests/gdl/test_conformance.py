"""``ggp conformance DIR``: replaying reference traces against the rules engine.

First on our own small traces (``tests/gdl/traces``, checked by hand) and on copies with
deliberate mistakes (``tests/gdl/traces-broken``), running the real command; then each
check of the trace replay on its own; then the shared corpus (``../shared/conformance``,
skipped when absent): every traced game conforms, and every unverified game either loads
and plays or is refused with a clear error, within a time limit.
"""

from __future__ import annotations

import copy
import json
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from shared_material import shared_files, stem

from server.gdl import Game
from server.gdl import conformance as runner

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
OURS = HERE / "traces"
BROKEN = HERE / "traces-broken"


def ggp_conformance(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "server.cli", "conformance", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def output_lines(result: subprocess.CompletedProcess[str]) -> list[str]:
    """The printed lines, without the time each game took (``[0.01 s]``)."""
    return [re.sub(r" \[[0-9.]+ s\]$", "", line) for line in result.stdout.strip().splitlines()]


# --- the command on our own traces ---------------------------------------------------------


@pytest.mark.parametrize("engine", ["interpreter", "auto"])
def test_our_traces_pass(engine: str) -> None:
    result = ggp_conformance(str(OURS), "--jobs", "1", "--engine", engine)
    assert result.returncode == 0, result.stdout + result.stderr
    lines = output_lines(result)
    assert lines == [
        "countdown: passed (2 playouts, 5 transitions, 3 probes)",
        "guess: passed (2 playouts, 4 transitions, 3 probes)",
        "walk: passed (3 playouts, 5 transitions, 2 probes)",
        "3 passed, 0 failed",
    ]


def test_broken_traces_fail_naming_the_first_difference() -> None:
    result = ggp_conformance(str(BROKEN), "--jobs", "2")
    assert result.returncode == 1
    lines = output_lines(result)
    assert lines == [
        "countdown: FAILED (playout 0 step 2: legal moves of Alice differ: "
        "missing ['( take 2 )'], extra [])",
        "guess: FAILED (playout 1 step 1: states differ: "
        "missing ['( score right 2 )'], extra ['( score right 1 )'])",
        "walk: FAILED (probe at playout 0 step 1: "
        "illegal joint move ['( go ( node b ) )'] was accepted)",
        "0 passed, 3 failed",
    ]


def test_one_failure_among_passing_games_is_counted(tmp_path: Path) -> None:
    folder = tmp_path / "mixed"
    shutil.copytree(OURS, folder)
    shutil.copy(BROKEN / "traces" / "guess.json", folder / "traces" / "guess.json")
    result = ggp_conformance(str(folder), "--jobs", "2")
    assert result.returncode == 1
    lines = output_lines(result)
    assert lines[0].startswith("countdown: passed")
    assert lines[1].startswith("guess: FAILED (playout 1 step 1: states differ")
    assert lines[2].startswith("walk: passed")
    assert lines[-1] == "2 passed, 1 failed"


def test_named_games_only() -> None:
    result = ggp_conformance(str(OURS), "walk", "--jobs", "1")
    assert result.returncode == 0
    lines = output_lines(result)
    assert len(lines) == 2
    assert lines[0].startswith("walk: passed")
    assert lines[1] == "1 passed, 0 failed"

    unknown = ggp_conformance(str(OURS), "walk", "chess", "--jobs", "1")
    assert unknown.returncode == 2
    assert "some named games have no trace" in unknown.stderr


def test_a_folder_without_traces_is_an_error(tmp_path: Path) -> None:
    result = ggp_conformance(str(tmp_path), "--jobs", "1")
    assert result.returncode == 2
    assert "has no traces/ folder" in result.stderr


def _remove_game(folder: Path) -> None:
    (folder / "games" / "walk.kif").unlink()


def _trace_not_json(folder: Path) -> None:
    (folder / "traces" / "walk.json").write_text("{not json", encoding="utf-8")


def _trace_without_init(folder: Path) -> None:
    (folder / "traces" / "walk.json").write_text('{"roles": ["walker"]}', encoding="utf-8")


@pytest.mark.parametrize(
    "damage",
    [_remove_game, _trace_not_json, _trace_without_init],
    ids=["game file missing", "trace not JSON", "trace without init"],
)
def test_a_damaged_game_or_trace_is_reported_without_a_traceback(
    tmp_path: Path, damage: Callable[[Path], None]
) -> None:
    folder = tmp_path / "damaged"
    shutil.copytree(OURS, folder)
    damage(folder)
    result = ggp_conformance(str(folder), "--jobs", "1")
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    assert "walk" in result.stdout + result.stderr


SLOW_GAME = """
(role r)
{numbers}
(<= (legal r (triple ?a ?b ?c)) (num ?a) (num ?b) (num ?c))
(<= terminal (true done))
(goal r 0)
"""
"""Eight million legal moves in the initial state: far too many for a short time limit."""


def test_a_game_over_its_time_limit_fails_instead_of_hanging(tmp_path: Path) -> None:
    (tmp_path / "games").mkdir()
    (tmp_path / "traces").mkdir()
    numbers = " ".join(f"(num {n})" for n in range(200))
    (tmp_path / "games" / "slow.kif").write_text(
        SLOW_GAME.format(numbers=numbers), encoding="utf-8"
    )
    trace = {"roles": ["r"], "init": [], "playouts": []}
    (tmp_path / "traces" / "slow.json").write_text(json.dumps(trace), encoding="utf-8")
    started = time.monotonic()
    [result] = runner.run(tmp_path, limit=0.5)
    assert not result.passed
    assert result.detail == "time limit of 0.5 s exceeded"
    assert time.monotonic() - started < 10  # killed from outside, not left to run on


def test_games_over_the_limit_in_parallel_are_each_stopped_by_the_command(tmp_path: Path) -> None:
    """The limit is kept by the parent process, which kills each overdue check."""
    (tmp_path / "games").mkdir()
    (tmp_path / "traces").mkdir()
    numbers = " ".join(f"(num {n})" for n in range(200))
    for name in ("slow1", "slow2"):
        (tmp_path / "games" / f"{name}.kif").write_text(
            SLOW_GAME.format(numbers=numbers), encoding="utf-8"
        )
        trace = {"roles": ["r"], "init": [], "playouts": []}
        (tmp_path / "traces" / f"{name}.json").write_text(json.dumps(trace), encoding="utf-8")
    started = time.monotonic()
    result = ggp_conformance(str(tmp_path), "--jobs", "2", "--time-limit", "0.5", timeout=60)
    assert time.monotonic() - started < 30
    assert result.returncode == 1
    assert output_lines(result) == [
        "slow1: FAILED (time limit of 0.5 s exceeded)",
        "slow2: FAILED (time limit of 0.5 s exceeded)",
        "0 passed, 2 failed",
    ]


# --- each check of the replay, on its own ---------------------------------------------------


def our_trace(name: str) -> dict:
    return json.loads((OURS / "traces" / f"{name}.json").read_text(encoding="utf-8"))


def our_game(name: str) -> Game:
    return Game.from_file(OURS / "games" / f"{name}.kif", engine="interpreter")


def _swap_roles(trace: dict) -> None:
    trace["roles"].reverse()


def _drop_initial_fluent(trace: dict) -> None:
    trace["init"].remove("( pile 4 )")


def _wrong_state(trace: dict) -> None:
    trace["playouts"][1]["steps"][1]["state"] = ["( control bob )", "( pile 3 )"]


def _wrong_terminal_flag(trace: dict) -> None:
    trace["playouts"][0]["steps"][1]["terminal"] = True


def _missing_legal_move(trace: dict) -> None:
    trace["playouts"][0]["steps"][0]["legal"]["Alice"] = ["( take 1 )"]


def _wrong_goal(trace: dict) -> None:
    trace["playouts"][0]["steps"][3]["goals"] = {"Alice": 100, "bob": 100}


def _goal_missing_at_the_end(trace: dict) -> None:
    last = trace["playouts"][0]["steps"][3]
    last["goals"] = {"Alice": 100}
    last["goals_undefined"] = ["bob"]


def _goals_where_none_are_defined(trace: dict) -> None:
    trace["playouts"][0]["steps"][1]["goals"] = {"Alice": 50, "bob": 50}


def _illegal_reference_move(trace: dict) -> None:
    trace["playouts"][0]["steps"][0]["joint"] = ["( take 3 )", "noop"]


def _legal_probe(trace: dict) -> None:
    trace["probes"][0]["joint"] = ["( take 1 )", "noop"]


def _probe_of_a_missing_step(trace: dict) -> None:
    trace["probes"][0]["step"] = 9


MISTAKES: dict[str, tuple[Callable[[dict], None], str]] = {
    "roles in another order": (_swap_roles, "roles ['Alice', 'bob'], reference ['bob', 'Alice']"),
    "a fluent missing from init": (
        _drop_initial_fluent,
        "initial states differ: missing [], extra ['( pile 4 )']",
    ),
    "a wrong state": (
        _wrong_state,
        "playout 1 step 1: states differ: missing ['( pile 3 )'], extra ['( pile 2 )']",
    ),
    "a wrong terminal flag": (
        _wrong_terminal_flag,
        "playout 0 step 1: terminal is False, reference says True",
    ),
    "a legal move too few": (
        _missing_legal_move,
        "playout 0 step 0: legal moves of Alice differ: missing [], extra ['( take 2 )']",
    ),
    "a wrong goal value": (
        _wrong_goal,
        "playout 0 step 3: goals {'Alice': 100, 'bob': 0}, reference {'Alice': 100, 'bob': 100}",
    ),
    "a goal said to be undefined": (
        _goal_missing_at_the_end,
        "playout 0 step 3: goals {'Alice': 100, 'bob': 0}, reference {'Alice': 100}",
    ),
    "goals in a state where the game has none": (
        _goals_where_none_are_defined,
        "playout 0 step 1: goals {}, reference {'Alice': 50, 'bob': 50}",
    ),
    "a reference move the rules refuse": (
        _illegal_reference_move,
        "playout 0 step 0: reference joint move refused: illegal move (take 3) for role Alice",
    ),
    "a probe that is legal after all": (
        _legal_probe,
        "probe at playout 0 step 0: illegal joint move ['( take 1 )', 'noop'] was accepted",
    ),
    "a probe of a step that does not exist": (
        _probe_of_a_missing_step,
        "probe at playout 0 step 9: no such step in the trace",
    ),
}


def test_the_unchanged_trace_replays_cleanly() -> None:
    summary = runner.check_trace(our_game("countdown"), our_trace("countdown"))
    assert summary == "2 playouts, 5 transitions, 3 probes"


@pytest.mark.parametrize("mistake", list(MISTAKES))
def test_each_kind_of_difference_is_caught(mistake: str) -> None:
    change, message = MISTAKES[mistake]
    trace = copy.deepcopy(our_trace("countdown"))
    change(trace)
    with pytest.raises(runner.Mismatch) as caught:
        runner.check_trace(our_game("countdown"), trace)
    assert str(caught.value).startswith(message)


def test_goals_the_game_defines_where_the_reference_has_none_are_caught() -> None:
    # In guess every state has goals; a reference without them disagrees.
    trace = our_trace("guess")
    del trace["playouts"][0]["steps"][1]["goals"]
    with pytest.raises(runner.Mismatch, match="playout 0 step 1: goals .* defined, reference"):
        runner.check_trace(our_game("guess"), trace)


def test_an_undefined_goal_in_a_terminal_state_is_compared() -> None:
    trace = our_trace("walk")
    end = trace["playouts"][1]["steps"][2]
    assert (end["goals"], end["goals_undefined"]) == ({}, ["walker"])
    end["goals"] = {"walker": 0}
    del end["goals_undefined"]
    with pytest.raises(runner.Mismatch, match="playout 1 step 2: goals {}, reference"):
        runner.check_trace(our_game("walk"), trace)


INVALID_GAME = """
(role r)
(<= (legal r (move ?x)) (true on))
(<= terminal (true on))
(goal r 100)
"""
"""Unsafe: ?x of the legal rule appears in no positive body literal."""


def _write_invalid_game(folder: Path, validator_result: str) -> None:
    (folder / "games").mkdir(parents=True)
    (folder / "traces").mkdir()
    (folder / "games" / "unsafe.kif").write_text(INVALID_GAME, encoding="utf-8")
    trace = {
        "game": "unsafe",
        "roles": ["r"],
        "init": [],
        "static_validator": {"result": validator_result, "warnings": []},
        "playouts": [],
    }
    (folder / "traces" / "unsafe.json").write_text(json.dumps(trace), encoding="utf-8")


def test_refusing_a_game_passes_only_if_the_reference_validator_refused_it(
    tmp_path: Path,
) -> None:
    _write_invalid_game(tmp_path / "flagged", "error: ValidatorException: Unsafe rule")
    [flagged] = runner.run(tmp_path / "flagged")
    assert flagged.passed
    assert flagged.detail.startswith("refused as invalid GDL, as the reference validator")

    _write_invalid_game(tmp_path / "clean", "ok")
    [clean] = runner.run(tmp_path / "clean")
    assert not clean.passed
    assert clean.detail.startswith("refused as invalid GDL: ")
    assert "?x" in clean.detail


# --- the shared corpus ------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.shared("conformance/games", "conformance/traces")
def test_every_trace_of_the_shared_corpus_passes() -> None:
    """About three minutes on two cores."""
    result = ggp_conformance(
        "../shared/conformance", "--jobs", "2", "--time-limit", "300", timeout=3600
    )
    failures = [line for line in output_lines(result) if ": FAILED" in line]
    assert failures == []
    assert output_lines(result)[-1] == "247 passed, 0 failed"
    assert result.returncode == 0


PLAY_A_FEW_STEPS = """
import random, sys
from server.gdl import Game, GdlError
try:
    game = Game.from_file(sys.argv[1])
except GdlError as error:
    print("refused:", type(error).__name__, str(error).splitlines()[0])
    sys.exit(0)
rng = random.Random(1)
state = game.initial_state()
steps = 0
while steps < 10 and not game.is_terminal(state):
    state = game.next_state(state, [rng.choice(game.legal_moves(state, r)) for r in game.roles])
    steps += 1
print("played", steps, "steps; terminal:", game.is_terminal(state))
"""
"""Load a game and play up to ten random joint moves, or say why it was refused."""

TIME_LIMIT = 120.0
"""Seconds allowed per unverified game, loading included (generous: the machine is shared)."""


@pytest.mark.parametrize("path", shared_files("conformance/games-unverified", "*.kif"), ids=stem)
def test_every_unverified_game_plays_or_is_refused_cleanly(path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-c", PLAY_A_FEW_STEPS, str(path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=TIME_LIMIT,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(("played ", "refused: GdlValidationError", "refused: GdlError"))
