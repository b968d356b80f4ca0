"""`ggp import` keeps an archived match as the service keeps its own: one row per step."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from shared_material import shared_path

from server.records.archive import dump_archive_line
from server.runner.logs import rebuild_record
from server.store import MatchStatus, Store

URL = "http://matches.example.org/matches/ttt/"


def ggp(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "server.cli", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "GGP_DATABASE_URL": ""},
    )


async def test_a_ggp_base_log_is_imported_with_one_row_per_step(
    tmp_path: Path, database_url: str
) -> None:
    original: dict[str, Any] = json.loads(
        shared_path("protocol", "ttt-match.json").read_text(encoding="utf-8")
    )
    broken = {**original, "matchId": "broken.1", "moves": original["moves"][:-2]}
    archive = tmp_path / "archive.jsonl"
    archive.write_text(
        dump_archive_line(URL, original) + "\n" + dump_archive_line(URL, broken) + "\n",
        encoding="utf-8",
    )
    assert ggp("db", "upgrade", "--database", database_url).returncode == 0
    imported = ggp("import", str(archive), "--database", database_url)
    assert imported.returncode == 1, imported.stderr  # the broken line is refused
    match_id = original["matchId"]
    assert f"{match_id}: stored (signature absent, replay skipped)" in imported.stdout
    assert "broken.1: refused: 5 moves do not fit 8 states" in imported.stdout

    store = Store(database_url)
    await store.open()
    try:
        match = await store.get_match(match_id)
        assert (match.status, match.game_name, match.goals) == (
            MatchStatus.FINISHED,
            "ticTacToe",
            [100, 0],
        )
        steps = await store.steps(match_id)
        assert [step.step for step in steps] == list(range(len(original["states"])))
        assert steps[0].moves is None and steps[0].errors == ["", ""]
        assert steps[0].response_times == [None, None]
        header = await store.header(match_id)
        assert header is not None and "states" not in header
        rebuilt = rebuild_record(header, steps)
        for field in ("states", "moves", "stateTimes", "errors", "matchId", "startTime"):
            assert rebuilt[field] == original[field], field
        assert json.loads(await store.signed_record(match_id) or "") == original
        for player in original["playerNamesFromHost"]:
            assert [m.id for m in await store.list_matches(player=player)] == [match_id]
        assert [m.id for m in await store.list_matches(game="ticTacToe")] == [match_id]
        assert await store.steps("broken.1") == []
    finally:
        await store.close()
