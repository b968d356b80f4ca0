"""Read the messages a game server sends, liberally.

Keywords may be in any letter case and whitespace is free. START may carry extra
trailing arguments, which are ignored. Anything atomic in the moves slot of PLAY
or STOP (``NIL``, ``nil``) means "no moves". Everything else that does not fit
raises :class:`ProtocolError` with the reason.
"""

from __future__ import annotations

import re

from server.gdl.errors import GdlError
from server.gdl.parser import Node, Rule, node_to_rule, node_to_term
from server.gdl.terms import RawTerm

from .errors import ProtocolError
from .messages import Abort, Info, Message, Play, Preview, Start, Stop
from .sexpr import fold_keywords, read_sexpression

_INTEGER = re.compile(r"\+?\d+")

_ARITY = {"play": 3, "stop": 3, "abort": 2, "info": 1, "preview": 3}
"""Exact number of elements of each message, keyword included (START takes at least 6)."""


def _atom(node: Node, what: str) -> str:
    if not isinstance(node.value, str):
        raise ProtocolError(f"{what} must be an atom, not a list")
    return node.value


def _clock(node: Node, what: str) -> int:
    value = _atom(node, what)
    if not _INTEGER.fullmatch(value):
        raise ProtocolError(f"{what} must be a whole number of seconds, not {value!r}")
    return int(value)


def _rules(node: Node) -> list[Rule]:
    if not isinstance(node.value, tuple):
        raise ProtocolError("the rules must be a list of rules, not an atom")
    try:
        return [node_to_rule(fold_keywords(rule)) for rule in node.value]
    except GdlError as error:
        raise ProtocolError(f"invalid rules: {error}") from None


def _moves(node: Node) -> list[RawTerm] | None:
    if isinstance(node.value, str):
        return None
    try:
        return [node_to_term(fold_keywords(move)) for move in node.value]
    except GdlError as error:
        raise ProtocolError(f"invalid joint move: {error}") from None


_START_HEAD = re.compile(r"\s*\(\s*start\s+[^\s()]+\s+[^\s()]+\s*(?=\()", re.IGNORECASE)
"""``( START id role`` up to the rules' opening parenthesis."""
_START_TAIL = re.compile(r"\)\s*\+?\d+\s+\+?\d+\s*\)\s*\Z")
"""The rules' closing parenthesis, the two clocks and the end of the message."""
_TAIL_REACH = 256
"""How far from the end of a START the clocks are looked for."""
_KNOWN_RULES: dict[str, list[Rule]] = {}
"""The rules of recent STARTs, by their text where it stands in the message (blanks
before it): a player gets the same game again and again."""
_KNOWN_RULES_KEPT = 8


def _start_with_known_rules(text: str) -> Message | None:
    """A START whose rules were read before, read without reading them again.

    The message is cut at the rules' parentheses; the rest (id, role, clocks) is read as
    usual with empty rules, and the rules come from :data:`_KNOWN_RULES`, or are read
    alone and kept.  ``None`` when the message is not cut that way (then it is read
    whole, with the usual errors).
    """
    head = _START_HEAD.match(text)
    tail = _START_TAIL.search(text, max(0, len(text) - _TAIL_REACH))
    if head is None or tail is None or tail.start() < head.end():
        return None
    cut, end = head.end(), tail.start() + 1
    try:
        message = _parse_whole(text[:cut] + "()" + text[end:])
    except ProtocolError:
        return None
    if not isinstance(message, Start):
        return None
    # the rules read alone where they stand, so that they carry the message's lines and
    # columns (as read with the whole message)
    line_start = text.rfind("\n", 0, cut) + 1
    placed = "\n" * text.count("\n", 0, cut) + " " * (cut - line_start) + text[cut:end]
    rules = _KNOWN_RULES.pop(placed, None)
    if rules is None:
        try:
            rules = _rules(read_sexpression(placed, "list of rules"))
        except ProtocolError:
            return None
        while len(_KNOWN_RULES) >= _KNOWN_RULES_KEPT:
            del _KNOWN_RULES[next(iter(_KNOWN_RULES))]  # the least recently used
    _KNOWN_RULES[placed] = rules
    return message.model_copy(update={"rules": list(rules)})


_PLAY_OR_STOP = re.compile(r"\s*\(\s*(play|stop)\s+([^\s()]+)\s+(\S.*?)\s*\)\s*", re.I | re.S)
"""``( PLAY id moves )`` or ``( STOP id moves )``: the keyword, the id, the moves' text."""
_KNOWN_MOVES: dict[str, list[RawTerm] | None] = {}
"""The joint moves of PLAY and STOP messages read before, by their text: the same joint
moves come again and again, as the same messages differ only in their match ids."""
_KNOWN_MOVES_KEPT = 4096


def parse_message(text: str) -> Message:
    """Read one message: START, PLAY, STOP, ABORT, INFO or PREVIEW."""
    if len(text) > _TAIL_REACH:  # a START with rules (other messages are short)
        start = _start_with_known_rules(text)
        if start is not None:
            return start
    play_or_stop = _PLAY_OR_STOP.fullmatch(text)
    if play_or_stop is not None:
        keyword, match_id, moves_text = play_or_stop.groups()
        if moves_text in _KNOWN_MOVES:
            moves = _KNOWN_MOVES[moves_text]
            kind = Play if keyword.lower() == "play" else Stop
            return kind.model_construct(
                match_id=match_id, moves=None if moves is None else list(moves)
            )
    message = _parse_whole(text)
    if play_or_stop is not None and isinstance(message, Play | Stop):
        # read whole with three parts: the text after the id is the moves' and nothing else
        if len(_KNOWN_MOVES) >= _KNOWN_MOVES_KEPT:
            _KNOWN_MOVES.clear()
        _KNOWN_MOVES[moves_text] = None if message.moves is None else list(message.moves)
    return message


def _parse_whole(text: str) -> Message:
    """:func:`parse_message`, reading every part of the message."""
    node = read_sexpression(text)
    if not isinstance(node.value, tuple) or not node.value:
        raise ProtocolError("a message must be a non-empty list such as ( INFO )")
    parts = node.value
    keyword = _atom(parts[0], "the message type").lower()
    if keyword == "start":
        if len(parts) < 6:
            raise ProtocolError(
                "START needs an id, a role, the rules, a start clock and a play clock"
            )
        return Start(
            match_id=_atom(parts[1], "the match id"),
            role=_atom(fold_keywords(parts[2]), "the role"),
            rules=_rules(parts[3]),
            start_clock=_clock(parts[4], "the start clock"),
            play_clock=_clock(parts[5], "the play clock"),
        )
    if keyword not in _ARITY:
        raise ProtocolError(f"unknown message type {parts[0].value!r}")
    if len(parts) != _ARITY[keyword]:
        raise ProtocolError(
            f"{keyword.upper()} takes {_ARITY[keyword] - 1} argument(s), got {len(parts) - 1}"
        )
    if keyword == "play":
        return Play(match_id=_atom(parts[1], "the match id"), moves=_moves(parts[2]))
    if keyword == "stop":
        return Stop(match_id=_atom(parts[1], "the match id"), moves=_moves(parts[2]))
    if keyword == "abort":
        return Abort(match_id=_atom(parts[1], "the match id"))
    if keyword == "preview":
        return Preview(rules=_rules(parts[1]), preview_clock=_clock(parts[2], "the preview clock"))
    return Info()
