"""The worker's heartbeat in a thread of its own.

procrastinate beats from the event loop; a worker whose loop is slow (many matches on a
loaded machine) would then look dead while it plays on, and its matches would be
recorded ``worker_lost`` for nothing.  This thread beats with its own connection, so a
worker counts as lost when its process is gone or cut off from the database, not when
it is merely busy.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

import psycopg

from .jobs import conninfo

log = logging.getLogger(__name__)


class HeartbeatThread:
    """Calls procrastinate's heartbeat for ``worker_id()`` every ``seconds`` until stopped."""

    def __init__(self, url: str, worker_id: Callable[[], int | None], seconds: float) -> None:
        self.url = conninfo(url)
        self.worker_id = worker_id
        self.seconds = seconds
        self.beats = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="worker-heartbeat", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def _run(self) -> None:
        connection: psycopg.Connection[tuple[object, ...]] | None = None
        while not self._stop.wait(self.seconds):
            worker = self.worker_id()
            if worker is None:
                continue
            try:
                if connection is None or connection.closed:
                    connection = psycopg.connect(self.url, autocommit=True, connect_timeout=5)
                connection.execute("SELECT procrastinate_update_heartbeat_v1(%s)", (worker,))
                self.beats += 1
            except psycopg.Error as error:
                log.warning("the worker's heartbeat failed: %s", error)
                if connection is not None:
                    connection.close()
                connection = None
        if connection is not None:
            connection.close()
