"""The collector settles once a server process is up: the start-up heap frozen, young
objects collected less often, and later cycles still freed."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from server.collector import YOUNG_THRESHOLD, settle_after_start


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


def test_ggp_player_settles_the_collector_before_it_serves(
    collector_restored: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    import argparse

    import players.cli
    from server.cli import player

    seen: list[int] = []

    def serve(args: argparse.Namespace) -> int:
        seen.append(gc.get_threshold()[0])
        return 0

    monkeypatch.setattr(players.cli, "run", serve)
    gc.set_threshold(700, 10, 10)
    args = argparse.Namespace(bot=None, player="random", server=None, token=None)
    assert player._run(args) == 0
    assert seen == [YOUNG_THRESHOLD]
