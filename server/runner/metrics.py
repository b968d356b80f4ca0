"""Prometheus metrics of the runner: matches by status, step latency, player errors."""

from __future__ import annotations

import time

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from server.match import MatchEvent, PlayersStarted, StepPlayed


class RunnerMetrics:
    """The service's metrics, in a registry of their own (one per service)."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.running = Gauge("ggp_matches_running", "Matches running now", registry=self.registry)
        self.queued = Gauge(
            "ggp_matches_queued", "Matches waiting in the queue", registry=self.registry
        )
        self.finished = Counter(
            "ggp_matches_finished", "Matches that ended", ["status"], registry=self.registry
        )
        self.step_seconds = Histogram(
            "ggp_step_seconds",
            "Wall time from one step of a match to the next",
            buckets=(0.005, 0.01, 0.05, 0.1, 0.5, 1, 2, 5, 10, 30, 60),
            registry=self.registry,
        )
        self.player_errors = Counter(
            "ggp_player_errors", "Player errors by GGP-Base code", ["code"], registry=self.registry
        )

    def watcher(self) -> StepTimer:
        """An observer for one match that feeds the step and error metrics."""
        return StepTimer(self)


class StepTimer:
    """Times the steps of one match and counts its player errors."""

    def __init__(self, metrics: RunnerMetrics) -> None:
        self.metrics = metrics
        self.last = time.monotonic()

    def __call__(self, event: MatchEvent) -> None:
        if isinstance(event, PlayersStarted | StepPlayed):
            now = time.monotonic()
            if isinstance(event, StepPlayed):
                self.metrics.step_seconds.observe(now - self.last)
            self.last = now
            for code in event.errors:
                if code:
                    self.metrics.player_errors.labels(code.split(" ", 1)[0]).inc()
