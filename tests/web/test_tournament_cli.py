"""`ggp tournament` against a running service, and `ggp ratings recompute` on its database."""

from __future__ import annotations

import asyncio
import csv
import io
import json
import os
import sys
from pathlib import Path

from server.match.local_players import local_players

from .harness import ADMIN, ADMIN_HEADERS, running_service


async def ggp(*args: str) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "server.cli",
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "GGP_DATABASE_URL": "", "GGP_ADMIN_TOKEN": ""},
    )
    out, err = await asyncio.wait_for(process.communicate(), 240)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


async def test_create_watch_standings_and_recompute_ratings(tmp_path: Path) -> None:
    database_url = f"sqlite:///{tmp_path / 'ggp.db'}"
    async with (
        local_players(["random", "legal"], seed=2) as urls,
        running_service(tmp_path, database_url, concurrency=2) as (service, client),
    ):
        for name, url in zip(["rnd", "lgl"], urls, strict=True):
            response = await client.post(
                "/api/players", json={"name": name, "url": url}, headers=ADMIN_HEADERS
            )
            assert response.status == 201
        server = str(client.make_url("")).rstrip("/")
        spec = tmp_path / "cup.yaml"
        spec.write_text(
            "name: cli cup\ngame: double_tictactoe_dengji\nformat: round_robin\n"
            "players: [rnd, lgl]\nmatches_per_seating: 1\nstartclock: 3\nplayclock: 1\n",
            encoding="utf-8",
        )
        code, out, err = await ggp("tournament", "create", str(spec), "--server", server)
        assert code == 2 and "--token" in err  # no token, nothing sent
        bad = tmp_path / "bad.json"
        bad.write_text(
            json.dumps(
                {
                    "name": "x",
                    "game": "double_tictactoe_dengji",
                    "format": "swiss",
                    "players": ["rnd", "lgl"],
                    "startclock": 3,
                    "playclock": 1,
                }
            ),
            encoding="utf-8",
        )
        code, out, err = await ggp(
            "tournament", "create", str(bad), "--server", server, "--token", ADMIN
        )
        assert code == 2 and "rounds" in err and "Traceback" not in err
        code, out, err = await ggp(
            "tournament", "create", str(spec), "--server", server, "--token", ADMIN
        )
        assert code == 0, err
        tournament_id = out.strip()
        code, out, err = await ggp(
            "tournament", "watch", tournament_id, "--server", server, "--interval", "0.3"
        )
        assert code == 0, err
        lines = out.splitlines()
        assert any("finished, 2/2 matches done, 0 running, leaders: " in line for line in lines)
        assert lines[-3].split()[:2] == ["rank", "player"]
        code, out, err = await ggp(
            "tournament", "standings", tournament_id, "--server", server, "--format", "csv"
        )
        assert code == 0, err
        rows = list(csv.DictReader(io.StringIO(out)))
        api = await (await client.get(f"/api/tournaments/{tournament_id}/standings")).json()
        assert [(r["player"], float(r["points"])) for r in rows] == [
            (line["player"], line["points"]) for line in api
        ]
        # errors by kind, one column each
        assert [{k: int(r[k]) for k in ("TO", "CE", "IL")} for r in rows] == [
            line["errors"] for line in api
        ]
        code, out, _ = await ggp(
            "tournament", "standings", tournament_id, "--server", server, "--format", "json"
        )
        assert json.loads(out) == api
        code, out, err = await ggp("tournament", "standings", "nope", "--server", server)
        assert code == 2 and "no tournament" in err
        assert service.tournaments is not None
        await service.tournaments.run_pass()
        before = await (await client.get("/api/ratings")).json()
        assert len(before) == 2 and all(r["matches"] == 2 for r in before)
    code, out, err = await ggp("ratings", "recompute", "--database", database_url)
    assert code == 0, err
    assert "2 matches, 2 players rated; the ratings are equal to those stored before" in out
