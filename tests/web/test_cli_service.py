"""`ggp db`, `ggp serve` refusing a database behind the schema, `ggp export` and `ggp import`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from server.match.local_players import local_players
from server.store.migrate import head_revision

from .harness import ADMIN_HEADERS, running_service, wait_for_status


def ggp(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "server.cli", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "GGP_DATABASE_URL": "", **(env or {})},
    )


def test_serve_refuses_a_database_behind_the_schema_until_db_upgrade(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'given.db'}"
    refused = ggp("serve", "--data", str(tmp_path), "--database", url, "--port", "0")
    assert refused.returncode == 1
    assert refused.stderr.count("\n") == 1 and "ggp db upgrade" in refused.stderr
    assert "Traceback" not in refused.stderr
    status = ggp("db", "status", "--database", url)
    head = head_revision()
    assert status.returncode == 1 and f"not {head}" in status.stdout
    upgraded = ggp("db", "upgrade", "--database", url)
    assert upgraded.returncode == 0 and f"at revision {head}" in upgraded.stdout
    assert ggp("db", "status", "--database", url).returncode == 0


def test_serve_rejects_bad_options_in_one_line(tmp_path: Path) -> None:
    for args in (["--port", "70000"], ["--concurrency", "0"], ["--database", "mysql://x/y"]):
        done = ggp("serve", "--data", str(tmp_path), *args)
        assert done.returncode != 0 and done.stderr.count("\n") == 1, done.stderr
        assert "Traceback" not in done.stderr


async def test_export_then_import_round_trip(tmp_path: Path, database_url: str) -> None:
    first = tmp_path / "first"
    async with (
        local_players(["random", "legal"], seed=5) as (random_url, legal_url),
        running_service(first, database_url, concurrency=1) as (service, client),
    ):
        for name, url in (("rnd", random_url), ("lgl", legal_url)):
            await client.post(
                "/api/players", json={"name": name, "url": url}, headers=ADMIN_HEADERS
            )
        response = await client.post(
            "/api/matches",
            json={"game": "nineBoardTicTacToe", "players": ["rnd", "lgl"], "playclock": 1},
            headers=ADMIN_HEADERS,
        )
        match_id = (await response.json())["id"]
        await wait_for_status(client, match_id, {"finished"})
        served = await (await client.get(f"/api/matches/{match_id}/log")).text()
    archive = tmp_path / "archive.jsonl"
    exported = ggp("export", "--database", database_url, "--out", str(archive))
    assert exported.returncode == 0, exported.stderr
    (line,) = archive.read_text(encoding="utf-8").splitlines()
    item = json.loads(line)
    assert item["url"].endswith(f"/api/matches/{match_id}/log")
    assert item["data"] == json.loads(served)

    target = f"sqlite:///{tmp_path / 'second.db'}"
    assert ggp("db", "upgrade", "--database", target).returncode == 0
    key = str(first / "host_key.pem")
    public = ggp("key", "--key-file", key).stdout.strip()
    imported = ggp("import", str(archive), "--database", target, "--key", public)
    assert imported.returncode == 0, imported.stdout + imported.stderr
    assert f"{match_id}: stored (signature valid, replay ok)" in imported.stdout
    again = ggp("import", str(archive), "--database", target)
    assert "already stored" in again.stdout
    tampered = tmp_path / "tampered.jsonl"
    item["data"]["goalValues"] = [0, 0]
    item["data"]["matchId"] = "other"
    tampered.write_text(json.dumps(item) + "\nnot json\n", encoding="utf-8")
    refused = ggp("import", str(tampered), "--database", target)
    assert refused.returncode == 1
    assert "other: refused: signature invalid" in refused.stdout
    assert "line 2: refused" in refused.stdout
