"""The store observer: turns a match's events into rows, one per step.

Storing is critical: when a write fails, the observer keeps the error and aborts the
match, and the queue runner marks it failed.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

from server.match import MatchEvent, MatchStarted, PlayersStarted, StepPlayed
from server.store import StepErrors, Store

from .logs import details_json, header_of

log = logging.getLogger(__name__)


class StoreObserver:
    """Writes the header when a match starts and one row per phase (START, then each step),
    as plain rows (the store's group commit writes them with other matches')."""

    def __init__(self, store: Store, on_failure: Callable[[], None]) -> None:
        self.store = store
        self.on_failure = on_failure
        self.error: Exception | None = None
        self.steps: list[StepErrors] = []
        """Each stored row's errors and response times, in order (what a tournament reads)."""

    async def __call__(self, event: MatchEvent) -> None:
        if self.error is not None:
            return
        try:
            await self._save(event)
        except Exception as error:
            log.exception("match %s: saving %s failed", event.match_id, type(event).__name__)
            self.error = error
            self.on_failure()

    async def _save(self, event: MatchEvent) -> None:
        record = event.record
        if isinstance(event, MatchStarted):
            await self.store.save_header(event.match_id, header_of(record))
        elif isinstance(event, PlayersStarted):
            await self.store.add_step_row(
                event.match_id,
                {
                    "step": 0,
                    "moves": None,
                    "state": record.states[-1],
                    "state_time": record.state_times[-1],
                    "errors": list(event.errors),
                    "response_times": list(event.response_times),
                    "raw_replies": list((record.raw_replies or [[]])[-1]),
                    "details": details_json(event.details),
                },
            )
            self._kept(event.errors, event.response_times)
        elif isinstance(event, StepPlayed):
            await self.store.add_step_row(
                event.match_id,
                {
                    "step": event.step,
                    "moves": list(event.moves),
                    "state": event.state,
                    "state_time": record.state_times[-1],
                    "errors": list(event.errors),
                    "response_times": list(event.response_times),
                    "raw_replies": list((record.raw_replies or [[]])[-1]),
                    "details": details_json(event.details),
                },
            )
            self._kept(event.errors, event.response_times)

    def _kept(self, errors: Sequence[str], response_times: Sequence[int | None]) -> None:
        self.steps.append(
            StepErrors.model_construct(errors=list(errors), response_times=list(response_times))
        )
