"""Deterministic bots for the scale-out tests: the same state always gets the same move,
whatever the order matches are played in, so standings do not depend on scheduling.

``SlowFirst`` thinks a little on every move (so a match lasts long enough to kill its
worker mid-match) and writes the id of every match it is told to ABORT to the file named
by ``GGP_TEST_ABORT_LOG``.
"""

from __future__ import annotations

import os
import time

from players.bot import Bot


class _Ranked(Bot):
    pick = 0

    def play(self, state):  # type: ignore[no-untyped-def]
        moves = sorted(self.legal_moves(state), key=str)
        return moves[min(self.pick, len(moves) - 1) if self.pick >= 0 else -1]


class FirstMove(_Ranked):
    name = "first"
    pick = 0


class SecondMove(_Ranked):
    name = "second"
    pick = 1


class LastMove(_Ranked):
    name = "last"
    pick = -1


class ThirdMove(_Ranked):
    name = "third"
    pick = 2


class SlowFirst(_Ranked):
    name = "slow"
    pick = 0

    def play(self, state):  # type: ignore[no-untyped-def]
        time.sleep(float(os.environ.get("GGP_TEST_THINK", "0.25")))
        return super().play(state)

    def abort(self) -> None:
        path = os.environ.get("GGP_TEST_ABORT_LOG")
        match = getattr(self._match, "match_id", None)
        if path and match:
            with open(path, "a", encoding="utf-8") as log:
                log.write(f"{match}\n")
