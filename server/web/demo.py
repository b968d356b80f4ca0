"""The demo a newcomer can watch: the bundled players registered and a few matches queued."""

from __future__ import annotations

from typing import TYPE_CHECKING

from server.match.local_players import local_players
from server.runner import MatchRequest, queue_match
from server.store import NotFound

if TYPE_CHECKING:
    from .service import Service

DEMO_MATCHES = (
    ("nineBoardTicTacToe", ["random", "legal"]),
    ("tictactoex9", ["legal", "random"]),
    ("nineBoardTicTacToe", ["legal", "random"]),
)


async def start_demo(service: Service) -> list[str]:
    """Start the bundled players for the service's lifetime, register them, queue matches."""
    urls = await service.extra_cleanup.enter_async_context(local_players(["random", "legal"]))
    for name, url in zip(("random", "legal"), urls, strict=True):
        try:
            await service.store.get_player(name)
            await service.store.update_player(name, {"url": url, "suspended": False})
        except NotFound:
            await service.store.add_player(name, url, notes="bundled player (demo)")
    queued = []
    for game, players in DEMO_MATCHES:
        match = await queue_match(
            service.store,
            MatchRequest(game=game, players=list(players), start_clock=5, play_clock=1),
        )
        queued.append(match.id)
    service.runner.wake()
    return queued
