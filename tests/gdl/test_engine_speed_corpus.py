"""``benchmarks/engine_speed.py --corpus`` on a small folder of games: one row per game
with the columns it lists, the ratio to the reference prover where the reference has a
figure, and none (cleanly) when the reference file is absent."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "engine_speed.py"
GAMES = Path(__file__).resolve().parent / "traces" / "games"


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), "--corpus", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )


def rows(output: str, names: list[str]) -> dict[str, list[str]]:
    found = {}
    for line in output.splitlines():
        cells = line.split()
        if cells and cells[0] in names:
            found[cells[0]] = cells
    return found


def test_corpus_columns_are_listed() -> None:
    listed = run("--list-columns")
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.splitlines() == [
        "game",
        "setup s",
        "engine",
        "failed compile s",
        "api/s",
        "playout/s",
        "prover/s",
        "ratio",
        "state budget",
    ]


def test_each_game_gets_a_row_with_its_ratio_where_the_reference_has_a_figure(
    tmp_path: Path,
) -> None:
    games = tmp_path / "games"
    shutil.copytree(GAMES, games)
    reference = tmp_path / "prover-speed.csv"
    reference.write_text("game,prover_transitions_per_second\ncountdown,10\n", encoding="utf-8")
    result = run("--corpus-dir", str(games), "--reference", str(reference), "--seconds", "0.05")
    assert result.returncode == 0, result.stderr
    found = rows(result.stdout, ["countdown", "guess", "walk"])
    assert sorted(found) == ["countdown", "guess", "walk"]
    countdown = found["countdown"]
    assert countdown[2] == "compiled" and countdown[3] == "-"
    api, prover, ratio = (float(cell.replace(",", "")) for cell in countdown[4:5] + countdown[6:8])
    assert prover == 10 and abs(ratio - api / 10) <= 0.01 * ratio
    assert found["walk"][6:] == ["-", "-", "-"]  # nor a state budget: it is compiled
    assert "3 of 3 games on the compiled engine" in result.stdout


def test_without_the_reference_file_the_ratio_is_left_out(tmp_path: Path) -> None:
    result = run(
        "--corpus-dir",
        str(GAMES),
        "--reference",
        str(tmp_path / "absent.csv"),
        "--seconds",
        "0.05",
        "walk",
    )
    assert result.returncode == 0, result.stderr
    assert "no reference figures" in result.stdout
    assert rows(result.stdout, ["walk"])["walk"][6:8] == ["-", "-"]


def test_a_game_that_falls_back_shows_the_failed_compile_attempt(tmp_path: Path) -> None:
    result = subprocess.run(
        [
            sys.executable,
            str(SCRIPT),
            "--corpus",
            "--corpus-dir",
            str(GAMES),
            "--seconds",
            "0.05",
            "guess",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env={"GGP_COMPILE_MAX_RULES": "1", "PATH": "/usr/bin:/bin"},
    )
    assert result.returncode == 0, result.stderr
    guess = rows(result.stdout, ["guess"])["guess"]
    assert guess[2] == "interpreter" and float(guess[3]) >= 0 and guess[5] == "-"
    assert guess[8] in ("small", "full", "none", "-")  # the interpreter's state budget
    assert "0 of 1 games on the compiled engine" in result.stdout
    assert "fallbacks by reason: more than 1 ground rules (1)" in result.stdout
    assert "set-up on the interpreter: median" in result.stdout


def test_a_start_clock_gives_the_compile_budget_a_match_would_have() -> None:
    result = run("--corpus-dir", str(GAMES), "--seconds", "0.05", "--start-clock", "60", "walk")
    assert result.returncode == 0, result.stderr
    assert "within 10 s, 480,000 ground rules: what a 60 s start clock buys" in result.stdout
    assert "set-up on the compiled: median" in result.stdout
    default = run("--corpus-dir", str(GAMES), "--seconds", "0.05", "walk")
    assert "within 2 s, 300,000 ground rules" in default.stdout


def test_the_warm_up_before_each_figure_is_a_fifth_of_it_or_as_asked() -> None:
    """The prover's reference figures were taken after 3 s of warm-up; ``--warm-up``
    gives ours the same (an interpreter fills its memo tables of static relations asked
    on demand in its first states)."""
    default = run("--corpus-dir", str(GAMES), "--seconds", "0.05", "walk")
    assert "0.05 s of CPU time per figure after 0.01 s of warm-up" in default.stdout
    asked = run("--corpus-dir", str(GAMES), "--seconds", "0.05", "--warm-up", "0.2", "walk")
    assert asked.returncode == 0, asked.stderr
    assert "0.05 s of CPU time per figure after 0.2 s of warm-up" in asked.stdout
    assert rows(asked.stdout, ["walk"])["walk"][2] == "compiled"


def benchmark_module() -> ModuleType:
    """The benchmark script, imported (its command line runs only as ``__main__``)."""
    spec = importlib.util.spec_from_file_location("engine_speed_script", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_playout_is_cut_at_its_cpu_deadline_without_reading_the_cpu_clock_each_step(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Reading the process's CPU clock is a system call (0.5 to 7 µs with the load, about
    4 % of knightfight's figure when read after every transition); the wall clock tells
    when it is worth reading."""
    passed_for = benchmark_module().cpu_deadline_passed
    cpu_clock = time.process_time
    reads = 0

    def counted() -> float:
        nonlocal reads
        reads += 1
        return cpu_clock()

    monkeypatch.setattr(time, "process_time", counted)
    assert passed_for(cpu_clock() - 0.01)()
    deadline = cpu_clock() + 0.05
    passed = passed_for(deadline)
    reads, steps = 0, 0
    while not passed():
        steps += 1
        assert cpu_clock() < deadline + 0.01
    assert cpu_clock() >= deadline
    assert steps > 1_000 and reads < steps / 100, (steps, reads)
