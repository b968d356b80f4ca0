"""A worker whose database does not answer in time before a claim tries the job again:
the queued match is played, never left queued without a job."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import sqlalchemy.exc
from web.harness import ADMIN_HEADERS, running_service, wait_for_status

from server.match.local_players import local_players
from server.workers import runner as worker_runner
from server.workers.claims import claim_match
from server.workers.runner import JobRunner

from .harness import prepared_database


@pytest.mark.parametrize("error", [sqlalchemy.exc.TimeoutError, ConnectionResetError])
async def test_a_match_whose_claim_met_a_busy_database_is_played_on_a_retry(
    tmp_path: Path,
    postgres_base_url: str,
    error: type[Exception],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    url = await prepared_database(postgres_base_url)
    async with (
        local_players(["random", "legal"], seed=3) as (random_url, legal_url),
        running_service(tmp_path, url, concurrency=2) as (service, client),
    ):
        runner = service.runner
        assert isinstance(runner, JobRunner)
        failed: list[str] = []

        async def busy_once(store: Any, match: Any, **kwargs: Any) -> Any:
            """The first claim of each match fails as an exhausted pool or a dropped
            connection would; later claims are real."""
            if match.id not in failed:
                failed.append(match.id)
                raise error("every pooled connection is in use")
            return await claim_match(store, match, **kwargs)

        monkeypatch.setattr(worker_runner, "claim_match", busy_once)
        for name, player_url in (("rnd", random_url), ("lgl", legal_url)):
            response = await client.post(
                "/api/players", json={"name": name, "url": player_url}, headers=ADMIN_HEADERS
            )
            assert response.status == 201, await response.text()
        response = await client.post(
            "/api/matches",
            json={
                "game": "nineBoardTicTacToe",
                "players": ["rnd", "lgl"],
                "startclock": 5,
                "playclock": 2,
            },
            headers=ADMIN_HEADERS,
        )
        assert response.status == 201, await response.text()
        match_id = (await response.json())["id"]
        match = await wait_for_status(client, match_id, {"finished", "aborted"})
        assert failed == [match_id]
        assert match["status"] == "finished" and match["end_reason"] == "terminal", match
        assert runner.database_retries == 1
