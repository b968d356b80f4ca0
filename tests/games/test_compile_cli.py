"""``ggp games compile`` compiles games ahead of their matches into the engine store,
which every later process reads; ``ggp games store`` shows and empties it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def ggp(*args: str, store: Path | str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "GGP_ENGINE_STORE": str(store)}
    return subprocess.run(
        [sys.executable, "-m", "server.cli", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=ROOT,
    )


def test_a_compiled_game_is_loaded_compiled_by_the_next_process(tmp_path: Path) -> None:
    store = tmp_path / "engines"
    compiled = ggp("games", "compile", "nineBoardTicTacToe", "--time-limit", "5", store=store)
    assert compiled.returncode == 0, compiled.stderr
    assert compiled.stdout.startswith("nineBoardTicTacToe: compiled in ")
    assert compiled.stdout.rstrip().endswith("; stored")

    again = ggp("games", "compile", "nineBoardTicTacToe", store=store)
    assert again.returncode == 0
    assert "compiled, read from the engine store" in again.stdout

    loaded = subprocess.run(
        [
            sys.executable,
            "-c",
            "import json; from server.games import load_game; "
            "game = load_game('nineBoardTicTacToe'); "
            "print(json.dumps([game.engine.name, game.engine_stored]))",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "GGP_ENGINE_STORE": str(store)},
        cwd=ROOT,
        check=True,
    )
    assert json.loads(loaded.stdout) == ["compiled", True]

    shown = ggp("games", "store", store=store)
    assert shown.returncode == 0
    assert shown.stdout.startswith(f"{store}: 1 compiled engine(s), 0 game(s) with remembered")
    cleared = ggp("games", "store", "--clear", store=store)
    assert cleared.stdout.splitlines()[0] == "removed 1 file(s)"
    assert f"{store}: 0 compiled engine(s)" in cleared.stdout


@pytest.mark.parametrize(
    ("args", "store", "message"),
    [
        (["games", "compile", "nineBoardTicTacToe"], "off", "the engine store is turned off"),
        (["games", "store"], "off", "the engine store is turned off"),
        (["games", "compile", "noSuchGame"], None, "noSuchGame"),
        (
            ["games", "compile", "nineBoardTicTacToe", "--time-limit", "0.5"],
            None,
            "0.5 is not between 1 and 600",
        ),
        (
            ["games", "compile", "nineBoardTicTacToe", "--time-limit", "soon"],
            None,
            "'soon' is not a number of seconds",
        ),
    ],
)
def test_bad_input_gets_one_clear_line(
    tmp_path: Path, args: list[str], store: str | None, message: str
) -> None:
    done = ggp(*args, store=store or tmp_path / "engines")
    assert done.returncode == 2
    assert message in done.stderr
    assert "Traceback" not in done.stderr


def test_a_store_that_cannot_be_used_is_refused_with_its_reason(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    done = ggp("games", "store", store=shared)
    assert done.returncode == 2
    assert f"the engine store at {shared} cannot be used: others may write to it" in done.stderr
    a_file = tmp_path / "file"
    a_file.write_text("")
    assert ggp("games", "store", store=a_file).returncode == 2


def test_a_bad_size_limit_is_refused_before_any_command_runs(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "server.cli", "games"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "GGP_ENGINE_STORE_MB": "lots"},
        cwd=ROOT,
    )
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "ggp games: GGP_ENGINE_STORE_MB is 'lots'; give a whole number of megabytes"
    )
