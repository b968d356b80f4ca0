"""Why the rules of a match could not go on."""

from __future__ import annotations

from server.records import EndReason


class RulesFailure(Exception):
    """The rules worker could not answer; ``reason`` is the match's end reason."""

    reason: EndReason = EndReason.ERROR


class RulesLimitError(RulesFailure):
    """The rules went past their CPU-time or memory budget."""

    reason = EndReason.RULES_LIMIT


class RulesWorkerDied(RulesFailure):
    """The worker process ended without an answer (killed, crashed)."""

    reason = EndReason.ERROR
