"""A bot that thinks for 2 s before a random legal move: its opponent's replies come first."""

import time

from players.bot import Bot


class SlowBot(Bot):
    name = "Slow"

    def play(self, state):  # type: ignore[no-untyped-def]
        time.sleep(2.0)
        return self.rng.choice(self.legal_moves(state))
