"""The queue runner on a real SQLite store: matches claimed a page at a time; a failed step
write aborts the match loudly."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from server.catalog import seed_bundled_games
from server.runner import STORE_FAILED, MatchRequest, QueueRunner, RunnerSettings, queue_match
from server.store import MatchRow, MatchStatus, StepErrors, Store

StoreT = TypeVar("StoreT", bound=Store)


class FailingStore(Store):
    """A store whose disk "fills up" at step 3."""

    async def add_step_row(self, match_id: str, row: Mapping[str, Any]) -> None:
        if row["step"] == 3:
            raise OSError("disk full")
        await super().add_step_row(match_id, row)


async def wait_until_ended(store: Store, match_id: str) -> None:
    async with asyncio.timeout(60):
        while (await store.get_match(match_id)).status not in (  # noqa: ASYNC110
            MatchStatus.FINISHED,
            MatchStatus.ABORTED,
        ):
            await asyncio.sleep(0.05)


async def seeded(store: StoreT) -> StoreT:
    """``store`` opened at the latest schema, with the bundled games."""
    await store.open(upgrade=True)
    await seed_bundled_games(store)
    return store


async def test_a_step_that_cannot_be_saved_aborts_the_match(tmp_path: Path) -> None:
    store = await seeded(FailingStore(f"sqlite:///{tmp_path / 'ggp.db'}"))
    runner = QueueRunner(store, Ed25519PrivateKey.generate(), RunnerSettings(poll_seconds=0.05))
    await runner.start()
    try:
        match = await queue_match(
            store, MatchRequest(game="nineBoardTicTacToe", players=[None, None], seed=1)
        )
        runner.wake()
        await wait_until_ended(store, match.id)
        ended = await store.get_match(match.id)
        assert (ended.status, ended.end_reason) == (MatchStatus.ABORTED, STORE_FAILED)
        assert "disk full" in (ended.end_message or "")
        assert [step.step for step in await store.steps(match.id)] == [0, 1, 2]
        log = json.loads(await store.signed_record(match.id) or "{}")
        assert log["isAborted"] and len(log["moves"]) <= 3  # stopped where the write failed
    finally:
        await runner.close()
        await store.close()


class RacedStore(Store):
    """A store that keeps every batch of claims it was asked for; another runner claims
    ``raced`` just before the first batch."""

    def __init__(self, url: str) -> None:
        super().__init__(url)
        self.claims: list[list[str]] = []
        self.raced = ""

    async def claim_matches(self, match_ids: Sequence[str]) -> list[str]:
        if not self.claims:
            assert await self.claim_match(self.raced)
        self.claims.append(list(match_ids))
        return await super().claim_matches(match_ids)


async def test_queued_matches_are_claimed_in_one_transaction_and_all_run(tmp_path: Path) -> None:
    store = RacedStore(f"sqlite:///{tmp_path / 'ggp.db'}")
    await store.open(upgrade=True)
    await seed_bundled_games(store)
    queued = [
        await queue_match(store, MatchRequest(game="tictactoex9", players=[None, None], seed=n))
        for n in range(12)
    ]
    taken_elsewhere = store.raced = queued[5].id
    runner = QueueRunner(
        store, Ed25519PrivateKey.generate(), RunnerSettings(concurrency=20, poll_seconds=0.05)
    )
    await runner.start()
    try:
        for match in queued:
            if match.id != taken_elsewhere:
                await wait_until_ended(store, match.id)
        assert store.claims[0] == [match.id for match in queued]
        for match in queued:
            ended = await store.get_match(match.id)
            if match.id == taken_elsewhere:
                assert ended.status is MatchStatus.RUNNING  # the other runner's
            else:
                assert ended.status is MatchStatus.FINISHED, ended.end_message
    finally:
        await runner.close()
        await store.close()


async def test_the_end_listeners_get_the_match_as_stored_with_its_steps(tmp_path: Path) -> None:
    store = await seeded(Store(f"sqlite:///{tmp_path / 'ggp.db'}"))
    runner = QueueRunner(store, Ed25519PrivateKey.generate(), RunnerSettings(poll_seconds=0.05))
    told: list[tuple[MatchRow, list[StepErrors] | None]] = []
    runner.on_match_end.append(lambda row, steps: told.append((row, steps)))
    await runner.start()
    try:
        match = await queue_match(
            store, MatchRequest(game="tictactoex9", players=[None, None], seed=3)
        )
        runner.wake()
        await wait_until_ended(store, match.id)
        async with asyncio.timeout(10):
            while not told:  # noqa: ASYNC110 - the listener runs as the task ends
                await asyncio.sleep(0.02)
        ((row, steps),) = told
        stored = await store.get_match(match.id)
        fields = ("id", "status", "end_reason", "goals", "finished_at")
        assert [getattr(row, name) for name in fields] == [getattr(stored, name) for name in fields]
        assert row.status is MatchStatus.FINISHED and row.goals is not None
        assert steps is not None and len(steps) == len(await store.steps(match.id))
    finally:
        await runner.close()
        await store.close()
