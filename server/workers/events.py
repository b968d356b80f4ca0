"""Live match events between processes, through PostgreSQL's LISTEN/NOTIFY.

A worker notifies ``{"m": match id, "s": step}`` once a step is stored and
``{"m": match id, "e": 1, "t": tournament id or null}`` once the match has ended (``"t"``
left out where the worker does not know it); the payload stays small, and readers fetch
the rows they need.  The service listens and feeds its live hub (only for
matches someone is watching) and its tournament driver, whichever worker runs a match.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Callable
from typing import Any

import psycopg

from server.match import MatchEvent, PlayersStarted, StepPlayed
from server.store import MatchStatus, NotFound, Store

from .claims import one_step
from .jobs import conninfo
from .schema import EVENTS_CHANNEL

log = logging.getLogger(__name__)

RECONNECT_SECONDS = 1.0


class Unknown:
    """The type of :data:`UNKNOWN`."""


UNKNOWN = Unknown()
"""A tournament id not known where a match's end is notified."""


def end_payload(match_id: str, tournament_id: str | None | Unknown = UNKNOWN) -> dict[str, Any]:
    """The notification that a match ended, in the tournament ``tournament_id`` (``None``:
    in none; ``UNKNOWN``: not known here, which the listener takes as maybe in one)."""
    if isinstance(tournament_id, Unknown):
        return {"m": match_id, "e": 1}
    return {"m": match_id, "e": 1, "t": tournament_id}


async def notify(store: Store, payload: dict[str, Any]) -> None:
    """Send one event on the channel, with the store's next group commit (delivered when
    that transaction commits)."""
    await store.notify(EVENTS_CHANNEL, json.dumps(payload, separators=(",", ":")))


class StepNotifier:
    """A match observer that notifies each stored step; put it after the store's observer.

    The notice rides on the store's next group commit (:meth:`Store.notify_later`) with the
    rows and notices of concurrent matches: a step costs one small payload, not one
    transaction.  A lost notification costs a viewer a refresh, never the match.
    """

    def __init__(self, store: Store) -> None:
        self.store = store

    def __call__(self, event: MatchEvent) -> None:
        if isinstance(event, PlayersStarted):
            step = 0
        elif isinstance(event, StepPlayed):
            step = event.step
        else:
            return
        payload = json.dumps({"m": event.match_id, "s": step}, separators=(",", ":"))
        self.store.notify_later(EVENTS_CHANNEL, payload).add_done_callback(_log_failure)


def _log_failure(future: asyncio.Future[None]) -> None:
    if not future.cancelled() and future.exception() is not None:
        log.warning("notifying a step failed: %s", future.exception())


Publish = Callable[[str, dict[str, Any]], None]
"""Hands a page payload (``kind`` step or end) for a match to the live hub."""


class EventListener:
    """LISTENs on the channel and turns notifications into hub payloads and wake-ups."""

    def __init__(
        self,
        store: Store,
        *,
        publish: Publish,
        watched: Callable[[str], bool],
        on_end: Callable[[str, bool], None],
    ) -> None:
        self.store = store
        self.publish = publish
        self.watched = watched
        self.on_end = on_end
        self.received = 0
        self._task: asyncio.Task[None] | None = None
        self._listening = asyncio.Event()

    async def start(self) -> None:
        self._task = asyncio.create_task(self._loop(), name="match-events")
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._listening.wait(), 10)

    @property
    def alive(self) -> bool:
        return self._task is not None and not self._task.done()

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _loop(self) -> None:
        while True:
            try:
                async with await psycopg.AsyncConnection.connect(
                    conninfo(self.store.url), autocommit=True
                ) as connection:
                    await connection.execute(f"LISTEN {EVENTS_CHANNEL}")
                    self._listening.set()
                    async for notification in connection.notifies():
                        self.received += 1
                        try:
                            await self._handle(json.loads(notification.payload))
                        except Exception:
                            log.exception("a match event could not be handled")
            except asyncio.CancelledError:
                raise
            except Exception as error:
                log.warning("listening for match events failed (%s); reconnecting", error)
            await asyncio.sleep(RECONNECT_SECONDS)

    async def _handle(self, payload: dict[str, Any]) -> None:
        match_id = str(payload["m"])
        if "e" in payload:
            self.on_end(match_id, payload.get("t", UNKNOWN) is not None)
            if self.watched(match_id):
                try:
                    match = await self.store.get_match(match_id)
                except NotFound:
                    return
                if match.status in (MatchStatus.FINISHED, MatchStatus.ABORTED):
                    self.publish(
                        match_id,
                        {"kind": "end", "reason": match.end_reason, "goals": match.goals},
                    )
            return
        if not self.watched(match_id):
            return
        row = await one_step(self.store, match_id, int(payload["s"]))
        if row is None:
            return
        self.publish(
            match_id,
            {
                "kind": "step",
                "step": row["step"],
                "moves": row["moves"],
                "state": row["state"],
                "errors": row["errors"],
                "times": row["response_times"],
            },
        )
