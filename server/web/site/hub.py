"""The in-process hub of live match events: the runner publishes, page viewers subscribe.

Publishing never waits: each viewer has a bounded queue, and a viewer whose queue is full
is marked behind and dropped from the hub (its page reconnects and catches up from the
store), so a slow viewer never delays a match.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from server.match import MatchEnded, MatchEvent, MatchStarted, PlayersStarted, StepPlayed
from server.match.events import MatchClosed

QUEUE_SIZE = 64
"""Events a viewer may have pending before it is dropped."""
EVERY_MATCH = "*"
"""The subscription key of viewers of every match's start and end (the home page)."""


def overview_payload(event: MatchEvent) -> dict[str, Any] | None:
    """What the home page needs of an event: a match started or ended, else None."""
    if isinstance(event, MatchStarted):
        return {"kind": "started", "id": event.match_id, "game": event.game_name or ""}
    if isinstance(event, MatchEnded):
        return {
            "kind": "ended",
            "id": event.match_id,
            "reason": str(event.reason),
            "goals": event.goals,
        }
    return None


def event_payload(event: MatchEvent) -> dict[str, Any] | None:
    """What a page needs of an event (plain data), or None for events it does not show."""
    if isinstance(event, PlayersStarted):
        record = event.record
        return {
            "kind": "step",
            "step": 0,
            "moves": None,
            "state": record.states[-1],
            "errors": list(event.errors),
            "times": list(event.response_times),
        }
    if isinstance(event, StepPlayed):
        return {
            "kind": "step",
            "step": event.step,
            "moves": list(event.moves),
            "state": event.state,
            "errors": list(event.errors),
            "times": list(event.response_times),
        }
    if isinstance(event, MatchEnded):
        return {"kind": "end", "reason": str(event.reason), "goals": event.goals}
    if isinstance(event, MatchClosed):
        return {"kind": "closed"}
    return None


@dataclass(eq=False)
class Subscription:
    """One viewer of one match."""

    match_id: str
    queue: asyncio.Queue[dict[str, Any]] = field(default_factory=lambda: asyncio.Queue(QUEUE_SIZE))
    behind: bool = False
    """Set when the viewer fell too far behind and was dropped."""


class LiveHub:
    """Fans match events out to the viewers of each match, and the starts and ends of
    every match to the viewers of :data:`EVERY_MATCH`."""

    def __init__(self) -> None:
        self._viewers: dict[str, set[Subscription]] = {}
        self.published = 0
        self.dropped = 0

    def subscribe(self, match_id: str) -> Subscription:
        subscription = Subscription(match_id)
        self._viewers.setdefault(match_id, set()).add(subscription)
        return subscription

    def unsubscribe(self, subscription: Subscription) -> None:
        viewers = self._viewers.get(subscription.match_id)
        if viewers is not None:
            viewers.discard(subscription)
            if not viewers:
                del self._viewers[subscription.match_id]

    def close_streams(self) -> None:
        """Tell every viewer's stream to end (the application is shutting down)."""
        for viewers in list(self._viewers.values()):
            for subscription in list(viewers):
                try:
                    subscription.queue.put_nowait({"kind": "shutdown"})
                except asyncio.QueueFull:
                    subscription.behind = True
                    self.unsubscribe(subscription)

    def viewers(self, match_id: str) -> int:
        return len(self._viewers.get(match_id, ()))

    def publish(self, event: MatchEvent) -> None:
        """The runner's observer: never blocks, never raises."""
        if EVERY_MATCH in self._viewers:
            self._fan_out(self._viewers[EVERY_MATCH], overview_payload(event))
        viewers = self._viewers.get(event.match_id)
        if viewers:
            self._fan_out(viewers, event_payload(event))

    def publish_payload(self, match_id: str, payload: dict[str, Any]) -> None:
        """Hand a page payload (from another process's notification) to the match's viewers,
        and an end to the home page's."""
        if payload.get("kind") == "end" and EVERY_MATCH in self._viewers:
            ended = {"kind": "ended", "id": match_id, "reason": str(payload.get("reason"))}
            self._fan_out(self._viewers[EVERY_MATCH], {**ended, "goals": payload.get("goals")})
        viewers = self._viewers.get(match_id)
        if viewers:
            self._fan_out(viewers, payload)

    def _fan_out(self, viewers: set[Subscription], payload: dict[str, Any] | None) -> None:
        if payload is None:
            return
        self.published += 1
        for subscription in list(viewers):
            try:
                subscription.queue.put_nowait(payload)
            except asyncio.QueueFull:
                subscription.behind = True
                self.dropped += 1
                self.unsubscribe(subscription)
