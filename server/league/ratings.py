"""Ratings kept up to date as matches finish, and recomputed from the archive.

Scopes: ``*`` rates every finished match, and each game has its own scope. Matches are
taken in the order they finished (then by id); a match that finished before one
already taken in (a late write) makes the keeper recompute everything, so the stored
ratings always equal a recomputation from the archive.

A catch-up reads only the matches that finished at most :data:`LATE_WRITE_WINDOW_MS`
before the last one taken in, through an index, so its cost follows what is new, not
the archive; a full catch-up (the driver's sweep) reads every finished match and so
also finds a match written later than that (one imported from an old archive).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from server.store import MatchRow, RatingHistoryRow, RatingRow, TournamentStore
from server.tournament import MatchResult, Rating, RatingBook, update_ratings
from server.tournament.ratings import is_rated

from .results import match_result

ALL_GAMES = "*"
LATE_WRITE_WINDOW_MS = 60 * 1000
"""How long before the last match taken in a catch-up still looks for late writes."""


def _result(match: MatchRow) -> MatchResult:
    return match_result(match, [], [], key=match.id)


async def _books_and_counts(
    store: TournamentStore, scopes: set[str]
) -> tuple[dict[str, RatingBook], dict[tuple[str, str], int]]:
    """Each scope's current ratings as a book, and each player's matches taken in, from
    one read a scope."""
    books = {}
    counts = {}
    for scope in scopes:
        rows = await store.ratings(scope)
        books[scope] = RatingBook(
            ratings={row.player: Rating(mu=row.mu, sigma=row.sigma) for row in rows}
        )
        for row in rows:
            counts[scope, row.player] = row.matches
    return books, counts


def _apply(
    books: dict[str, RatingBook],
    counts: dict[tuple[str, str], int],
    matches: Sequence[MatchRow],
) -> tuple[list[RatingRow], list[RatingHistoryRow]]:
    """Take the matches in; the changed current ratings and the new history rows."""
    changed: dict[tuple[str, str], RatingRow] = {}
    history: list[RatingHistoryRow] = []
    for match in matches:
        result = _result(match)
        if not is_rated(result):
            continue
        for scope in (ALL_GAMES, match.game_name):
            book = update_ratings(books.get(scope, RatingBook()), result)
            books[scope] = book
            for player in result.players:
                rating = book.rating(player)
                counts[scope, player] = counts.get((scope, player), 0) + 1
                changed[scope, player] = RatingRow(
                    scope=scope,
                    player=player,
                    mu=rating.mu,
                    sigma=rating.sigma,
                    matches=counts[scope, player],
                )
                history.append(
                    RatingHistoryRow(
                        scope=scope,
                        player=player,
                        match_id=match.id,
                        finished_at=match.finished_at,
                        mu=rating.mu,
                        sigma=rating.sigma,
                    )
                )
    return list(changed.values()), history


def compute(matches: Sequence[MatchRow]) -> tuple[list[RatingRow], list[RatingHistoryRow]]:
    """Ratings of every scope from these matches (in the order they finished)."""
    ordered = sorted(matches, key=lambda m: (m.finished_at or 0, m.id))
    return _apply({}, {}, ordered)


async def recompute_stored_ratings(store: TournamentStore) -> tuple[int, list[RatingRow], bool]:
    """Recompute every rating from the finished matches and store them.

    Returns (matches read, the ratings, whether they equal the ratings stored before).
    """
    matches = await store.finished_matches()
    current, history = compute(matches)
    scopes = {row.scope for row in current}
    before = {(r.scope, r.player): r for scope in scopes for r in await store.ratings(scope)}
    same = before == {(r.scope, r.player): r for r in current}
    taken = [(m.id, m.finished_at or 0) for m in matches]
    await store.save_ratings(taken, current, history, replace=True)
    return len(matches), current, same


class RatingKeeper:
    """Takes newly finished matches into the stored ratings."""

    def __init__(self, store: TournamentStore) -> None:
        self.store = store
        self._lock = asyncio.Lock()

    async def catch_up(self, *, full: bool = False) -> int:
        """Rate the finished matches not taken in yet (those that finished within
        :data:`LATE_WRITE_WINDOW_MS` of the last one taken in or later; with ``full``,
        all); returns how many were taken in.

        One catch-up at a time: two at once would take the same matches in twice.
        """
        async with self._lock:
            return await self._catch_up(full)

    async def _catch_up(self, full: bool) -> int:
        last = await self.store.last_rated()
        since = None if full or last is None else last[0] - LATE_WRITE_WINDOW_MS
        new = await self.store.unrated_matches(since)
        if not new:
            return 0
        first = (new[0].finished_at or 0, new[0].id)
        if last is not None and first < last:
            count, _, _ = await recompute_stored_ratings(self.store)
            return count
        scopes = {ALL_GAMES} | {m.game_name for m in new}
        books, counts = await _books_and_counts(self.store, scopes)
        current, history = _apply(books, counts, new)
        await self.store.save_ratings([(m.id, m.finished_at or 0) for m in new], current, history)
        return len(new)
