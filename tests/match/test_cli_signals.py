"""Stopping ``ggp match``: SIGTERM and SIGINT abort it cleanly, SIGKILL takes its players along.

Each test runs the real command as a subprocess against real players: a ``ggp player``
process and a scripted player that records every message and stalls on the first PLAY,
so the signal always arrives mid-match.
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from process_table import alive, children, command_line

from server.match import PlayerAddress, PlayerStatus, ping_player
from server.protocol import Abort
from server.records import EndReason, load_record

from .fakes import FakePlayer, counting_game

GGP = [sys.executable, "-m", "server.cli"]


def _environment(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "GGP_HOST_KEY": str(tmp_path / "host_key.pem")}


@asynccontextmanager
async def ggp_player(tmp_path: Path) -> AsyncIterator[str]:
    """``ggp player random`` on a free port; its URL."""
    process = await asyncio.create_subprocess_exec(
        *GGP, "player", "random", "--port", "0",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        env=_environment(tmp_path),
    )  # fmt: skip
    try:
        assert process.stdout is not None
        line = (await asyncio.wait_for(process.stdout.readline(), 60)).decode()
        found = re.fullmatch(r"listening on (http://\S+)\n", line)
        assert found, line
        yield found[1]
    finally:
        process.terminate()
        await asyncio.wait_for(process.wait(), 30)


async def _start_match(
    tmp_path: Path, *players: str, extra: tuple[str, ...] = ()
) -> asyncio.subprocess.Process:
    rules = tmp_path / "counting.kif"
    rules.write_text(counting_game(5))
    return await asyncio.create_subprocess_exec(
        *GGP, "match", str(rules), *players,
        "--startclock", "3", "--playclock", "20", "--slack", "0.5",
        "--out", str(tmp_path / "logs"), "--ping-timeout", "20", *extra,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        env=_environment(tmp_path),
    )  # fmt: skip


async def _read_until(process: asyncio.subprocess.Process, prefix: str) -> list[str]:
    """Stderr lines up to and including the first that starts with ``prefix``."""
    assert process.stderr is not None
    lines: list[str] = []
    while True:
        line = (await asyncio.wait_for(process.stderr.readline(), 60)).decode()
        assert line, f"ggp match ended early: {lines}"
        lines.append(line)
        if line.startswith(prefix):
            return lines


@pytest.mark.parametrize(
    ("signal_number", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)], ids=["TERM", "INT"]
)
async def test_a_signal_aborts_the_match_and_keeps_a_signed_aborted_log(
    tmp_path: Path, signal_number: int, code: int
) -> None:
    async with ggp_player(tmp_path) as player, FakePlayer(faults={1: "sleep"}, delay=30) as fake:
        process = await _start_match(tmp_path, player, fake.url)
        before = await _read_until(process, "start:")  # START done; PLAY 1 is out
        process.send_signal(signal_number)
        out, err = await asyncio.wait_for(process.communicate(), 30)
        stderr = "".join(before) + err.decode()
        after = await ping_player(PlayerAddress.parse(player))
        verified = await asyncio.create_subprocess_exec(
            *GGP, "verify", out.decode().strip().splitlines()[-1],
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            env=_environment(tmp_path),
        )  # fmt: skip
        verdict, _ = await verified.communicate()
    assert process.returncode == code, stderr
    assert "Traceback" not in stderr
    assert f"stopped by {signal.Signals(signal_number).name}" in stderr
    record = load_record(out.decode().strip().splitlines()[-1])
    assert record.is_aborted and not record.is_completed
    assert record.end_reason is EndReason.ABORTED
    assert record.host_signature is not None
    assert record.player_names_from_host == ["Random", "Fake"]
    assert verified.returncode == 0, verdict
    assert any(isinstance(message, Abort) for message in fake.messages)
    assert after.status is PlayerStatus.AVAILABLE  # the ggp player got ABORT too


async def test_a_signal_before_the_match_stops_it_and_writes_nothing(tmp_path: Path) -> None:
    """While players are pinged, a signal just ends the command."""
    pinged = asyncio.Event()
    listener = await asyncio.start_server(lambda r, w: pinged.set(), "127.0.0.1", 0)  # silent
    port = listener.sockets[0].getsockname()[1]
    try:
        process = await _start_match(
            tmp_path, f"http://127.0.0.1:{port}/", "random", extra=("--ping-timeout", "30")
        )
        await asyncio.wait_for(pinged.wait(), 60)  # the ping is under way
        process.send_signal(signal.SIGTERM)
        out, err = await asyncio.wait_for(process.communicate(), 30)
    finally:
        listener.close()
    assert process.returncode == 143, err
    assert err.decode().splitlines() == ["ggp match: stopped by SIGTERM before the match began"]
    assert out == b""
    assert not (tmp_path / "logs").exists()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
async def test_sigkill_of_the_match_takes_its_bundled_players_along(tmp_path: Path) -> None:
    async with FakePlayer(faults={1: "sleep"}, delay=30) as fake:
        process = await _start_match(tmp_path, "random", fake.url)
        await _read_until(process, "start:")
        started = children(process.pid)  # the bundled player and the rules process
        players = [pid for pid in started if " -m players " in command_line(pid)]
        assert len(players) == 1 and alive(players[0])
        process.kill()
        await process.wait()
        await asyncio.sleep(1.0)
    assert not [pid for pid in started if alive(pid)]
