"""``benchmarks/mcts_clock.py``: a real short run, and the games it picks."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "mcts_clock.py"
CORPUS = ROOT.parent / "shared" / "conformance" / "games"


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=300
    )


def test_a_short_run_reports_each_game_against_its_clocks() -> None:
    columns = run("--list-columns").stdout.split()
    done = run(
        "--games",
        "tictactoex9,ticTacHeaven",
        "--steps",
        "2",
        "--startclock",
        "2",
        "--playclock",
        "1",
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split("\t") == columns
    rows = {
        line.split("\t")[0]: dict(zip(columns, line.split("\t"), strict=True)) for line in lines[1:]
    }
    assert set(rows) == {"tictactoex9", "ticTacHeaven"}
    for row in rows.values():
        assert row["roles"] == "2" and row["steps"] == "2" and row["errors"] == "0"
        assert 0 < float(row["slowest_reply_s"]) and row["play_clock_s"] == "1"
        assert 0 < float(row["start_reply_s"]) and row["start_clock_s"] == "2"
    assert "2 games played (0 refused), 4 steps" in done.stderr


def test_the_corpus_games_are_those_that_compile() -> None:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from mcts_clock import corpus_games

    names = corpus_games()
    if not CORPUS.is_dir():
        assert names == []
        return
    listed = dict(
        line.split("\t", 1)
        for line in (ROOT / "tests" / "gdl" / "compiled_games.txt").read_text().splitlines()
        if not line.startswith("#")
    )
    assert names and all(listed[name] == "compiles" for name in names)
    assert "ticTacToe" in names and "amazons" not in names
