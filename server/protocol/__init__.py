"""The GGP protocol as data: messages, their exact wire text, replies, scrambling, framing.

Pure functions and pydantic models; no I/O.
"""

from .errors import ProtocolError
from .messages import Abort, Info, Message, Play, Preview, Start, Stop
from .parse import parse_message
from .render import render, render_moves, render_rule, render_rules
from .replies import (
    ABORTED,
    BUSY,
    DONE,
    QUOTE_LIMIT,
    READY,
    InfoReply,
    match_legal_move,
    parse_info_reply,
    parse_move_reply,
    quote_move,
    render_info_reply,
    render_move,
)
from .scramble import Scrambler

__all__ = [
    "ABORTED",
    "BUSY",
    "DONE",
    "QUOTE_LIMIT",
    "READY",
    "Abort",
    "Info",
    "InfoReply",
    "Message",
    "Play",
    "Preview",
    "ProtocolError",
    "Scrambler",
    "Start",
    "Stop",
    "match_legal_move",
    "parse_info_reply",
    "parse_message",
    "parse_move_reply",
    "quote_move",
    "render",
    "render_info_reply",
    "render_move",
    "render_moves",
    "render_rule",
    "render_rules",
]
