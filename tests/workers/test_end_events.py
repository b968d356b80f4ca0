"""A match's end reaches the service over PostgreSQL's notifications with its tournament:
a match outside every tournament does not make the tournament driver read everything again."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from server.league.driver import TournamentDriver
from server.store import Store
from server.workers.events import UNKNOWN, EventListener, end_payload, notify

from .harness import prepared_database


async def until(condition: Callable[[], bool], seconds: float = 10.0) -> None:
    """Return once ``condition()`` holds; fail after ``seconds``."""
    async with asyncio.timeout(seconds):
        while not condition():  # noqa: ASYNC110 - a counter of another task, not an event
            await asyncio.sleep(0.02)


def test_an_end_payload_says_its_tournament_or_leaves_it_out_when_unknown() -> None:
    assert end_payload("m1", "t1") == {"m": "m1", "e": 1, "t": "t1"}
    assert end_payload("m1", None) == {"m": "m1", "e": 1, "t": None}
    assert end_payload("m1", UNKNOWN) == end_payload("m1") == {"m": "m1", "e": 1}


async def test_the_listener_tells_ends_that_may_be_in_a_tournament(postgres_base_url: str) -> None:
    store = Store(await prepared_database(postgres_base_url))
    await store.open()
    ends: list[tuple[str, bool]] = []
    listener = EventListener(
        store,
        publish=lambda *_: None,
        watched=lambda _: False,
        on_end=lambda *end: ends.append(end),
    )
    try:
        await listener.start()
        for payload in (end_payload("a", None), end_payload("b", "t1"), end_payload("c")):
            await notify(store, payload)
        await until(lambda: len(ends) >= 3)
    finally:
        await listener.close()
        await store.close()
    assert ends == [("a", False), ("b", True), ("c", True)]


async def test_a_match_outside_tournaments_asks_no_full_pass_of_the_driver(
    postgres_base_url: str,
) -> None:
    store = Store(await prepared_database(postgres_base_url))
    await store.open()
    driver = TournamentDriver(store, poll_seconds=60)
    try:
        await driver.start()
        await until(lambda: driver.full_passes >= 1)  # the first pass, at start
        for _ in range(5):
            driver.other_match_ended()
            await asyncio.sleep(0.05)
        assert driver.full_passes == 1
        driver.wake()  # a match that may be in a tournament: everything is read again
        await until(lambda: driver.full_passes >= 2)
    finally:
        await driver.close()
        await store.close()
