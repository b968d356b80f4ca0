"""The user's round trip: `ggp match` writes a signed log, `ggp replay` and `ggp verify`
accept it, and a changed byte is caught by both."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

GGP = [sys.executable, "-m", "server.cli"]


@pytest.fixture
def environment(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "GGP_HOST_KEY": str(tmp_path / "host" / "host_key.pem")}


def ggp(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*GGP, *args], capture_output=True, text=True, env=env, timeout=120)


def test_a_match_played_by_bundled_players_replays_and_verifies(
    tmp_path: Path, environment: dict[str, str]
) -> None:
    played = ggp(
        "match", "nineBoardTicTacToe", "random", "legal",
        "--startclock", "5", "--playclock", "1", "--slack", "0.5", "--seed", "3",
        "--out", str(tmp_path / "logs"),
        env=environment,
    )  # fmt: skip
    assert played.returncode == 0, played.stderr
    log = played.stdout.strip().splitlines()[-1]

    replayed = ggp("replay", "--check", log, env=environment)
    verified = ggp("verify", log, env=environment)

    assert replayed.returncode == 0, replayed.stdout
    assert replayed.stdout.startswith("OK: ")
    assert verified.returncode == 0, verified.stderr
    assert "valid signature" in verified.stdout

    record = json.loads(Path(log).read_text())
    record["moves"][0] = list(reversed(record["moves"][0]))
    Path(log).write_text(json.dumps(record))

    assert ggp("replay", "--check", log, env=environment).stdout.startswith(
        f"MISMATCH in {record['matchId']} at step 1: "
    )
    assert "bad signature" in ggp("verify", log, env=environment).stderr


@pytest.fixture
def silent_player() -> Iterator[str]:
    """A URL where a player accepts connections but never answers."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/"


def test_an_interrupted_match_leaves_a_signed_aborted_log_that_replays(
    tmp_path: Path, environment: dict[str, str], silent_player: str
) -> None:
    process = subprocess.Popen(
        [
            *GGP, "match", "nineBoardTicTacToe", silent_player, "random",
            "--startclock", "60", "--out", str(tmp_path / "logs"),
            "--allow-unreachable", "--ping-timeout", "0.2",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environment,
    )  # fmt: skip
    assert process.stderr is not None
    first_line = process.stderr.readline()  # the silent player is named
    assert first_line.startswith("warning: xPlayer at ")
    assert process.stderr.readline().startswith("match ")  # the match has begun: START is out
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)
    log = out.strip().splitlines()[-1]

    replayed = ggp("replay", "--check", log, env=environment)
    verified = ggp("verify", log, env=environment)

    assert process.returncode == 130, err
    assert replayed.returncode == 0, replayed.stdout
    assert replayed.stdout.startswith("OK (aborted after 0 steps): ")
    assert verified.returncode == 0, verified.stderr
