"""Moves the server chooses itself: substitutes for unusable replies, and the ``random`` role."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import TypeVar

from server.records import SubstitutePolicy

T = TypeVar("T")


class MoveChooser:
    """Chooses substitute moves by a policy, from one seeded generator per match.

    With the same seed and the same sequence of faults, a match chooses the same moves.
    """

    def __init__(self, policy: SubstitutePolicy, seed: int) -> None:
        self.policy = policy
        self.seed = seed
        self._rng = random.Random(seed)

    def random_move(self, legal: Sequence[T]) -> T:
        """A uniformly random legal move."""
        return legal[self._rng.randrange(len(legal))]

    def substitute(self, legal: Sequence[T]) -> T:
        """The move to play for a role whose reply cannot be used."""
        if self.policy is SubstitutePolicy.FIRST:
            return legal[0]
        return self.random_move(legal)
