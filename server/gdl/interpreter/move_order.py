"""Legal moves in the public order (:func:`~server.gdl.terms.sort_key`), sorted by
ranks kept from state to state.

A state's legal moves are handed out sorted. Sorting them by their sort keys compares
tuples of tuples; on games with many moves (blockerParallel, the amazons) that sort was
a sixth of the public API's time. The moves recur from state to state, so each move
seen gets an integer rank once, in the order of its sort key, and a state's moves are
sorted by rank: one dictionary lookup and an integer comparison a move.

Ranks are spaced :data:`SPACING` apart. A new move takes the rank midway between its
neighbours, and many new moves at once (the amazons' thousands of moves a state, most of
them new for hundreds of states) spread evenly over the gaps they fall in, so that the
moves kept keep their ranks and a merge costs a copy of two lists rather than a sort and
two new dictionaries; when a gap has no room left, every move is renumbered. Each rank
also maps back to its move's public term, so that a state's moves can be sorted as plain
integers and read back.
"""

from __future__ import annotations

import threading
from bisect import bisect_left
from collections.abc import Collection
from itertools import groupby
from operator import itemgetter

from ..terms import RawTerm, sort_key, wrap

SPACING = 1 << 13
"""The gap between neighbouring ranks after a renumbering: small enough that the ranks of
:data:`MOVES_KEPT` moves stay under 2**30, the integers CPython sorts fastest."""
BULK = 32
"""New moves at once past which all are re-sorted rather than inserted one by one."""
MOVES_KEPT = 100_000
"""Moves kept at most; past it the order starts again empty."""
RANK_LIMIT = 1 << 30
"""Ranks stay under this in size (CPython compares smaller integers fastest): a merge
that would go past it renumbers instead."""

Tables = tuple[dict[RawTerm, int], dict[RawTerm, RawTerm], dict[int, RawTerm]]
"""Each move's rank, each move's public term, and each rank's public term."""


class MoveOrder:
    """Every move seen so far: its rank in sort-key order and its public term.

    Readers take :attr:`tables` (one attribute, read at once) without a lock: a
    renumbering replaces the rank dictionary and a fresh start both, rather than changing
    the ranks in them, so a reader's tables stay consistent while another thread adds
    moves.
    """

    def __init__(self, limit: int = MOVES_KEPT) -> None:
        self.limit = limit
        self.tables: Tables = ({}, {}, {})
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
        rank = self.ranked(moves)[0]
        moves.sort(key=rank.__getitem__)
        return moves

    def _start_again(self) -> None:
        self.tables = ({}, {}, {})
        self._keys, self._moves = [], []

    def _insert(self, move: RawTerm) -> None:
        key = sort_key(move)
        keys, moves = self._keys, self._moves
        rank, public, by_rank = self.tables
        at = bisect_left(keys, key)
        keys.insert(at, key)
        moves.insert(at, move)
        term = public[move] = wrap(move)
        below = rank[moves[at - 1]] if at else None
        above = rank[moves[at + 1]] if at + 1 < len(moves) else None
        if above is None:
            place = (below or 0) + SPACING
        elif below is None:
            place = above - SPACING
        elif above - below >= 2:
            place = (below + above) // 2
        else:
            self._renumber()
            return
        by_rank[place] = term  # before the rank, for readers without the lock
        rank[move] = place

    def _merge(self, new: set[RawTerm]) -> None:
        """Many new moves at once: each takes a rank spread evenly over the gap between
        the ranks of its neighbours among the moves kept (their ranks stay); when a gap
        has too little room for the moves that fall in it, every move is renumbered."""
        incoming = sorted(((sort_key(move), move) for move in new), key=itemgetter(0))
        places = self._places([key for key, _ in incoming])
        if places is None:
            self._merge_all(incoming)
            return
        keys, moves = self._keys, self._moves
        rank, public, by_rank = self.tables
        merged_keys: list[tuple] = []
        merged_moves: list[RawTerm] = []
        done = 0
        for (key, move), (point, place) in zip(incoming, places, strict=True):
            term = public[move] = wrap(move)
            by_rank[place] = term  # before the rank, for readers without the lock
            rank[move] = place
            merged_keys += keys[done:point]
            merged_moves += moves[done:point]
            merged_keys.append(key)
            merged_moves.append(move)
            done = point
        merged_keys += keys[done:]
        merged_moves += moves[done:]
        self._keys, self._moves = merged_keys, merged_moves

    def _places(self, incoming: list[tuple]) -> list[tuple[int, int]] | None:
        """Per sort key of ``incoming`` (sorted, none kept yet): where it goes among the
        moves kept and the rank it takes; None when some gap has no room for its moves."""
        keys, moves, rank = self._keys, self._moves, self.tables[0]
        points = [bisect_left(keys, key) for key in incoming]
        places: list[tuple[int, int]] = []
        for point, falling in groupby(points):
            count = len(list(falling))
            below = rank[moves[point - 1]] if point else None
            above = rank[moves[point]] if point < len(moves) else None
            if below is None:
                below = (0 if above is None else above) - (count + 1) * SPACING
            if above is None:
                above = below + (count + 1) * SPACING
            step = (above - below) // (count + 1)
            if step < 1 or max(abs(below), abs(above)) >= RANK_LIMIT:
                return None
            places.extend((point, below + step * (at + 1)) for at in range(count))
        return places

    def _merge_all(self, incoming: list[tuple]) -> None:
        """Every move kept and ``incoming`` (sort keys and moves) sorted, all renumbered."""
        public = self.tables[1]
        for _, move in incoming:
            public[move] = wrap(move)
        pairs = sorted([*zip(self._keys, self._moves, strict=True), *incoming], key=itemgetter(0))
        self._keys = [key for key, _ in pairs]
        self._moves = [move for _, move in pairs]
        self._renumber()

    def _renumber(self) -> None:
        """Every rank anew, :data:`SPACING` apart (a new dictionary, see the class)."""
        public = self.tables[1]
        rank = {move: (at + 1) * SPACING for at, move in enumerate(self._moves)}
        by_rank = {place: public[move] for move, place in rank.items()}
        self.tables = (rank, public, by_rank)


__all__ = ["MoveOrder"]
