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


# -- tournaments, lists, figures ---------------------------------------------------------

TOURNAMENT_GAME = "double_tictactoe_dengji"


async def run_tournament(client: TestClient, body: dict[str, Any], seconds: float = 240) -> str:
    response = await client.post("/api/tournaments", json=body, headers=ADMIN_HEADERS)
    assert response.status == 201, await response.text()
    tournament_id: str = (await response.json())["id"]
    async with asyncio.timeout(seconds):
        while True:
            found = await (await client.get(f"/api/tournaments/{tournament_id}")).json()
            if found["status"] not in ("running", "created"):
                break
            await asyncio.sleep(0.3)
    assert found["status"] == "finished", found
    return tournament_id


def cup(fmt: str, players: list[str], **more: Any) -> dict[str, Any]:
    return {
        "name": f"{fmt} cup",
        "game": TOURNAMENT_GAME,
        "format": fmt,
        "players": players,
        "startclock": 3,
        "playclock": 1,
        "seed": 4,
        **more,
    }


def cells(html: str, table_id: str) -> list[list[str]]:
    """The text of each body row's cells of the table with that id."""
    import re

    body = html.split(f'id="{table_id}"', 1)[1].split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    rows = re.findall(r"<tr[^>]*>(.*?)</tr>", body, re.DOTALL)
    return [
        [
            re.sub(r"<[^>]+>", "", cell).strip()
            for cell in re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", row, re.DOTALL)
        ]
        for row in rows
    ]


async def test_a_round_robin_page_shows_the_api_standings_and_a_crosstable_of_its_matches(
    tmp_path: Path, sqlite_url: str
) -> None:
    names = ["rnd", "lgl", "rnd2"]
    async with (
        local_players(["random", "legal", "random"], seed=8) as urls,
        running_service(tmp_path, sqlite_url, concurrency=4) as (_, client),
    ):
        for name, url in zip(names, urls, strict=True):
            await register(client, name, url)
        tournament_id = await run_tournament(client, cup("round_robin", names))
        table = await (await client.get(f"/api/tournaments/{tournament_id}/standings")).json()
        matches = await (await client.get(f"/api/tournaments/{tournament_id}/matches")).json()
        page = await (await client.get(f"/tournaments/{tournament_id}")).text()
        listing = await (await client.get("/tournaments")).text()
        home = await (await client.get("/")).text()
    shown = cells(page, "standings")
    assert [row[1] for row in shown] == [line["player"] for line in table]
    assert [float(row[2]) for row in shown] == [line["points"] for line in table]
    assert [int(row[4]) for row in shown] == [line["wins"] for line in table]
    assert "6 / 6 done" in page
    # the crosstable: what each player scored against each other, from the matches' goals
    expected = {(a, b): 0.0 for a in names for b in names if a != b}
    for match in matches:
        (a, b), (goal_a, goal_b) = match["players"], match["goals"]
        expected[a, b] += 1.0 if goal_a > goal_b else 0.5 if goal_a == goal_b else 0.0
        expected[b, a] += 1.0 if goal_b > goal_a else 0.5 if goal_a == goal_b else 0.0
    for r, row in enumerate(cells(page, "crosstable")):
        for c, text in enumerate(row[1:]):
            if r == c:
                assert text == ""
            else:
                points, played = text.split()
                assert float(points) == expected[names[r], names[c]]
                assert played == "(2)"
    for match in matches:
        assert f'href="/matches/{match["id"]}"' in page
    assert f'href="/tournaments/{tournament_id}"' in listing and "6 / 6 done" in listing
    assert "Tournaments in progress" not in home  # it is finished


async def test_an_elimination_page_draws_the_bracket_with_its_champion(
    tmp_path: Path, sqlite_url: str
) -> None:
    names = ["rnd", "lgl", "rnd2"]
    async with (
        local_players(["random", "legal", "random"], seed=12) as urls,
        running_service(tmp_path, sqlite_url, concurrency=4) as (_, client),
    ):
        for name, url in zip(names, urls, strict=True):
            await register(client, name, url)
        tournament_id = await run_tournament(client, cup("single_elimination", names))
        table = await (await client.get(f"/api/tournaments/{tournament_id}/standings")).json()
        page = await (await client.get(f"/tournaments/{tournament_id}")).text()
    champion = table[0]
    assert champion["status"] == "winner"
    bracket = page.split('id="bracket"', 1)[1].split("<h2>", 1)[0]
    rounds = bracket.split('class="round"')[1:]
    assert len(rounds) == 2 and "Semi-finals" in rounds[0] and "Final" in rounds[1]
    # the top seed has a bye in the first round; the final's winner is the champion
    assert '<span class="name">bye</span>' in rounds[0]
    assert f'<div class="side winner"><span class="name">{champion["player"]}</span>' in rounds[1]
    assert "crosstable" not in page


def test_a_crosstable_counts_every_pair_of_a_three_role_match() -> None:
    from server.tournament import MatchResult, TournamentSpec
    from server.web.site.tournament_tables import crosstable

    spec = TournamentSpec(
        name="t", game="g", format="round_robin", players=["a", "b", "c"], startclock=1, playclock=1
    )
    results = [
        MatchResult(key="1/0/0/0-1-2", players=["a", "b", "c"], goals=[100, 0, 0]),
        MatchResult(key="1/0/0/1-0-2", players=["b", "a", "c"], goals=[50, 50, 0]),
        MatchResult(
            key="2/0/0/1-0-2", players=["b", "a", "c"], goals=[0, 0, 0], aborted_by_server=True
        ),
    ]
    table = crosstable(spec, results)
    assert table[0][0] is None
    # a against b: a higher goal, then the same goal; the aborted match counts for nothing
    assert table[0][1] is not None and table[0][1].points == 1.5 and table[0][1].matches == 2
    assert table[2][0] is not None and table[2][0].points == 0.0
    # c against b: the same goal (0), then a lower one
    assert table[2][1] is not None and table[2][1].points == 0.5


def test_a_bracket_of_five_draws_every_round_before_it_is_played() -> None:
    from server.tournament import TournamentSpec
    from server.web.site.tournament_tables import bracket, round_name

    spec = TournamentSpec(
        name="t",
        game="g",
        format="single_elimination",
        players=["p1", "p2", "p3", "p4", "p5"],
        startclock=1,
        playclock=1,
    )
    rounds = bracket(spec, [])
    assert [len(r) for r in rounds] == [4, 2, 1]
    assert [round_name(n, 3) for n in (1, 2, 3)] == ["Quarter-finals", "Semi-finals", "Final"]
    byes = [tie for tie in rounds[0] if tie.bye]
    assert [tie.high for tie in byes] == ["p1", "p2", "p3"]
    assert rounds[1][0].high == "p1" and rounds[1][0].low is None  # p4 against p5 is not played
    assert rounds[2][0].high is None


def test_game_and_player_figures_from_goals() -> None:
    from server.web.site.figures import game_figures, results_by_role

    figures = game_figures(
        [([100, 0], 9, 1000, 3000), ([50, 50], 11, None, None), ([0, 100], 7, 0, 1000)],
        ["x", "o"],
    )
    assert figures.matches == 3 and figures.average_steps == 9
    assert figures.draw_rate == 1 / 3 and figures.average_seconds == 1.5
    assert [(s.role, s.average_goal, s.wins) for s in figures.seats] == [
        ("x", 50.0, 1),
        ("o", 50.0, 1),
    ]
    table = results_by_role(
        [("g", 0, [100, 0]), ("g", 0, [50, 50]), ("g", 1, [100, 0]), ("h", 2, [1, 2])],
        {"g": ["x", "o"]},
    )
    assert [(r.game, r.role, r.matches, r.wins, r.draws, r.losses) for r in table] == [
        ("g", "x", 2, 1, 1, 0),
        ("g", "o", 1, 0, 0, 1),
    ]


def test_a_long_rating_history_is_thinned_but_keeps_its_ends() -> None:
    from server.web.site.charts import MAX_POINTS, line_chart, thin

    values = [float(n % 7) for n in range(5000)]
    points = thin(values)
    assert len(points) == MAX_POINTS and points[0] == (0, 0.0) and points[-1][0] == 4999
    svg = str(line_chart(values, label="a <rating>"))
    assert svg.startswith("<svg") and "a &lt;rating&gt;" in svg
    assert f'data-points="{MAX_POINTS}"' in svg and "http" not in svg.replace(
        "http://www.w3.org", ""
    )
    assert str(line_chart([], label="none")) == ""


async def test_the_list_pages_page_through_matches_without_reading_their_logs(
    tmp_path: Path, database_url: str
) -> None:
    """On both databases: the pages' own queries."""
    from server.store import MatchStatus
    from server.store.page_reads import SUMMARY_COLUMNS, match_summaries

    assert {"signed_record", "header"}.isdisjoint(c.name for c in SUMMARY_COLUMNS)
    async with running_service(tmp_path, database_url) as (service, client):
        store = service.store
        await store.add_player("a", "http://127.0.0.1:9/")
        for n in range(30):
            await store.import_match(
                f"old-{n:02d}",
                game_name="tictactoex9",
                game_version=1,
                players=["a", None],
                start_clock=5,
                play_clock=1,
                status=MatchStatus.FINISHED,
                end_reason="terminal",
                goals=[100, 0] if n % 2 else [50, 50],
                started_at=1_000 + n,
                log_text="{}",
                source="test",
            )
        summaries = await match_summaries(store, limit=100)
        full = await store.list_matches(limit=100)
        assert summaries == full
        first = await (await client.get("/matches")).text()
        second = await (await client.get("/matches?page=1")).text()
        finished = await (await client.get("/matches?status=finished&page=1")).text()
        wrong = await client.get("/matches?status=won")
        wrong_error = (await wrong.json())["error"]
        games = await (await client.get("/games")).text()
        game = await (await client.get("/games/tictactoex9")).text()
        player = await (await client.get("/players/a")).text()
    assert first.count('<tr data-match="') == 25 and second.count('<tr data-match="') == 5
    assert "old-29" in first and "old-04" in second and "old-05" not in second
    assert 'href="/matches?page=0"' in second and 'rel="next"' in first
    assert "&amp;status=finished" in finished
    assert wrong.status == 400 and wrong_error["field"] == "status"
    assert cells(games, "games")[-1][-1] != ""  # a finished-match count per game
    tictactoe = next(row for row in cells(games, "games") if row[0] == "tictactoex9")
    assert tictactoe[-1] == "30"
    assert '<span id="draw-rate">50%</span>' in game
    assert "Over 30 finished matches" in game
    # the player sat as the first role in all 30: 15 wins, 15 draws
    assert cells(player, "results") == [["tictactoex9", "xplayer", "30", "75.0", "15", "15", "0"]]


async def test_the_home_stream_sends_the_running_matches_then_starts_and_ends(
    tmp_path: Path, sqlite_url: str
) -> None:
    async with (
        local_players(["random", "legal"], seed=3) as (random_url, legal_url),
        running_service(tmp_path, sqlite_url) as (_, client),
    ):
        await register(client, "rnd", random_url)
        await register(client, "lgl", legal_url)
        events: list[tuple[str, Any]] = []
        opened = asyncio.Event()

        async def listen() -> None:
            response = await client.get("/live/events")
            name = ""
            async for raw in response.content:
                line = raw.decode().rstrip("\n")
                if line.startswith("event: "):
                    name = line[7:]
                elif line.startswith("data: "):
                    events.append((name, json.loads(line[6:])))
                    opened.set()
                    if name == "ended":
                        return

        listener = asyncio.create_task(listen())
        await asyncio.wait_for(opened.wait(), 10)
        match_id = await queue(client, "tictactoex9", ["rnd", "lgl"])
        await asyncio.wait_for(listener, 60)
        match = await wait_for_status(client, match_id, {"finished"})
    assert events[0] == ("running", {"matches": []})
    assert events[1] == (
        "started",
        {"id": match_id, "game": "tictactoex9", "players": ["rnd", "lgl"]},
    )
    kind, end = events[2]
    assert kind == "ended" and end["id"] == match_id and end["goals"] == match["goals"]
