"""Legal moves in the public order (:func:`~server.gdl.terms.sort_key`), sorted by
ranks kept from state to state.

A state's legal moves are handed out sorted. Sorting them by their sort keys compares
tuples of tuples; on games with many moves (blockerParallel, the amazons) that sort was
a sixth of the public API's time. The moves recur from state to state, so each move
seen gets an integer rank once, in the order of its sort key, and a state's moves are
sorted by rank: one dictionary lookup and an integer comparison a move.

Ranks are spaced :data:`SPACING` apart. A new move takes the rank midway between its
neighbours; when there is no room left between them, every move is renumbered.
"""

from __future__ import annotations

import threading
from bisect import bisect_left
from collections.abc import Collection
from operator import itemgetter

from ..terms import RawTerm, sort_key, wrap

SPACING = 1 << 24
"""The gap between neighbouring ranks after a renumbering."""
BULK = 32
"""New moves at once past which all are re-sorted rather than inserted one by one."""
MOVES_KEPT = 100_000
"""Moves kept at most; past it the order starts again empty."""

Tables = tuple[dict[RawTerm, int], dict[RawTerm, RawTerm]]
"""Each move's rank and each move's public term."""


class MoveOrder:
    """Every move seen so far: its rank in sort-key order and its public term.

    Readers take :attr:`tables` (one attribute, read at once) without a lock: a
    renumbering replaces the rank dictionary and a fresh start both, rather than changing
    the ranks in them, so a reader's tables stay consistent while another thread adds
    moves.
    """

    def __init__(self, limit: int = MOVES_KEPT) -> None:
        self.limit = limit
        self.tables: Tables = ({}, {})
        self._keys: list[tuple] = []
        """The sort keys of the moves, in order."""
        self._moves: list[RawTerm] = []
        """The moves, in the same order."""
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._moves)

    def ranked(self, moves: Collection[RawTerm]) -> Tables:
        """The :attr:`tables`, with every move of ``moves`` in them."""
        with self._lock:
            rank = self.tables[0]
            new = {move for move in moves if move not in rank}
            if new:
                if len(rank) + len(new) > self.limit:
                    self._start_again()
                    new = set(moves)
                if len(new) > BULK:
                    self._merge(new)
                else:
                    for move in new:
                        self._insert(move)
            return self.tables

    def sort(self, moves: list[RawTerm]) -> list[RawTerm]:
        """``moves`` sorted in place (and returned) in the public order."""
        rank, _ = self.ranked(moves)
        moves.sort(key=rank.__getitem__)
        return moves

    def _start_again(self) -> None:
        self.tables = ({}, {})
        self._keys, self._moves = [], []

    def _insert(self, move: RawTerm) -> None:
        key = sort_key(move)
        keys, moves = self._keys, self._moves
        rank, public = self.tables
        at = bisect_left(keys, key)
        keys.insert(at, key)
        moves.insert(at, move)
        public[move] = wrap(move)
        below = rank[moves[at - 1]] if at else None
        above = rank[moves[at + 1]] if at + 1 < len(moves) else None
        if above is None:
            rank[move] = (below or 0) + SPACING
        elif below is None:
            rank[move] = above - SPACING
        elif above - below >= 2:
            rank[move] = (below + above) // 2
        else:
            self._renumber()

    def _merge(self, new: set[RawTerm]) -> None:
        public = self.tables[1]
        for move in new:
            public[move] = wrap(move)
        pairs = sorted(
            [*zip(self._keys, self._moves, strict=True), *((sort_key(move), move) for move in new)],
            key=itemgetter(0),
        )
        self._keys = [key for key, _ in pairs]
        self._moves = [move for _, move in pairs]
        self._renumber()

    def _renumber(self) -> None:
        """Every rank anew, :data:`SPACING` apart (a new dictionary, see the class)."""
        rank = {move: (at + 1) * SPACING for at, move in enumerate(self._moves)}
        self.tables = (rank, self.tables[1])


__all__ = ["MoveOrder"]
