"""``benchmarks/failed_compiles.py``: a row per game that falls back with the best and
the median of its failed attempts over several loads (each load makes the attempt
again), the games that compile counted, and a summary against the target."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "failed_compiles.py"
GAMES = Path(__file__).resolve().parent / "traces" / "games"


def run(*args: str, max_rules: int | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GGP_COMPILE")}
    if max_rules is not None:
        env["GGP_COMPILE_MAX_RULES"] = str(max_rules)
    return subprocess.run(
        [sys.executable, str(SCRIPT), "--corpus-dir", str(GAMES), *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env=env,
    )


def test_games_that_compile_are_counted_and_not_listed() -> None:
    result = run()
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[1].split()[:3] == ["game", "best", "s"]
    assert lines[2:] == ["3 compiled, 0 fell back"]


def test_a_game_that_falls_back_gets_its_best_and_median_over_the_loads() -> None:
    result = run("--loads", "3", "walk", "countdown", "nosuch", max_rules=5)
    assert result.returncode == 0, result.stderr
    rows = {line.split()[0]: line.split() for line in result.stdout.splitlines()[2:5]}
    assert rows["nosuch"][1:] == ["-", "-", "-", "not", "found"]
    for game in ("walk", "countdown"):
        best, median, loads = rows[game][1:4]
        assert 0 < float(best) <= float(median) < 0.5 and loads == "3"
        assert " ".join(rows[game][4:]) == "more than 5 ground rules"
    assert "0 compiled, 2 fell back" in result.stdout
    assert "failed compile, best of 3 loads: median" in result.stdout
    assert result.stdout.rstrip().endswith("0 over 0.5 s")


def test_the_games_over_the_target_are_named() -> None:
    result = run("--loads", "1", "--target", "0", "walk", max_rules=5)
    assert result.returncode == 0, result.stderr
    assert result.stdout.rstrip().endswith("1 over 0 s: walk")


def test_a_game_the_rules_refuse_gets_one_line(tmp_path: Path) -> None:
    broken = tmp_path / "broken.kif"
    broken.write_text("(role r)\n(<= (legal r ?m) (true (cell ?x)))\n(<= terminal (foo ?x ?y))\n")
    result = run("--loads", "1", str(broken))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[2].startswith("broken") and "refused: invalid GDL" in lines[2]
    assert lines[3:] == ["0 compiled, 0 fell back"]


def test_a_load_count_below_one_is_refused_without_a_traceback() -> None:
    result = run("--loads", "0")
    assert result.returncode == 2
    assert "--loads must be at least 1" in result.stderr and "Traceback" not in result.stderr
