"""Running a match as the checker does: messages out, replies judged, the state kept.

The checker plays every role but the player's with random legal moves and, like a
real server, puts a random legal move in place of a missing or illegal reply.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field

from server.gdl import State
from server.gdl.parser import Rule
from server.gdl.terms import RawTerm
from server.match import PlayerChannel
from server.protocol import (
    Abort,
    Message,
    Play,
    ProtocolError,
    Scrambler,
    Start,
    Stop,
    parse_move_reply,
    render,
)

from .game_maker import MadeGame
from .report import Exchange, excerpt

ABORT_TIME_LIMIT = 1.0
"""Seconds a player has to answer ABORT, as GGP-Base's server waits."""
NETWORK_SLACK = 1.0
"""Seconds past a clock that a reply is still waited for (and reported late)."""


@dataclass
class Session:
    """What the items of one check share: how to reach the player, the clocks, the PLAY replies.

    The channel is an HTTP player's (:class:`~server.match.HttpChannel`) or an outbound
    bot's socket: the checker sends the same messages either way.
    """

    channel: PlayerChannel
    start_clock: int
    play_clock: int
    rng: random.Random
    token: str
    plays: list[Exchange] = field(default_factory=list)
    matches: int = 0

    async def send(self, text: str, time_limit: float) -> Exchange:
        reply = await self.channel.send(text, time_limit=time_limit)
        error = None if reply.ok else f"{reply.error}: {reply.message}"
        return Exchange(
            sent=excerpt(text), received=reply.body, elapsed_ms=reply.elapsed_ms, error=error
        )

    def new_match_id(self) -> str:
        self.matches += 1
        return f"check.{self.token}.{self.matches}"


@dataclass
class CheckMatch:
    """One match as the checker runs it, the checker playing every role but the player's."""

    session: Session
    made: MadeGame
    role: str
    match_id: str
    scrambler: Scrambler | None = None
    state: State = field(init=False)
    last: list[RawTerm] | None = None

    def __post_init__(self) -> None:
        self.state = self.made.game.initial_state()

    @property
    def over(self) -> bool:
        return self.made.game.is_terminal(self.state)

    def _wire(self, message: Message) -> str:
        if self.scrambler is not None:
            message = self.scrambler.scramble_message(message)
        return render(message)

    async def start(self, keyword: str = "START") -> Exchange:
        rules: list[Rule] = self.made.rules
        text = self._wire(
            Start(
                match_id=self.match_id,
                role=self.role,
                rules=rules,
                start_clock=self.session.start_clock,
                play_clock=self.session.play_clock,
            )
        )
        return await self.session.send(
            recased(text, keyword), self.session.start_clock + NETWORK_SLACK
        )

    async def play(self, keyword: str = "PLAY", nil: str = "NIL") -> tuple[Exchange, str | None]:
        """Send PLAY, apply the joint move; the exchange and what is wrong with the reply."""
        text = self._wire(Play(match_id=self.match_id, moves=self.last))
        if self.last is None:
            text = text.replace(" NIL ", f" {nil} ")
        exchange = await self.session.send(
            recased(text, keyword), self.session.play_clock + NETWORK_SLACK
        )
        self.session.plays.append(exchange)
        game, legal = self.made.game, self.made.game.legal_moves(self.state, self.role)
        problem, move = move_problem(exchange, legal, self.scrambler)
        joint = [
            move
            if role == self.role and move is not None
            else self.session.rng.choice(game.legal_moves(self.state, role))
            for role in game.roles
        ]
        self.state, self.last = game.next_state(self.state, joint), joint
        return exchange, problem

    async def stop(self, keyword: str = "STOP") -> Exchange:
        text = self._wire(Stop(match_id=self.match_id, moves=self.last))
        return await self.session.send(
            recased(text, keyword), self.session.play_clock + NETWORK_SLACK
        )

    async def abort(self) -> Exchange:
        return await self.session.send(render(Abort(match_id=self.match_id)), ABORT_TIME_LIMIT)


def recased(text: str, keyword: str) -> str:
    """The message with its leading keyword written as ``keyword`` (e.g. ``play``)."""
    head, _, rest = text.partition(" ")
    tail, _, rest = rest.partition(" ")
    if head == "(" and tail != keyword and tail.upper() == keyword.upper():
        return f"({keyword} {rest}"
    return text


def move_problem(
    exchange: Exchange, legal: Sequence[RawTerm], scrambler: Scrambler | None
) -> tuple[str | None, RawTerm | None]:
    """What is wrong with a PLAY reply (``None`` if nothing) and the legal move it names."""
    if exchange.received is None:
        return f"no move: {exchange.error}", None
    try:
        move = parse_move_reply(exchange.received)
    except ProtocolError as error:
        return f"the reply is not a move: {error}", None
    if scrambler is not None:
        move = scrambler.unscramble_term(move)
    if move not in legal:
        return f"{exchange.received!r} is not a legal move", None
    return None, move
