"""The relay: bridges any HTTP GGP player to the server over an outbound WebSocket.

``ggp connect --server URL --token TOKEN --player http://localhost:9147`` runs next to
an existing player (GGP-Base's, unchanged) behind a firewall: every message the server
sends on the socket is posted to the player with GGP-Base's request bytes
(:func:`~server.match.transport.send_message`) and the player's reply goes back on the
socket.  A message the player does not answer gets an error frame (the server records
``CE`` for it) and one line on stderr.
"""

from __future__ import annotations

from players.outbound import Answer, say
from server.match.transport import PlayerAddress, send_message
from server.protocol import Play, ProtocolError, Start, Stop, parse_message

START_SLACK = 5.0
"""Seconds past a message's clock that the relay waits for the player."""
UNKNOWN_CLOCK = 60.0
"""Seconds the relay waits for an answer to a message whose clock it does not know."""


def relay_answer(address: PlayerAddress) -> Answer:
    """Answers by posting each message to the player at ``address``."""
    play_clocks: dict[str, float] = {}

    async def answer(text: str) -> str:
        time_limit = UNKNOWN_CLOCK
        try:
            message = parse_message(text)
        except ProtocolError:
            message = None
        if isinstance(message, Start):
            play_clocks[message.match_id] = float(message.play_clock)
            time_limit = message.start_clock + START_SLACK
        elif isinstance(message, Play | Stop):
            time_limit = play_clocks.get(message.match_id, UNKNOWN_CLOCK) + START_SLACK
            if isinstance(message, Stop):
                play_clocks.pop(message.match_id, None)
        reply = await send_message(address, text, time_limit=time_limit)
        if reply.body is None:
            kind = text.strip("( ").split(" ", 1)[0].upper()
            say(f"the player at {address.url} did not answer {kind}: {reply.message}")
            raise ConnectionError(f"the player behind the relay did not answer: {reply.message}")
        return reply.body

    return answer
