"""The collector settles once a server or player process is up: the start-up heap
frozen, young objects collected less often, and later cycles still freed."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Coroutine, Iterator
from typing import Any

import pytest

from server.gdl.collector import YOUNG_THRESHOLD, settle_after_start


@pytest.fixture
def collector_restored() -> Iterator[None]:
    threshold = gc.get_threshold()
    yield
    gc.unfreeze()
    gc.set_threshold(*threshold)


class Node:
    def __init__(self) -> None:
        self.other: Node | None = None


def test_settling_freezes_what_is_alive_and_collects_young_objects_less_often(
    collector_restored: None,
) -> None:
    kept = [Node() for _ in range(100)]
    settle_after_start()
    assert gc.get_freeze_count() >= len(kept)
    assert gc.get_threshold()[0] == YOUNG_THRESHOLD
    # cycles made afterwards are still found and freed
    first, second = Node(), Node()
    first.other, second.other = second, first
    watcher = weakref.ref(first)
    del first, second
    gc.collect()
    assert watcher() is None


def test_settling_never_lowers_a_threshold_set_higher(collector_restored: None) -> None:
    gc.set_threshold(YOUNG_THRESHOLD * 2, 10, 10)
    settle_after_start()
    assert gc.get_threshold() == (YOUNG_THRESHOLD * 2, 10, 10)


def test_a_player_process_settles_the_collector_before_it_serves(
    collector_restored: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    import players.event_loop
    from players.cli import main

    seen: list[int] = []

    def serve_forever(work: Coroutine[Any, Any, None]) -> None:
        work.close()  # not served: only the collector at this point matters
        seen.append(gc.get_threshold()[0])

    monkeypatch.setattr(players.event_loop, "run_event_loop", serve_forever)
    gc.set_threshold(700, 10, 10)
    assert main(["random", "--port", "0"]) == 0
    assert seen == [YOUNG_THRESHOLD]
