"""A player forgets a match whose server vanished without STOP or ABORT, and says so."""

from __future__ import annotations

import asyncio
import re
import sys
import time

from player_http import send, start_message

from server.protocol import parse_info_reply, parse_move_reply


async def _status(url: str) -> str | None:
    return parse_info_reply((await send(url, "( INFO )")).body).status


async def _player(*extra: str) -> tuple[asyncio.subprocess.Process, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "players", "random", "--port", "0", *extra,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert process.stdout is not None
    line = (await asyncio.wait_for(process.stdout.readline(), 60)).decode()
    found = re.fullmatch(r"listening on (http://\S+)\n", line)
    assert found, line
    return process, found[1]


async def _stop(process: asyncio.subprocess.Process) -> str:
    process.terminate()
    _, err = await asyncio.wait_for(process.communicate(), 30)
    return err.decode()


async def _until_available(url: str, within: float) -> float:
    """Seconds until the player answers available (fails past ``within``)."""
    started = time.monotonic()
    while await _status(url) != "available":
        assert time.monotonic() - started < within, "the player stayed busy"
        await asyncio.sleep(0.1)
    return time.monotonic() - started


async def test_a_player_whose_server_vanishes_after_start_is_available_again() -> None:
    process, url = await _player("--silence-margin", "0.5")
    try:
        started = time.monotonic()
        assert (await send(url, start_message("gone.1", "left", 1, 1))).body == "ready"
        assert await _status(url) == "busy"
        await _until_available(url, within=15)
        # not before the start clock (1 s) plus the margin (0.5 s) ran out
        assert time.monotonic() - started >= 1.5
        assert (await send(url, start_message("next.1", "left", 5, 3))).body == "ready"
    finally:
        err = await _stop(process)
    assert "match gone.1: no message from the server" in err
    assert "forgetting the match" in err
    assert "Traceback" not in err


async def test_the_silence_is_counted_from_the_last_play() -> None:
    process, url = await _player("--silence-margin", "0.5")
    try:
        assert (await send(url, start_message("gone.2", "left", 3, 6))).body == "ready"
        await asyncio.sleep(0.5)
        sent = time.monotonic()  # the player receives the PLAY after this
        parse_move_reply((await send(url, "( PLAY gone.2 nil )")).body)
        await asyncio.sleep(4)  # past start clock + margin after START, not after PLAY
        assert await _status(url) == "busy"
        await _until_available(url, within=20)
        assert time.monotonic() - sent >= 6.5  # the play clock (6 s) plus the margin
    finally:
        err = await _stop(process)
    assert "match gone.2: no message from the server" in err


async def test_a_server_that_keeps_talking_keeps_its_match() -> None:
    process, url = await _player("--silence-margin", "0.5")
    try:
        assert (await send(url, start_message("kept.1", "left", 2, 2))).body == "ready"
        for _ in range(4):
            await asyncio.sleep(0.6)
            parse_move_reply((await send(url, "( PLAY kept.1 nil )")).body)
        assert await _status(url) == "busy"
        assert (await send(url, "( ABORT kept.1 )")).body == "aborted"
        assert await _status(url) == "available"
    finally:
        err = await _stop(process)
    assert "forgetting" not in err
