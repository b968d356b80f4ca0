"""The requests we send are byte for byte those GGP-Base's server sent for the same match.

The captures in ``../shared/protocol`` hold every byte GGP-Base's game server wrote to
its players; replaying the same match (same id, clocks, player names and moves)
through our match runner must produce exactly the same requests.
"""

from __future__ import annotations

import asyncio
import json

import pytest

from server.gdl import Game
from server.match import MatchConfig, MatchRunner, Player
from server.protocol import Start, parse_message

from .fakes import FakePlayer
from .transcripts import requests_by_role, shared_file


def _capture(transcript: str, record: str) -> tuple[dict[str, list[bytes]], dict]:
    transcript_path, record_path = shared_file(transcript), shared_file(record)
    return requests_by_role(transcript_path), json.loads(record_path.read_text())


def _start_of(requests: list[bytes]) -> Start:
    message = parse_message(requests[0].partition(b"\r\n\r\n")[2].decode())
    assert isinstance(message, Start)
    return message


def _by_receiver(captured: dict[str, list[bytes]]) -> dict[bytes, list[bytes]]:
    """The captured requests keyed by their ``Receiver`` header (the host's player name)."""
    result = {}
    for requests in captured.values():
        receiver = requests[0].split(b"Receiver: ", 1)[1].split(b"\r\n", 1)[0]
        result[receiver] = requests
    return result


@pytest.mark.parametrize(
    ("transcript", "record"),
    [
        ("ttt-transcript.txt", "ttt-match.json"),
        ("nineboard-transcript.txt", "nineboard-match.json"),
    ],
)
async def test_a_whole_match_sends_the_bytes_ggp_base_sent(transcript: str, record: str) -> None:
    captured, original = _capture(transcript, record)
    game = Game(_start_of(next(iter(captured.values()))).rules)
    names = original["playerNamesFromHost"]
    scripts = [[moves[index] for moves in original["moves"]] for index in range(len(names))]
    fakes = [FakePlayer(script=script) for script in scripts]
    async with fakes[0], fakes[1]:
        runner = MatchRunner(
            game,
            [Player(name, fake.url) for name, fake in zip(names, fakes, strict=True)],
            MatchConfig(
                start_clock=original["startClock"], play_clock=original["playClock"], seed=1
            ),
            match_id=original["matchId"],
        )
        ours = await runner.run()

    assert ours.moves == original["moves"]
    assert ours.goal_values == original["goalValues"]
    expected = _by_receiver(captured)
    for name, fake in zip(names, fakes, strict=True):
        assert fake.requests == expected[name.encode()]


async def test_an_aborted_match_sends_the_bytes_ggp_base_sent() -> None:
    captured, original = _capture("abort-transcript.txt", "abort-match.json")
    game = Game(_start_of(next(iter(captured.values()))).rules)
    names = original["playerNamesFromHost"]
    fakes = [FakePlayer(faults={1: "sleep"}, delay=3.0) for _ in names]
    async with fakes[0], fakes[1]:
        runner = MatchRunner(
            game,
            [Player(name, fake.url) for name, fake in zip(names, fakes, strict=True)],
            MatchConfig(start_clock=original["startClock"], play_clock=original["playClock"]),
            match_id=original["matchId"],
        )
        task = asyncio.create_task(runner.run())
        await asyncio.gather(*(fake.received(2) for fake in fakes))
        runner.abort()
        record = await task
        await asyncio.gather(*(fake.received(3) for fake in fakes))

    assert record.is_aborted and not record.is_completed
    assert record.goal_values is None
    expected = _by_receiver(captured)
    for name, fake in zip(names, fakes, strict=True):
        assert fake.requests == expected[name.encode()]
