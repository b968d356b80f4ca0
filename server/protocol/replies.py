"""The players' replies: reading them on the server side, writing them on the player side.

A move reply is compared as a parsed term, so ``( mark 1 2 )`` and ``(mark 1 2)``
are the same move: only spacing is free.  Letter case counts, as in GGP-Base, which
records ``NOOP`` for ``noop`` as ``IL NOOP``; ``ignore_case`` relaxes that.

What a player sent is quoted in a record only up to :data:`QUOTE_LIMIT` characters,
so a hostile reply cannot grow a match log by more than a bounded amount per step.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from pydantic import BaseModel, ConfigDict

from server.gdl.errors import GdlError
from server.gdl.parser import node_to_term
from server.gdl.terms import RawTerm, map_constants, to_ggp, to_ggp_prefix

from .errors import ProtocolError
from .sexpr import fold_keywords, read_sexpression

READY = "ready"
"""The reply to START."""
BUSY = "busy"
"""The reply to START while in a match, and to a message for a match the player does not know."""
DONE = "done"
"""The reply to STOP."""
ABORTED = "aborted"
"""The reply to ABORT."""

T = TypeVar("T", bound=RawTerm)

QUOTE_LIMIT = 200
"""The most characters of a player's move quoted in an error code or message."""


def quote_move(term: RawTerm, limit: int = QUOTE_LIMIT) -> str:
    """A move as GGP-Base prints it, cut after ``limit`` characters with a marker.

    Moves of ordinary size come back exactly as :func:`to_ggp` prints them; the work
    is bounded by ``limit`` whatever the size of the term.
    """
    text, complete = to_ggp_prefix(term, limit)
    return text if complete else text + "..."


_CACHED_REPLY_LENGTH = 256
"""Replies up to this many characters are remembered once read (moves repeat a lot)."""
_CACHED_REPLIES = 8192
"""The most replies remembered; the memory is emptied when it is full."""
_read_replies: dict[str, RawTerm] = {}


def parse_move_reply(text: str) -> RawTerm:
    """Read a player's reply to PLAY as one term; raise :class:`ProtocolError` if it is not one.

    Short replies that read well are remembered: terms are immutable, and the same
    moves come back step after step, match after match.
    """
    term = _read_replies.get(text)
    if term is not None:
        return term
    node = read_sexpression(text, "move")
    try:
        term = node_to_term(fold_keywords(node))
    except GdlError as error:
        raise ProtocolError(f"unreadable move: {error}") from None
    if len(text) <= _CACHED_REPLY_LENGTH:
        if len(_read_replies) >= _CACHED_REPLIES:
            _read_replies.clear()
        _read_replies[text] = term
    return term


def _folded(term: RawTerm) -> RawTerm:
    return map_constants(term, str.casefold)


def match_legal_move(
    reply: RawTerm, legal_moves: Sequence[T], *, ignore_case: bool = False
) -> T | None:
    """The legal move a reply stands for, or ``None`` when it is not legal.

    The reply must equal a legal move, letter case included, as GGP-Base requires.
    With ``ignore_case`` a reply that equals exactly one legal move ignoring letter
    case is accepted too.  Legal moves are shallow, so comparing them with a deep
    reply stops at the first difference.
    """
    for move in legal_moves:
        if move == reply:
            return move
    if not ignore_case:
        return None
    folded = _folded(reply)
    candidates = [move for move in legal_moves if _folded(move) == folded]
    return candidates[0] if len(candidates) == 1 else None


def render_move(move: RawTerm) -> str:
    """A move as a player sends it: ``( mark 2 1 )`` or ``noop``."""
    return to_ggp(move)


class InfoReply(BaseModel):
    """A player's answer to INFO: its name, its status, and optionally its species."""

    model_config = ConfigDict(frozen=True)

    name: str | None = None
    status: str | None = None
    species: str | None = None

    @property
    def available(self) -> bool:
        """True when the player says it is ready for a new match."""
        return self.status == "available"


_INFO_KEYS = ("name", "status", "species")


def parse_info_reply(text: str) -> InfoReply:
    """Read an INFO reply: ``((name X) (status available))`` in any case, or a bare status atom."""
    node = read_sexpression(text, "INFO reply")
    if isinstance(node.value, str):
        return InfoReply(status=node.value.lower())
    fields: dict[str, str] = {}
    for pair in node.value:
        if not isinstance(pair.value, tuple) or len(pair.value) < 2:
            raise ProtocolError("an INFO reply must be a list of (key value) pairs")
        key = pair.value[0].value
        if not isinstance(key, str):
            raise ProtocolError("an INFO key must be an atom")
        key = key.lower()
        if key not in _INFO_KEYS:
            continue
        try:
            value = " ".join(to_ggp(node_to_term(part)) for part in pair.value[1:])
        except GdlError as error:
            raise ProtocolError(f"unreadable INFO value for {key}: {error}") from None
        fields[key] = value.lower() if key == "status" else value
    return InfoReply(**fields)


def _check_atom(value: str, what: str) -> str:
    if not value or any(char.isspace() or char in "();" for char in value):
        raise ValueError(f"{what} must be one word without spaces or parentheses: {value!r}")
    return value


def render_info_reply(info: InfoReply) -> str:
    """An INFO reply as GGP-Base's players send it: ``( ( name Random ) ( status available ) )``."""
    pairs = [
        (key, _check_atom(value, key))
        for key in _INFO_KEYS
        if (value := getattr(info, key)) is not None
    ]
    return "( " + "".join(f"( {key} {value} ) " for key, value in pairs) + ")"
