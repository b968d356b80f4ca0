"""The match queue and the in-process runner that takes matches from it into the store."""

from .logs import rebuild_record, signed_text
from .metrics import RunnerMetrics
from .queue import (
    PLAYER_UNAVAILABLE,
    SERVER_RESTART,
    SERVER_STOP,
    STORE_FAILED,
    MatchRequest,
    QueueRunner,
    RunnerSettings,
    queue_again,
    queue_match,
)

__all__ = [
    "PLAYER_UNAVAILABLE",
    "SERVER_RESTART",
    "SERVER_STOP",
    "STORE_FAILED",
    "MatchRequest",
    "QueueRunner",
    "RunnerMetrics",
    "RunnerSettings",
    "queue_again",
    "queue_match",
    "rebuild_record",
    "signed_text",
]
