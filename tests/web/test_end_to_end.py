"""Two bundled player processes registered, matches queued through the API, signed logs fetched."""

from __future__ import annotations

import json
from pathlib import Path

from server.gdl import Game
from server.match.local_players import local_players
from server.records import MatchRecord
from server.records.signing import verify_record
from server.replay import replay_record

from .harness import ADMIN_HEADERS, running_service, wait_for_status


async def test_matches_queued_through_the_api_end_with_signed_logs(
    tmp_path: Path, database_url: str
) -> None:
    async with (
        local_players(["random", "legal"], seed=7) as (random_url, legal_url),
        running_service(tmp_path, database_url, concurrency=2) as (service, client),
    ):
        for name, url in (("rnd", random_url), ("lgl", legal_url)):
            response = await client.post(
                "/api/players", json={"name": name, "url": url}, headers=ADMIN_HEADERS
            )
            assert response.status == 201, await response.text()
        ids = []
        for players in (["rnd", "lgl"], ["lgl", "rnd"]):
            response = await client.post(
                "/api/matches",
                json={
                    "game": "nineBoardTicTacToe",
                    "players": players,
                    "startclock": 5,
                    "playclock": 2,
                },
                headers=ADMIN_HEADERS,
            )
            assert response.status == 201, await response.text()
            ids.append((await response.json())["id"])
        for match_id in ids:
            match = await wait_for_status(client, match_id, {"finished", "aborted"})
            assert match["status"] == "finished", match
            assert match["end_reason"] == "terminal"
            response = await client.get(f"/api/matches/{match_id}/log")
            assert response.status == 200
            text = await response.text()
            record = json.loads(text)
            verification = verify_record(record, service.key.public_key())
            assert verification.ok, verification.message
            replay = replay_record(
                MatchRecord.model_validate(record), Game.from_text(record["gameRulesheet"])
            )
            assert replay.ok, replay.verdict
            assert record["goalValues"] == match["goals"]
            assert record["playerNamesFromHost"] == match["players"]
            steps = len(record["moves"])
            assert steps >= 5 and len(record["states"]) == steps + 1
        listed = await (await client.get("/api/matches", params={"player": "rnd"})).json()
        assert {match["id"] for match in listed} == set(ids)
        # each player takes one match at a time (max_matches 1), though two could run
        first, second = sorted(listed, key=lambda match: match["started_at"])
        assert first["finished_at"] <= second["started_at"]
        # pinged before its first match: status, latency and history are kept
        player = await (await client.get("/api/players/rnd")).json()
        assert player["status"] == "available" and player["latency_ms"] is not None
        assert player["pings"] and player["pings"][0]["status"] == "available"
        # the log served is byte-for-byte what `ggp verify` and `ggp replay --check` accept
        path = tmp_path / "log.json"
        path.write_text(text, encoding="utf-8")
        from server.cli import main

        assert main(["verify", str(path), "--key", str(tmp_path / "host_key.pem")]) == 0
        assert main(["replay", "--check", str(path)]) == 0
