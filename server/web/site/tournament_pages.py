"""The tournament pages: the list, and one tournament's standings, table or bracket, matches.

The standings are the ones the API serves: the same results read by the tournament
driver (cached per match) and the same ``server.tournament.standings``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from server.league import TournamentDriver
from server.store import MatchStatus, NotFound, TournamentRow
from server.store.page_reads import match_counts, match_summaries
from server.tournament import TournamentSpec, round_robin_schedule, standings

from .tournament_tables import bracket, crosstable, round_name

if TYPE_CHECKING:
    from .views import Site

MATCHES_PER_PAGE = 50
MAX_TOURNAMENT_MATCHES = 100_000


@dataclass(frozen=True)
class Progress:
    """Matches done (played, aborted or decided without play) of the total, when known."""

    done: int
    total: int | None
    running: int
    queued: int

    @property
    def percent(self) -> int | None:
        if not self.total:
            return None
        return min(100, round(100 * self.done / self.total))


async def schedule_size(site: Site, spec: TournamentSpec) -> int | None:
    """Matches in the whole schedule: known in advance for a round robin only."""
    if spec.format != "round_robin":
        return None
    try:
        roles = len((await site.store.get_game(spec.game)).roles)
    except NotFound:
        return None
    if roles > len(spec.players):
        return None
    return len(round_robin_schedule(spec, roles))


async def progress_of(
    site: Site, row: TournamentRow, counts: dict[str, int], awarded: int = 0
) -> Progress:
    """Finished matches and results decided without play, against the schedule's size
    (aborted matches are played again, so they are not done)."""
    spec = TournamentSpec.model_validate(row.spec)
    return Progress(
        done=counts.get(MatchStatus.FINISHED.value, 0) + awarded,
        total=await schedule_size(site, spec),
        running=counts.get(MatchStatus.RUNNING.value, 0),
        queued=counts.get(MatchStatus.QUEUED.value, 0),
    )


async def tournament_list(site: Site, statuses: list[str] | None = None) -> list[dict[str, Any]]:
    """Each tournament (newest first) with its progress."""
    driver = _driver(site)
    rows = await driver.tournaments.find(status=statuses)
    counts = await match_counts(site.store, "tournament_id")
    return [
        {"row": row, "progress": await progress_of(site, row, counts.get(row.id, {}))}
        for row in rows
    ]


async def tournament_context(site: Site, tournament_id: str, page: int) -> dict[str, Any]:
    """Everything the tournament page shows."""
    driver = _driver(site)
    row = await driver.tournaments.get(tournament_id)
    spec = TournamentSpec.model_validate(row.spec)
    matches = await match_summaries(site.store, tournament=row.id, limit=MAX_TOURNAMENT_MATCHES)
    results, _active = await driver.results(row, matches)
    table = standings(spec, results, await driver.statuses(row, spec, matches))
    counts: dict[str, int] = {}
    for match in matches:
        counts[match.status.value] = counts.get(match.status.value, 0) + 1
    awarded = sum(not r.played and not r.aborted_by_server for r in results)
    context: dict[str, Any] = {
        "tournament": row,
        "spec": spec,
        "progress": await progress_of(site, row, counts, awarded),
        "standings": table,
        "awarded": awarded,
        "matches": matches[page * MATCHES_PER_PAGE : (page + 1) * MATCHES_PER_PAGE],
        "match_count": len(matches),
        "page": page,
        "more": len(matches) > (page + 1) * MATCHES_PER_PAGE,
        "crosstable": None,
        "bracket": None,
        "round_name": round_name,
    }
    if spec.format == "round_robin":
        context["crosstable"] = crosstable(spec, results)
    if spec.format == "single_elimination":
        context["bracket"] = bracket(spec, results)
    return context


def _driver(site: Site) -> TournamentDriver:
    driver = site.service.tournaments
    if driver is None:
        raise RuntimeError("the service is not started")
    return driver
