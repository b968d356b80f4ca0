"""Frames between the server and a rules worker: a 4-byte length, then a pickle.

Only this server's own worker reads and writes these frames, over the pipes of a
process it started; nothing from a player or a file is ever unpickled.
"""

from __future__ import annotations

import pickle
import struct
from typing import Any

HEADER = struct.Struct(">I")


def encode(message: Any) -> bytes:
    """One frame holding ``message``."""
    body = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    return HEADER.pack(len(body)) + body


def decode(body: bytes) -> Any:
    """The message of one frame's body."""
    return pickle.loads(body)
