"""Scale-out: matches run by any number of worker processes sharing one PostgreSQL.

procrastinate is the job system (one job per queued match, heartbeats, stalled jobs);
the ``matches`` table stays the record of truth.  See :mod:`server.workers.runner`.
"""

from .control import JobControl
from .events import EventListener, StepNotifier
from .monitor import ScaleOutMetrics
from .runner import JobRunner, WorkerSettings
from .sweeper import WORKER_LOST, LostMatchSweeper

__all__ = [
    "WORKER_LOST",
    "EventListener",
    "JobControl",
    "JobRunner",
    "LostMatchSweeper",
    "ScaleOutMetrics",
    "StepNotifier",
    "WorkerSettings",
]
