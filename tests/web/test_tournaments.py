"""Tournaments through the API: bundled player processes, a real service, every format."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from server.league.ratings import compute
from server.match.local_players import local_players
from server.store import TournamentStore
from server.tournament import TournamentSpec, standings

from .harness import ADMIN_HEADERS, running_service, wait_for_status

GAME = "double_tictactoe_dengji"


@pytest.fixture(autouse=True)
def no_failed_passes(caplog: pytest.LogCaptureFixture) -> Iterator[None]:
    """Each test ends with no pass of the driver, catch-up of the ratings or match having
    failed: the driver tries a failed pass again, so a fault in scheduling would otherwise
    only slow a tournament down."""
    caplog.set_level(logging.ERROR, logger="server")
    yield
    failed = [
        record.getMessage()
        for record in caplog.records
        if record.levelno >= logging.ERROR
        and record.name.startswith(("server.league", "server.runner"))
    ]
    assert failed == []


async def register(client: TestClient, players: dict[str, str]) -> None:
    for name, url in players.items():
        response = await client.post(
            "/api/players", json={"name": name, "url": url}, headers=ADMIN_HEADERS
        )
        assert response.status == 201, await response.text()


def spec(fmt: str, players: list[str], **more: Any) -> dict[str, Any]:
    return {
        "name": f"{fmt} cup",
        "game": GAME,
        "format": fmt,
        "players": players,
        "matches_per_seating": 1,
        "startclock": 3,
        "playclock": 1,
        "seed": 11,
        **more,
    }


async def run_to_end(client: TestClient, body: dict[str, Any], seconds: float = 240) -> str:
    response = await client.post("/api/tournaments", json=body, headers=ADMIN_HEADERS)
    assert response.status == 201, await response.text()
    tournament_id: str = (await response.json())["id"]
    await wait_until_finished(client, tournament_id, seconds)
    return tournament_id


async def wait_until_finished(client: TestClient, tournament_id: str, seconds: float) -> None:
    async with asyncio.timeout(seconds):
        while True:
            tournament = await (await client.get(f"/api/tournaments/{tournament_id}")).json()
            if tournament["status"] not in ("running", "created"):
                break
            await asyncio.sleep(0.3)
    assert tournament["status"] == "finished", tournament


async def test_a_round_robin_runs_to_the_end_and_its_standings_match_its_matches(
    tmp_path: Path, database_url: str
) -> None:
    async with (
        local_players(["random", "legal", "random"], seed=5) as urls,
        running_service(tmp_path, database_url, concurrency=4) as (service, client),
    ):
        names = ["rnd", "lgl", "rnd2"]
        await register(client, dict(zip(names, urls, strict=True)))
        tournament_id = await run_to_end(client, spec("round_robin", names))
        matches = await (await client.get(f"/api/tournaments/{tournament_id}/matches")).json()
        # 3 pairs x 2 seatings, each played once, each finished
        assert sorted(m["schedule_key"] for m in matches) == sorted(
            {m["schedule_key"] for m in matches}
        )
        assert len(matches) == 6 and {m["status"] for m in matches} == {"finished"}
        table = await (await client.get(f"/api/tournaments/{tournament_id}/standings")).json()
        assert [line["player"] for line in table] and {line["player"] for line in table} == set(
            names
        )
        # points from the goals of the matches, by hand: 1 a win, 0.5 a draw
        points = dict.fromkeys(names, 0.0)
        for match in matches:
            (a, b), (ga, gb) = match["players"], match["goals"]
            points[a] += 1 if ga > gb else 0.5 if ga == gb else 0
            points[b] += 1 if gb > ga else 0.5 if ga == gb else 0
        assert {line["player"]: line["points"] for line in table} == points
        assert [line["points"] for line in table] == sorted(points.values(), reverse=True)
        assert sum(line["played"] for line in table) == 12
        detail = await (await client.get(f"/api/tournaments/{tournament_id}")).json()
        assert detail["progress"]["total"] == 6 and detail["progress"]["finished"] == 6
        # ratings moved with every match, and recomputing them gives the same figures
        await service.tournaments.run_pass()  # type: ignore[union-attr]
        ratings = await (await client.get("/api/ratings", params={"game": GAME})).json()
        assert {r["player"] for r in ratings} == set(names)
        assert all(r["matches"] == 4 for r in ratings)
        history = await (await client.get("/api/players/rnd/ratings")).json()
        assert len([h for h in history["history"] if h["game"] == "*"]) == 4
        figures = await (await client.get("/api/players/lgl/figures")).json()
        overall = next(f for f in figures if f["role"] is None)
        assert overall["game"] == GAME and overall["matches"] == 4
        lgl_goals = [
            goal
            for m in matches
            for name, goal in zip(m["players"], m["goals"], strict=True)
            if name == "lgl"
        ]
        assert overall["average_goal"] == sum(lgl_goals) / 4
        assert {f["role"] for f in figures} == {None, "xplayer", "oplayer"}
        store = TournamentStore(service.store)
        current, _ = compute(await store.finished_matches())
        stored = {(r.scope, r.player): r for s in ("*", GAME) for r in await store.ratings(s)}
        assert stored == {(r.scope, r.player): r for r in current}


async def test_a_match_queued_by_hand_in_a_tournaments_name_stays_out_of_its_standings(
    tmp_path: Path, database_url: str
) -> None:
    async with (
        local_players(["random", "legal"], seed=5) as urls,
        running_service(tmp_path, database_url) as (service, client),
    ):
        names = ["rnd", "lgl"]
        await register(client, dict(zip(names, urls, strict=True)))
        created = await client.post(
            "/api/tournaments",
            json={**spec("round_robin", names), "start": False},
            headers=ADMIN_HEADERS,
        )
        assert created.status == 201, await created.text()
        tournament_id = (await created.json())["id"]
        # the tournament's oldest match is one queued by hand under its name
        queued = await client.post(
            "/api/matches",
            json={"game": GAME, "players": [None, None], "tournament": tournament_id},
            headers=ADMIN_HEADERS,
        )
        assert queued.status == 201, await queued.text()
        by_hand = (await queued.json())["id"]
        assert (await wait_for_status(client, by_hand, {"finished", "aborted"}))[
            "status"
        ] == "finished"
        started = await client.post(
            f"/api/tournaments/{tournament_id}/start", headers=ADMIN_HEADERS
        )
        assert started.status == 200, await started.text()
        await wait_until_finished(client, tournament_id, 120)

        matches = await (await client.get(f"/api/tournaments/{tournament_id}/matches")).json()
        assert matches[0]["id"] == by_hand and matches[0]["schedule_key"] is None
        scheduled = [match for match in matches if match["schedule_key"] is not None]
        assert len(scheduled) == 2 and {m["status"] for m in scheduled} == {"finished"}
        table = await (await client.get(f"/api/tournaments/{tournament_id}/standings")).json()
        assert {line["player"]: line["played"] for line in table} == {"rnd": 2, "lgl": 2}
        assert sum(line["points"] for line in table) == 2
        detail = await (await client.get(f"/api/tournaments/{tournament_id}")).json()
        assert detail["progress"]["finished"] == 2


@pytest.mark.parametrize(
    ("fmt", "more", "expected_matches"),
    [
        ("swiss", {"rounds": 2}, None),
        ("single_elimination", {}, None),
    ],
)
async def test_each_two_role_format_runs_to_the_end_through_the_service(
    tmp_path: Path,
    database_url: str,
    fmt: str,
    more: dict[str, Any],
    expected_matches: int | None,
) -> None:
    async with (
        local_players(["random", "legal", "random"], seed=3) as urls,
        running_service(tmp_path, database_url, concurrency=4) as (service, client),
    ):
        names = ["a", "b", "c"]
        await register(client, dict(zip(names, urls, strict=True)))
        tournament_id = await run_to_end(client, spec(fmt, names, **more))
        matches = await (await client.get(f"/api/tournaments/{tournament_id}/matches")).json()
        assert matches and {m["status"] for m in matches} == {"finished"}
        table = await (await client.get(f"/api/tournaments/{tournament_id}/standings")).json()
        assert [line["rank"] for line in table] == [1, 2, 3]
        if fmt == "swiss":
            assert sum(line["byes"] for line in table) == 2  # 3 players: a bye each round
        else:
            assert table[0]["status"] == "winner"
        # the standings are the core's, from the stored results
        driver = service.tournaments
        assert driver is not None
        row = await driver.tournaments.get(tournament_id)
        results, _ = await driver.results(row)
        expected = standings(TournamentSpec.model_validate(row.spec), results)
        assert [line.model_dump(mode="json") for line in expected] == table


async def test_a_ladder_runs_until_cancelled(tmp_path: Path, database_url: str) -> None:
    async with (
        local_players(["random", "legal"], seed=3) as urls,
        running_service(tmp_path, database_url, concurrency=2) as (service, client),
    ):
        await register(client, {"a": urls[0], "b": urls[1]})
        response = await client.post(
            "/api/tournaments", json=spec("ladder", ["a", "b"]), headers=ADMIN_HEADERS
        )
        tournament_id = (await response.json())["id"]
        async with asyncio.timeout(120):
            while True:
                matches = await (
                    await client.get(f"/api/tournaments/{tournament_id}/matches")
                ).json()
                if sum(m["status"] == "finished" for m in matches) >= 2:
                    break
                await asyncio.sleep(0.3)
        response = await client.post(
            f"/api/tournaments/{tournament_id}/cancel", headers=ADMIN_HEADERS
        )
        assert response.status == 200 and (await response.json())["status"] == "cancelled"
        table = await (await client.get(f"/api/tournaments/{tournament_id}/standings")).json()
        assert sum(line["played"] for line in table) >= 4


async def test_spec_errors_name_the_field_and_actions_need_the_admin_token(
    tmp_path: Path, database_url: str
) -> None:
    async with running_service(tmp_path, database_url) as (service, client):
        await register(client, {"p1": "http://127.0.0.1:1/", "p2": "http://127.0.0.1:2/"})
        cases = [
            ({**spec("swiss", ["p1", "p2"])}, "rounds"),
            ({**spec("round_robin", ["p1", "p2"]), "playclock": 0}, "playclock"),
            ({**spec("round_robin", ["p1", "p2"]), "format": "knockout"}, "format"),
            ({**spec("round_robin", ["p1", "nobody"])}, "players.1"),
            ({**spec("round_robin", ["p1", "p1"])}, "players"),
            ({**spec("round_robin", ["p1", "p2"]), "game": "chess"}, "game"),
            ({**spec("round_robin", ["p1", "p2"]), "colour": "red"}, "colour"),
        ]
        for body, field in cases:
            response = await client.post("/api/tournaments", json=body, headers=ADMIN_HEADERS)
            answer = await response.json()
            assert response.status == 400, (body, answer)
            assert answer["error"]["field"] == field, answer
        body = {**spec("round_robin", ["p1", "p2"]), "start": False}
        response = await client.post("/api/tournaments", json=body)
        assert response.status == 401
        owner = await client.post(
            "/api/players",
            json={"name": "p3", "url": "http://127.0.0.1:3/", "owner": "someone"},
            headers=ADMIN_HEADERS,
        )
        owner_headers = {"Authorization": f"Bearer {(await owner.json())['owner_token']}"}
        response = await client.post("/api/tournaments", json=body, headers=owner_headers)
        assert response.status == 403
        response = await client.post("/api/tournaments", json=body, headers=ADMIN_HEADERS)
        tournament_id = (await response.json())["id"]
        assert (await response.json())["status"] == "created"
        for action in ("start", "pause", "resume", "cancel"):
            path = f"/api/tournaments/{tournament_id}/{action}"
            assert (await client.post(path)).status == 401
            assert (await client.post(path, headers=owner_headers)).status == 403
            response = await client.post(path, headers=ADMIN_HEADERS)
            assert response.status == 200, await response.text()
        response = await client.post(
            f"/api/tournaments/{tournament_id}/resume", headers=ADMIN_HEADERS
        )
        assert response.status == 409
        trail = await service.store.audit_trail()
        actions = [
            (line["actor"], line["action"]) for line in trail if line["target"] == tournament_id
        ]
        assert actions[:5] == [
            ("admin", "tournament.cancel"),
            ("admin", "tournament.resume"),
            ("admin", "tournament.pause"),
            ("admin", "tournament.start"),
            ("admin", "tournament.create"),
        ]
        document = await (await client.get("/openapi.json")).json()
        for path in (
            "/api/tournaments",
            "/api/tournaments/{id}/standings",
            "/api/ratings",
            "/api/players/{name}/ratings",
            "/api/tournaments/{id}/cancel",
        ):
            assert path in document["paths"]


@pytest.mark.parametrize("rule", ["forfeit", "pause"])
async def test_a_player_that_cannot_join_is_handled_by_the_failure_rule(
    tmp_path: Path, database_url: str, rule: str
) -> None:
    from .test_restart import free_port

    async with (
        local_players(["random", "legal"], seed=3) as urls,
        running_service(tmp_path, database_url, concurrency=2) as (service, client),
    ):
        ghost = f"http://127.0.0.1:{free_port()}/"  # nobody listens there
        await register(client, {"a": urls[0], "b": urls[1], "ghost": ghost})
        body = spec("round_robin", ["a", "b", "ghost"], failure_rule=rule)
        response = await client.post("/api/tournaments", json=body, headers=ADMIN_HEADERS)
        tournament_id = (await response.json())["id"]
        async with asyncio.timeout(120):
            while True:
                tournament = await (await client.get(f"/api/tournaments/{tournament_id}")).json()
                if tournament["status"] != "running":
                    break
                await asyncio.sleep(0.3)
        matches = await (await client.get(f"/api/tournaments/{tournament_id}/matches")).json()
        unjoined = [m for m in matches if m["end_reason"] == "player_unavailable"]
        assert len(unjoined) == 2 and all("ghost" in m["players"] for m in unjoined)
        if rule == "pause":
            assert tournament["status"] == "paused"
            assert tournament["pause_reason"].startswith("ghost: could not join 2 matches")
            table = await (await client.get(f"/api/tournaments/{tournament_id}/standings")).json()
            assert {line["player"]: line["status"] for line in table}["ghost"] == "failed"
            # an operator puts another player in the ghost's seat and resumes
            async with local_players(["random"], seed=8) as (spare_url,):
                await register(client, {"spare": spare_url})
                path = f"/api/tournaments/{tournament_id}"
                response = await client.post(
                    f"{path}/replace",
                    json={"player": "ghost", "by": "nobody"},
                    headers=ADMIN_HEADERS,
                )
                assert response.status == 400 and (await response.json())["error"]["field"] == "by"
                response = await client.post(
                    f"{path}/replace",
                    json={"player": "ghost", "by": "spare"},
                    headers=ADMIN_HEADERS,
                )
                assert response.status == 200, await response.text()
                response = await client.post(f"{path}/resume", headers=ADMIN_HEADERS)
                assert response.status == 200, await response.text()
                async with asyncio.timeout(120):
                    while True:
                        tournament = await (await client.get(path)).json()
                        if tournament["status"] != "running":
                            break
                        await asyncio.sleep(0.3)
            assert tournament["status"] == "finished", tournament
            matches = await (await client.get(f"{path}/matches")).json()
            spare = [m for m in matches if "spare" in m["players"]]
            assert len(spare) == 4 and {m["status"] for m in spare} == {"finished"}
            # the slot the ghost could not join is played by the spare (as key#3)
            slots = {m["schedule_key"].split("#")[0] for m in spare}
            assert {m["schedule_key"].split("#")[0] for m in unjoined} <= slots
            trail = await service.store.audit_trail()
            assert ("admin", "tournament.replace") in {(t["actor"], t["action"]) for t in trail}
            return
        assert tournament["status"] == "finished", tournament
        table = await (await client.get(f"/api/tournaments/{tournament_id}/standings")).json()
        last = table[-1]
        assert last["player"] == "ghost" and last["status"] == "withdrawn"
        assert last["points"] == 0 and last["forfeits"] == 4
        # a and b played both their matches against each other
        played = [m for m in matches if m["status"] == "finished"]
        assert len(played) == 2 and all("ghost" not in m["players"] for m in played)


PICK_THREE = """
(role red) (role green) (role blue)
(num 1) (num 2) (num 3)
(init (step 0))
(<= (legal ?r (pick ?n)) (role ?r) (true (step 0)) (num ?n))
(<= (next (picked ?r ?n)) (does ?r (pick ?n)))
(<= (next (step 1)) (true (step 0)))
(<= terminal (true (step 1)))
(<= (goal ?r 100) (true (picked ?r 3)))
(<= (goal ?r 50) (true (picked ?r 2)))
(<= (goal ?r 0) (true (picked ?r 1)))
"""
"""Three roles pick a number at once; the goal is the number picked."""


async def test_a_three_role_game_in_a_round_robin_and_a_ladder(
    tmp_path: Path, database_url: str
) -> None:
    async with (
        local_players(["random"] * 4, seed=6) as urls,
        running_service(tmp_path, database_url, concurrency=4) as (service, client),
    ):
        names = ["a", "b", "c", "d"]
        await register(client, dict(zip(names, urls, strict=True)))
        response = await client.post(
            "/api/games", json={"name": "pick_three", "rules": PICK_THREE}, headers=ADMIN_HEADERS
        )
        assert response.status == 201, await response.text()
        # formats made for one-on-one play refuse the game, naming the field
        for fmt, more in (("swiss", {"rounds": 2}), ("single_elimination", {})):
            body = {**spec(fmt, names, **more), "game": "pick_three"}
            response = await client.post("/api/tournaments", json=body, headers=ADMIN_HEADERS)
            assert response.status == 400 and (await response.json())["error"]["field"] == "format"
        body = {**spec("round_robin", names), "game": "pick_three"}
        tournament_id = await run_to_end(client, body)
        matches = await (await client.get(f"/api/tournaments/{tournament_id}/matches")).json()
        # 4 trios x 6 seatings, each once, each with its three players in role order
        assert len(matches) == 24 and {m["status"] for m in matches} == {"finished"}
        assert len({tuple(m["players"]) for m in matches}) == 24
        table = await (await client.get(f"/api/tournaments/{tournament_id}/standings")).json()
        # 1 against each opponent beaten, 0.5 each tie, averaged over the two opponents
        points = dict.fromkeys(names, 0.0)
        for match in matches:
            for name, goal in zip(match["players"], match["goals"], strict=True):
                others = [
                    g for n, g in zip(match["players"], match["goals"], strict=True) if n != name
                ]
                points[name] += sum(1 if goal > g else 0.5 if goal == g else 0 for g in others) / 2
        assert {line["player"]: line["points"] for line in table} == pytest.approx(points)
        assert all(line["played"] == 18 for line in table)
        assert all(line["errors"] == {"TO": 0, "CE": 0, "IL": 0} for line in table)

        ladder = {**spec("ladder", names), "game": "pick_three", "name": "pick ladder"}
        response = await client.post("/api/tournaments", json=ladder, headers=ADMIN_HEADERS)
        assert response.status == 201, await response.text()
        ladder_id = (await response.json())["id"]
        path = f"/api/tournaments/{ladder_id}"
        async with asyncio.timeout(120):
            while True:
                played = [
                    m
                    for m in await (await client.get(f"{path}/matches")).json()
                    if m["status"] == "finished"
                ]
                if len(played) >= 4:
                    break
                await asyncio.sleep(0.3)
        response = await client.post(f"{path}/cancel", headers=ADMIN_HEADERS)
        assert response.status == 200, await response.text()
        assert all(len(set(m["players"])) == 3 for m in played)
        table = await (await client.get(f"{path}/standings")).json()
        assert sum(line["played"] for line in table) >= 12
