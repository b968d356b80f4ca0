"""The pages and their data: event streams of a live match, replays of logs, the other pages."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from server.match.local_players import local_players
from server.records import MatchRecord
from server.web.site.hub import QUEUE_SIZE, LiveHub

from .harness import ADMIN_HEADERS, running_service, wait_for_status


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    """The pages need no PostgreSQL of their own: the store is tested on both elsewhere."""
    return f"sqlite:///{tmp_path / 'site.db'}"


async def read_events(
    client: TestClient, path: str, seconds: float = 60.0
) -> list[tuple[str, Any]]:
    """Every server-sent event of ``path`` until the stream ends."""
    events: list[tuple[str, Any]] = []
    async with asyncio.timeout(seconds):
        response = await client.get(path)
        assert response.headers["Content-Type"].startswith("text/event-stream")
        name = ""
        async for raw in response.content:
            line = raw.decode().rstrip("\n")
            if line.startswith("event: "):
                name = line[7:]
            elif line.startswith("data: "):
                events.append((name, json.loads(line[6:])))
    return events


async def queue(client: TestClient, game: str, players: list[str], playclock: int = 1) -> str:
    response = await client.post(
        "/api/matches",
        json={"game": game, "players": players, "startclock": 5, "playclock": playclock},
        headers=ADMIN_HEADERS,
    )
    assert response.status == 201, await response.text()
    match_id: str = (await response.json())["id"]
    return match_id


async def register(client: TestClient, name: str, url: str) -> None:
    response = await client.post(
        "/api/players", json={"name": name, "url": url}, headers=ADMIN_HEADERS
    )
    assert response.status == 201, await response.text()


async def test_a_live_viewer_and_a_late_viewer_see_every_step_and_the_goals(
    tmp_path: Path, sqlite_url: str
) -> None:
    async with (
        local_players(["random", "legal"], seed=3) as (random_url, legal_url),
        running_service(tmp_path, sqlite_url) as (service, client),
    ):
        await register(client, "rnd", random_url)
        await register(client, "lgl", legal_url)
        match_id = await queue(client, "tictactoex9", ["rnd", "lgl"])
        live = asyncio.create_task(read_events(client, f"/matches/{match_id}/events"))
        match = await wait_for_status(client, match_id, {"finished", "aborted"})
        events = await live
        late = await read_events(client, f"/matches/{match_id}/events")
        log = await (await client.get(f"/api/matches/{match_id}/log")).json()
    for stream in (events, late):
        kinds = [name for name, _ in stream]
        assert kinds[0] == "info" and kinds[-1] == "end"
        steps = [data for name, data in stream if name == "step"]
        assert [step["step"] for step in steps] == list(range(len(log["states"])))
        assert stream[-1][1]["goals"] == match["goals"] == log["goalValues"]
        assert [step["moves"] for step in steps[1:]] == log["moves"]
        board = steps[-1]["board"]["boards"][0]
        assert board["functor"] == "cell" and len(board["boards"]) == 3
    assert stream[0][1]["roles"] == ["xplayer", "oplayer"]


async def test_a_replayed_log_gives_a_frame_per_state_drawn_from_that_state(
    tmp_path: Path, sqlite_url: str
) -> None:
    out = tmp_path / "logs"
    arguments = ["match", "ticTacHeaven", "random", "random", "--out", str(out)]
    arguments += ["--no-sign", "--playclock", "1", "--steps", "12"]
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "server.cli", *arguments, stdout=asyncio.subprocess.DEVNULL
    )
    assert await process.wait() == 0
    (path,) = out.glob("*.json")
    record = MatchRecord.model_validate_json(path.read_text())
    async with running_service(tmp_path / "data", sqlite_url) as (_, client):
        answer = await client.post("/replay/frames", data=path.read_bytes())
        assert answer.status == 200, await answer.text()
        data = await answer.json()
        refused = await client.post("/replay/frames", data=b'{"states": 3}')
        assert refused.status == 400 and (await refused.json())["error"]["message"]
        not_json = await client.post("/replay/frames", data=b"<html>")
        assert not_json.status == 400
    assert len(data["frames"]) == len(record.states)
    last = data["frames"][-1]["board"]
    squares = {
        " ".join(place): content
        for board in last["boards"]
        if board["functor"] == "cell_small"
        for places, rows in zip(board["places"][0], board["boards"][0], strict=True)
        for place_row, row in zip(places, rows, strict=True)
        for place, content in zip(place_row, row, strict=True)
    }
    state = record.states[-1]
    for place, content in squares.items():
        assert f"( cell_small {place} {content or 'b'} )" in state


async def test_pages_answer_html_and_unknown_ones_answer_404(
    tmp_path: Path, sqlite_url: str
) -> None:
    async with running_service(tmp_path, sqlite_url) as (_, client):
        for path, text in (
            ("/", "Recent results"),
            ("/replay", "Replay a match log"),
            ("/games/ticTacHeaven", "gdl-keyword"),
            ("/static/site.js", "EventSource"),
            ("/static/site.css", "@media"),
        ):
            response = await client.get(path)
            assert response.status == 200, path
            assert text in await response.text(), path
        assert (await client.get("/matches/nope")).status == 404
        assert (await client.get("/players/nope")).status == 404
        game = await (await client.get("/games/tictactoex9")).text()
        assert 'data-drawing="{&#34;boards&#34;' in game


async def test_a_slow_viewer_is_dropped_and_never_blocks_publishing() -> None:
    from server.match import StepPlayed
    from server.records import MatchRecord

    hub = LiveHub()
    slow = hub.subscribe("m")
    quick = hub.subscribe("m")
    record = MatchRecord(match_id="m")
    for step in range(QUEUE_SIZE + 5):
        hub.publish(
            StepPlayed(
                match_id="m",
                record=record,
                step=step,
                moves=["noop"],
                errors=[""],
                details=[None],
                response_times=[1],
                state="( (a) )",
                terminal=False,
            )
        )
        if not quick.behind:
            quick.queue.get_nowait()
    assert slow.behind and not quick.behind
    assert hub.viewers("m") == 1 and hub.dropped == 1


async def test_a_seat_takes_only_legal_moves_on_its_turn(tmp_path: Path, sqlite_url: str) -> None:
    async with running_service(tmp_path, sqlite_url) as (_, client):
        wrong = await client.post("/play", data={"game": "tictactoex9", "role": "nobody"})
        assert wrong.status == 400 and "xplayer" in (await wrong.json())["error"]["message"]
        assert (await client.get("/play/nope")).status == 404
        assert (await client.post("/human/nope", data="(info)")).status == 404
        created = await client.post(
            "/play",
            data={"game": "tictactoex9", "role": "oplayer", "opponent": "", "playclock": "30"},
            allow_redirects=False,
        )
        assert created.status == 303, await created.text()
        seat = created.headers["Location"].rsplit("/", 1)[1]
        async with asyncio.timeout(30):
            while True:
                turn = await (await client.get(f"/play/{seat}/turn")).json()
                if turn["turn"] is not None:
                    break
                await asyncio.sleep(0.1)
        assert turn["role"] == "oplayer" and turn["turn"]["step"] == 1
        assert 0 < turn["turn"]["seconds_left"] <= 30
        illegal = await client.post(f"/play/{seat}/move", json={"move": "(mark 9 9 9 9)"})
        assert illegal.status == 409
        legal = turn["turn"]["legal"][0]
        assert (await client.post(f"/play/{seat}/move", json={"move": legal})).status == 200
        matches = await (await client.get("/api/matches")).json()
        (match,) = matches
        assert match["players"][1] == f"human-{seat}"
        async with asyncio.timeout(30):
            while True:
                log = await (await client.get(f"/api/matches/{match['id']}/log")).json()
                if len(log["moves"]) >= 2:
                    break
                await asyncio.sleep(0.1)
        assert log["moves"][1][1].replace(" ", "") == legal.replace(" ", "")
        await client.post(f"/api/matches/{match['id']}/abort", headers=ADMIN_HEADERS)
