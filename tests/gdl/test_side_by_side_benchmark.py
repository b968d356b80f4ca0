"""``benchmarks/side_by_side.py`` runs two checkouts at the same moment, one per core, and
prints their ratio; bad arguments get a one-line error, not a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "side_by_side.py"


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=120
    )


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two cores")
def test_a_checkout_against_itself_prints_both_rates_and_their_ratio() -> None:
    result = run("--base", str(ROOT), "--seconds", "0.3", "--warm-up", "0", "tictactoex9")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("2 rounds of 0.3 s of CPU time a side")
    assert lines[1].startswith("base modules: interpreter: ")
    assert lines[2].startswith("new modules: interpreter: ")
    assert lines[3].split()[:6] == ["game", "base/s", "new/s", "new/base", "lowest", "highest"]
    game, base, new, ratio, lowest, highest, budgets = lines[4].split()
    assert game == "tictactoex9" and budgets == "-/-"
    assert float(base.replace(",", "")) > 0 and float(new.replace(",", "")) > 0
    assert float(lowest) <= float(ratio) <= float(highest)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--base", str(ROOT), "--rounds", "3", "tictactoex9"], "must be an even number"),
        (["--base", str(ROOT), "--seconds", "0", "tictactoex9"], "must be more than 0"),
        (["--base", str(ROOT), "nosuchgame"], "no such game: nosuchgame"),
        (["--base", "/", "tictactoex9"], "is not a checkout of this project"),
        (["tictactoex9"], "give --base and at least one game"),
    ],
)
def test_bad_arguments_get_a_one_line_error(args: list[str], message: str) -> None:
    result = run(*args)
    assert result.returncode == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr
