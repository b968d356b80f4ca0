"""``ggp match``: one match from the command line, progress on stderr, log path last."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from counting_player import player_counting_connections

from server.records import MatchRecord, load_record
from server.records.signing import load_host_key, verify_record_file

from .fakes import FakePlayer, counting_game


def _environment(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "GGP_HOST_KEY": str(tmp_path / "host_key.pem")}


async def _ggp(*args: str, env: dict[str, str]) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "server.cli",
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
    )
    out, err = await process.communicate()
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


async def _counting_match(tmp_path: Path, *args: str, out: Path | None = None) -> MatchRecord:
    """``ggp match`` of a three-step counting game between ``args`` (players, then any
    options), unsigned, into ``out`` (default ``tmp_path``); the log it wrote."""
    rules = tmp_path / "counting.kif"
    rules.write_text(counting_game(3))
    code, stdout, err = await _ggp(
        "match", str(rules), *args,
        "--startclock", "5", "--playclock", "1", "--slack", "0.5",
        "--no-sign", "--out", str(out or tmp_path),
        env=_environment(tmp_path),
    )  # fmt: skip
    assert code == 0, err
    return load_record(stdout.strip().splitlines()[-1])


async def test_a_match_between_bundled_players_prints_goals_then_the_log_path(
    tmp_path: Path,
) -> None:
    code, out, err = await _ggp(
        "match", "double_tictactoe_dengji", "random", "legal",
        "--startclock", "5", "--playclock", "1", "--slack", "0.5",
        "--seed", "4", "--out", str(tmp_path / "logs"),
        env=_environment(tmp_path),
    )  # fmt: skip
    assert code == 0, err
    lines = out.strip().splitlines()
    record = load_record(lines[-1])
    assert Path(lines[-1]).parent == tmp_path / "logs"
    assert record.goal_values is not None
    x_goal, o_goal = record.goal_values
    assert lines[-2] == f"goals: xplayer {x_goal}, oplayer {o_goal}"
    assert record.is_completed and record.substitute_seed == 4
    assert record.player_names_from_host == ["random", "legal"]
    host_key = load_host_key(tmp_path / "host_key.pem")
    assert verify_record_file(lines[-1], host_key.public_key()).ok
    assert "step 1:" in err and "ended:" in err


async def test_a_kif_file_and_a_player_url_work_too(tmp_path: Path) -> None:
    rules = tmp_path / "counting.kif"
    rules.write_text(counting_game(3))
    async with FakePlayer(faults={2: "garbage"}) as fake:
        code, out, err = await _ggp(
            "match", str(rules), fake.url, "legal",
            "--startclock", "5", "--playclock", "1", "--slack", "0.5",
            "--policy", "first", "--no-sign", "--out", str(tmp_path),
            env=_environment(tmp_path),
        )  # fmt: skip
    assert code == 0, err
    record = load_record(out.strip().splitlines()[-1])
    assert record.game_name == "counting"
    assert record.errors is not None and record.errors[2] == ["IL null", ""]
    assert record.moves[1][0] == "noop"
    assert record.host_signature is None
    assert record.player_names_from_host == ["Fake", "legal"]  # the name it gave in INFO
    assert "errors: left IL null" in err


async def test_the_wrong_number_of_players_is_a_usage_error(tmp_path: Path) -> None:
    code, out, err = await _ggp("match", "tictactoex9", "random", env=_environment(tmp_path))
    assert code == 2 and out == ""
    assert "2 roles (xplayer, oplayer)" in err


async def test_an_unknown_game_is_a_usage_error(tmp_path: Path) -> None:
    code, _, err = await _ggp("match", "noSuchGame", "random", env=_environment(tmp_path))
    assert code == 2 and "noSuchGame" in err


async def test_a_move_in_the_wrong_case_is_illegal_unless_lenient_case(tmp_path: Path) -> None:
    codes = {}
    for flag in ((), ("--lenient-case",)):
        async with FakePlayer(faults={2: "upper"}) as fake:
            record = await _counting_match(
                tmp_path, fake.url, "legal", *flag, out=tmp_path / str(len(flag))
            )
        assert record.errors is not None
        codes[flag] = record.errors[2]
    assert codes[()] == ["IL NOOP", ""]  # as GGP-Base records it
    assert codes[("--lenient-case",)] == ["", ""]


async def test_keep_alive_asks_for_kept_connections_and_still_plays_players_that_close(
    tmp_path: Path,
) -> None:
    async with FakePlayer() as fake:  # answers HTTP/1.0 and closes, as GGP-Base's players
        record = await _counting_match(tmp_path, fake.url, "legal", "--keep-alive")
    assert record.is_completed and not any(any(codes) for codes in record.errors or [])
    matched = [request for request in fake.requests if b"( INFO" not in request]
    assert len(matched) == len(record.moves) + 2  # START, every PLAY, STOP
    assert all(b"\r\nConnection: keep-alive\r\n" in request for request in matched)


async def test_by_default_a_player_gets_kept_connections_when_its_ping_kept_one_open(
    tmp_path: Path,
) -> None:
    async with (
        player_counting_connections(5) as (modern_url, seen),
        FakePlayer() as old,  # answers HTTP/1.0 and closes, as GGP-Base's players
    ):
        record = await _counting_match(tmp_path, modern_url, old.url)
    assert record.is_completed
    messages = len(record.moves) + 2  # START, every PLAY, STOP
    assert len(seen) == messages + 1  # and the INFO ping, on a connection of its own
    assert len({id(transport) for transport in seen[1:]}) == 1
    match_requests = [request for request in old.requests if b"( INFO" not in request]
    assert len(match_requests) == messages
    assert not any(b"Connection" in request for request in match_requests)  # GGP-Base's bytes


async def test_no_keep_alive_opens_a_connection_per_message_even_for_players_that_keep_them(
    tmp_path: Path,
) -> None:
    async with player_counting_connections(6) as (url, seen):
        record = await _counting_match(tmp_path, url, "legal", "--no-keep-alive")
    messages = len(record.moves) + 2
    assert len({id(transport) for transport in seen}) == messages + 1
