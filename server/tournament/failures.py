"""Which players count as failed: told so by the service, or erring on every step."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .planned import PlannedMatch, PlayerStatus
from .results import MatchResult, chronological


def failed_players(
    players: Sequence[str], results: Sequence[MatchResult], statuses: Mapping[str, PlayerStatus]
) -> dict[str, str]:
    """Failed players, in the given order, with the reason.

    A player has failed when its status says so, or when it erred on every step of the
    last match it played (unless an operator has cleared it since).
    """
    last: dict[str, tuple[MatchResult, int]] = {}
    for result in chronological(results):
        if result.played:
            for role, player in enumerate(result.players):
                last[player] = (result, role)
    failed = {}
    for player in players:
        status = statuses.get(player, PlayerStatus())
        if status.failed:
            failed[player] = status.failed
        elif player in last and not status.cleared:
            result, role = last[player]
            if result.failed_every_step(role):
                failed[player] = f"erred on every step of match {result.key}"
    return failed


def forfeit_result(match: PlannedMatch, key: str, failed: Mapping[str, str]) -> MatchResult:
    """The match recorded as lost by its failed players; the others win."""
    lost = [player in failed for player in match.players]
    return MatchResult(
        key=key,
        game=match.game,
        players=list(match.players),
        goals=[0 if forfeit else 100 for forfeit in lost],
        forfeits=lost,
    )
