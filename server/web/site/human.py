"""A person in a match: a player inside the service whose moves come from a browser.

Each seat is a :class:`players.agent.PlayerAgent` serving a :class:`HumanPlayer` at
``/human/{seat}``; the match manager talks to it over HTTP like any player.  When asked
to play, the player publishes the legal moves and the deadline (:attr:`HumanPlayer.turn`)
and waits for the page to send a move; at the deadline the agent sends a random legal
move in its place, as for any late player.
"""

from __future__ import annotations

import queue
import secrets
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from players.agent import PlayerAgent
from players.base import Player
from players.match import PlayerMatch
from server.gdl import State
from server.gdl.terms import Term

REPLY_MARGIN = 0.5
"""Seconds before the deadline at which a missing move is given up."""
MAX_SEATS = 50


class HumanPlayer(Player):
    """Plays the moves a person chooses in the browser."""

    name = "Human"
    species = "human"

    def __init__(self) -> None:
        super().__init__(seed=secrets.randbits(32))
        self.moves: queue.Queue[str] = queue.Queue()
        self._lock = threading.Lock()
        self._turn: dict[str, Any] | None = None

    @property
    def turn(self) -> dict[str, Any] | None:
        """The legal moves, the step and the seconds left, while a move is awaited."""
        with self._lock:
            if self._turn is None:
                return None
            return {**self._turn, "seconds_left": max(0.0, self._turn["deadline"] - time.time())}

    def play(self, match: PlayerMatch, state: State) -> Term:
        legal = match.game.legal_moves(state, match.role)
        if len(legal) == 1:  # nothing to choose (often noop while another role moves)
            return legal[0]
        while not self.moves.empty():  # a click from an earlier turn
            self.moves.get_nowait()
        wait = max(0.0, match.time_left() - REPLY_MARGIN)
        with self._lock:
            self._turn = {
                "step": match.step,
                "legal": [str(move) for move in legal],
                "deadline": time.time() + wait,
            }
        try:
            text = self.moves.get(timeout=wait)
        except queue.Empty:
            raise TimeoutError("no move from the browser in time") from None
        finally:
            with self._lock:
                self._turn = None
        return match.game.parse_term(text)

    def choose(self, move: str) -> bool:
        """The person's move; False when no move is awaited or it is not legal."""
        turn = self.turn
        if turn is None or move not in turn["legal"]:
            return False
        self.moves.put(move)
        return True


@dataclass
class Seat:
    """One person's place in one match."""

    id: str
    player_name: str
    role: str
    human: HumanPlayer = field(default_factory=HumanPlayer)
    match_id: str | None = None
    agent: PlayerAgent = field(init=False)

    def __post_init__(self) -> None:
        self.agent = PlayerAgent(self.human, reply_margin=0.1)


class Seats:
    """The seats of people in this service, by id."""

    def __init__(self) -> None:
        self.seats: dict[str, Seat] = {}

    def new(self, role: str) -> Seat | None:
        """A new seat, or None when there are already :data:`MAX_SEATS`."""
        if len(self.seats) >= MAX_SEATS:
            return None
        seat_id = secrets.token_hex(6)
        seat = Seat(seat_id, f"human-{seat_id}", role)
        self.seats[seat_id] = seat
        return seat

    def get(self, seat_id: str) -> Seat | None:
        return self.seats.get(seat_id)
