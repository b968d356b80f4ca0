"""Every bad input to every sub-command: one line on stderr, a documented exit status,
and nothing written: no log, no output folder, no host key, no earlier log changed."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from server.records import load_record

from .fakes import counting_game, unused_port

GGP = [sys.executable, "-m", "server.cli"]
USAGE, UNREACHABLE = 2, 3


def ggp(*args: str, home: Path, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "GGP_HOST_KEY": str(home / "key" / "host_key.pem")}
    env.pop("GGP_DEBUG", None)
    return subprocess.run(
        [*GGP, *args], capture_output=True, text=True, env=env, timeout=timeout, cwd=home
    )


def snapshot(folder: Path) -> dict[str, bytes]:
    return {
        str(path.relative_to(folder)): path.read_bytes() if path.is_file() else b"<dir>"
        for path in sorted(folder.rglob("*"))
    }


def _files(home: Path) -> None:
    (home / "empty.kif").write_text("   \n")
    (home / "binary.kif").write_bytes(b"(role x)\n\x89PNG\r\n\x1a\n\x00\xff")
    (home / "unbalanced.kif").write_text("(role x)\n(init (cell 1)\n")
    (home / "invalid.kif").write_text("(role x)\n(<= (legal x (go ?y)) (true (at ?z)))\n")
    (home / "counting.kif").write_text(counting_game(2))
    (home / "a-file").write_text("not a folder")
    (home / "garbage.pem").write_text("-----BEGIN PRIVATE KEY-----\nnope\n")
    (home / "logs").mkdir()
    (home / "logs" / "taken.json").write_text('{"matchId": "taken"}')


@dataclass(frozen=True)
class Case:
    args: Callable[[Path, int], list[str]]
    code: int
    says: str


CASES = {
    "empty rule file": Case(
        lambda h, p: ["match", str(h / "empty.kif"), "random"], USAGE, "the rule file is empty"
    ),
    "binary rule file": Case(
        lambda h, p: ["match", str(h / "binary.kif"), "random"], USAGE, "binary.kif:2:1: not a"
    ),
    "unbalanced rule file": Case(
        lambda h, p: ["match", str(h / "unbalanced.kif"), "random"], USAGE, "unbalanced.kif:2:1: "
    ),
    "invalid GDL": Case(
        lambda h, p: ["match", str(h / "invalid.kif"), "random"],
        USAGE,
        "invalid.kif:2:1: invalid GDL: unsafe rule",
    ),
    "missing rule file": Case(lambda h, p: ["match", str(h / "no.kif"), "random"], USAGE, "no.kif"),
    "ftp URL": Case(
        lambda h, p: ["match", "counting.kif", "ftp://127.0.0.1:21/", "random"], USAGE, "ftp://"
    ),
    "port 70000": Case(
        lambda h, p: ["match", "counting.kif", "http://127.0.0.1:70000/", "random"],
        USAGE,
        "70000",
    ),
    "port 0": Case(
        lambda h, p: ["match", "counting.kif", "http://127.0.0.1:0/", "random"],
        USAGE,
        "port 0",
    ),
    "unknown player name": Case(
        lambda h, p: ["match", "counting.kif", "randm", "random"], USAGE, "randm"
    ),
    "too few players": Case(lambda h, p: ["match", "counting.kif", "random"], USAGE, "2 roles"),
    "negative start clock": Case(
        lambda h, p: ["match", "counting.kif", "random", "random", "--startclock", "-1"],
        USAGE,
        "--startclock",
    ),
    "negative play clock": Case(
        lambda h, p: ["match", "counting.kif", "random", "random", "--playclock", "-5"],
        USAGE,
        "--playclock",
    ),
    "negative steps": Case(
        lambda h, p: ["match", "counting.kif", "random", "random", "--steps", "-3"],
        USAGE,
        "--steps",
    ),
    "rules memory too small": Case(
        lambda h, p: ["match", "counting.kif", "random", "random", "--rules-memory", "100"],
        USAGE,
        "--rules-memory",
    ),
    "rules CPU of zero": Case(
        lambda h, p: ["match", "counting.kif", "random", "random", "--rules-cpu", "0"],
        USAGE,
        "--rules-cpu",
    ),
    "slack not a number": Case(
        lambda h, p: ["match", "counting.kif", "random", "random", "--slack", "nan"],
        USAGE,
        "--slack",
    ),
    "unreadable host key": Case(
        lambda h, p: ["match", "counting.kif", "random", "random", "--key-file", "garbage.pem"],
        USAGE,
        "host key",
    ),
    "host key is a folder": Case(
        lambda h, p: ["match", "counting.kif", "random", "random", "--key-file", "logs"],
        USAGE,
        "host key",
    ),
    "unwritable --out": Case(
        lambda h, p: ["match", "counting.kif", "random", "random", "--out", "a-file/logs"],
        USAGE,
        "a-file",
    ),
    "--match-id outside --out": Case(
        lambda h, p: ["match", "counting.kif", "random", "random", "--match-id", "../../x"],
        USAGE,
        "--match-id",
    ),
    "existing match id": Case(
        lambda h, p: [
            "match",
            "counting.kif",
            "random",
            "random",
            "--out",
            "logs",
            "--match-id",
            "taken",
        ],  # fmt: skip
        USAGE,
        "already exists",
    ),
    "the same URL for two roles": Case(
        lambda h, p: ["match", "counting.kif", f"http://127.0.0.1:{p}/", f"127.0.0.1:{p}"],
        USAGE,
        "same player URL",
    ),
    "unreachable player": Case(
        lambda h, p: ["match", "counting.kif", f"http://127.0.0.1:{p}/", "random"],
        UNREACHABLE,
        "no answer to INFO from left at http://127.0.0.1:",
    ),
    "player port 99999": Case(lambda h, p: ["player", "random", "--port", "99999"], USAGE, "99999"),
    "unknown bundled player": Case(
        lambda h, p: ["player", "nobody", "--port", "0"], USAGE, "nobody"
    ),
    "unknown game to show": Case(lambda h, p: ["games", "show", "nope"], USAGE, "nope"),
    "conformance on a file": Case(lambda h, p: ["conformance", "a-file"], USAGE, "not a folder"),
    "conformance time limit 0": Case(
        lambda h, p: ["conformance", "logs", "--time-limit", "0"], USAGE, "--time-limit"
    ),
    "replay a missing log": Case(lambda h, p: ["replay", "none.json"], USAGE, "none.json"),
    "replay a binary log": Case(lambda h, p: ["replay", "binary.kif"], USAGE, "binary.kif"),
    "replay against an empty rule file": Case(
        lambda h, p: ["replay", "logs/taken.json", "--game", "empty.kif"], USAGE, "empty"
    ),
    "verify a missing log": Case(lambda h, p: ["verify", "none.json"], USAGE, "none.json"),
    "verify with a garbage key": Case(
        lambda h, p: ["verify", "logs/taken.json", "--key", "garbage.pem"], USAGE, "key"
    ),
    "key from a garbage file": Case(
        lambda h, p: ["key", "--key-file", "garbage.pem"], USAGE, "garbage.pem"
    ),
    "unknown sub-command": Case(lambda h, p: ["launch"], USAGE, "launch"),
    "lint of a binary file": Case(
        lambda h, p: ["games", "lint", "binary.kif"], USAGE, "binary.kif:2:1: not a text file"
    ),
    "lint of an unknown game": Case(
        lambda h, p: ["games", "lint", "nosuchgame"], USAGE, "nosuchgame"
    ),
}


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_a_bad_input_is_one_line_a_documented_status_and_writes_nothing(
    tmp_path: Path, case: Case
) -> None:
    _files(tmp_path)
    before = snapshot(tmp_path)
    result = ggp(*case.args(tmp_path, unused_port()), home=tmp_path)
    lines = result.stderr.splitlines()
    assert result.returncode == case.code, result.stderr
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert case.says in lines[0]
    assert lines[0].startswith("ggp")
    assert snapshot(tmp_path) == before


def test_an_unreachable_player_is_played_with_allow_unreachable_and_named(tmp_path: Path) -> None:
    _files(tmp_path)
    url = f"http://127.0.0.1:{unused_port()}/"
    result = ggp(
        "match", "counting.kif", url, "legal", "--allow-unreachable",
        "--startclock", "1", "--playclock", "1", "--slack", "0.2", "--out", "logs",
        home=tmp_path,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    lines = result.stdout.strip().splitlines()
    assert lines[0] == f"never answered INFO: left ({url})"
    assert f"warning: left at {url} did not answer INFO" in result.stderr
    record = load_record(tmp_path / lines[-1])
    assert record.is_completed
    assert record.errors is not None and record.errors[1][0] == "CE"
    assert record.player_names_from_host == [url.split("://")[1].rstrip("/"), "legal"]


def test_a_player_port_already_taken_is_one_line_and_status_2(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        result = ggp("player", "random", "--port", str(port), home=tmp_path)
    assert result.returncode == USAGE, result.stderr
    [line] = result.stderr.splitlines()
    assert line.startswith(f"ggp player: cannot listen on 127.0.0.1:{port}: ")
    assert "Traceback" not in result.stderr


def test_games_lint_prints_every_problem_at_its_file_line_and_column(tmp_path: Path) -> None:
    _files(tmp_path)
    (tmp_path / "unsafe.kif").write_text(
        "(role x)\n(init (c 1))\n(legal x go)\n(d 1)\n"
        "(<= (next (c ?y))\n    (true (c ?x))\n    (not (d ?z)))\n"
        "(<= terminal (true (c 2)))\n(goal x 100)\n"
    )
    result = ggp("games", "lint", "unsafe.kif", "invalid.kif", "unbalanced.kif", home=tmp_path)
    assert result.returncode == 1, result.stderr
    assert result.stdout.splitlines() == [
        "unsafe.kif:5:1: error: unsafe rule: these variables appear in no positive literal of "
        "the body: ?y in the head; ?z in (not (d ?z)), "
        "in (<= (next (c ?y)) (true (c ?x)) (not (d ?z)))",
        "unsafe.kif: refused (1 error(s))",
        "invalid.kif:2:1: error: unsafe rule: these variables appear in no positive literal of "
        "the body: ?y in the head, in (<= (legal x (go ?y)) (true (at ?z)))",
        "invalid.kif: error: the game has no goal rule",
        "invalid.kif: error: the game has no terminal rule",
        "invalid.kif: refused (3 error(s))",
        "unbalanced.kif:2:1: error: unbalanced '(': this parenthesis is never closed",
        "unbalanced.kif: refused (1 error(s))",
    ]
    clean = ggp("games", "lint", "counting.kif", "--playouts", "2", home=tmp_path)
    assert clean.returncode == 0, clean.stderr
    assert clean.stdout.splitlines()[-1] == "counting.kif: ok (0 error(s))"
