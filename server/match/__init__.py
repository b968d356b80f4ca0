"""One match between remote players: clocks, transport, move checking, substitutes, events.

>>> from server.match import MatchRunner, Player, MatchConfig, LogWriter
>>> runner = MatchRunner(game, [Player("a", "http://127.0.0.1:9147/"), None],  # doctest: +SKIP
...                      MatchConfig(play_clock=5), observers=[LogWriter("matches")])
>>> record = await runner.run()                                              # doctest: +SKIP
"""

from .channel import HttpChannel, PlayerChannel
from .config import MatchConfig, new_match_id
from .events import (
    MatchClosed,
    MatchEnded,
    MatchEvent,
    MatchStarted,
    Observer,
    PlayersStarted,
    StepPlayed,
)
from .log_writer import LogWriter
from .ping import DEFAULT_PING_TIMEOUT, PingResult, PlayerStatus, ping_channel, ping_player
from .runner import RANDOM_ROLE, MatchRunner, MatchStats, Player, run_match
from .step_limit import default_step_limit
from .transport import PlayerAddress, Reply, send_message

__all__ = [
    "DEFAULT_PING_TIMEOUT",
    "HttpChannel",
    "PlayerChannel",
    "RANDOM_ROLE",
    "LogWriter",
    "MatchClosed",
    "MatchConfig",
    "MatchEnded",
    "MatchEvent",
    "MatchRunner",
    "MatchStarted",
    "MatchStats",
    "Observer",
    "PingResult",
    "Player",
    "PlayerAddress",
    "PlayerStatus",
    "PlayersStarted",
    "Reply",
    "StepPlayed",
    "default_step_limit",
    "new_match_id",
    "ping_channel",
    "ping_player",
    "run_match",
    "send_message",
]
