"""Print messages exactly as GGP-Base's game server sends them.

Spacing matters only for byte-exact reproduction (every receiver collapses
whitespace), but it is reproduced exactly: ``( PLAY id (( mark 2 1 ) noop ) )``.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable

from server.gdl.parser import Rule
from server.gdl.terms import RawTerm, to_ggp

from .messages import Abort, Info, Message, Play, Preview, Start, Stop


@functools.lru_cache(maxsize=65_536)
def render_rule(rule: Rule) -> str:
    """A rule as GGP-Base's ``Gdl.toString()``: ``( <= head body... )``, a fact as its sentence.

    Remembered: every START of every match sends the same rules again.
    """
    if not rule.body:
        return to_ggp(rule.head)
    return "( <= " + "".join(to_ggp(part) + " " for part in (rule.head, *rule.body)) + ")"


def render_rules(rules: Iterable[Rule]) -> str:
    """The rules list of START and PREVIEW: ``(`` then each rule followed by a space, then ``)``."""
    return "(" + "".join(render_rule(rule) + " " for rule in rules) + ")"


def render_moves(moves: list[RawTerm] | None) -> str:
    """A joint move: ``NIL`` when there is none, else ``(`` each move and a space ``)``."""
    if moves is None:
        return "NIL"
    return "(" + "".join(to_ggp(move) + " " for move in moves) + ")"


def render(message: Message) -> str:
    """The exact text GGP-Base's server sends for a message."""
    match message:
        case Start():
            return (
                f"( START {message.match_id} {message.role} {render_rules(message.rules)} "
                f"{message.start_clock} {message.play_clock})"
            )
        case Play():
            return f"( PLAY {message.match_id} {render_moves(message.moves)} )"
        case Stop():
            return f"( STOP {message.match_id} {render_moves(message.moves)} )"
        case Abort():
            return f"( ABORT {message.match_id} )"
        case Info():
            return "( INFO )"
        case Preview():
            return f"( PREVIEW {render_rules(message.rules)} {message.preview_clock} )"
    raise TypeError(f"not a GGP message: {message!r}")
