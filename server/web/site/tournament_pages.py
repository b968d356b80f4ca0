"""The tournament pages: the list, and one tournament's standings, table or bracket, matches.

The standings are the ones the API serves: each ended match of the schedule made into a
result by the same ``match_result`` as the tournament driver, the awards kept by the
store, and the same ``server.tournament.standings``. The pages read the steps' errors
and times of all of a tournament's new matches in one query (not every step's state,
match by match), and keep the results of ended matches, which never change.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from server.league import TournamentDriver, match_result
from server.store import MatchRow, MatchStatus, NotFound, StepRow, TournamentRow
from server.store.page_reads import match_counts, match_summaries, step_errors
from server.tournament import MatchResult, TournamentSpec, round_robin_schedule, standings

from .tournament_tables import bracket, crosstable, round_name

if TYPE_CHECKING:
    from .views import Site

MATCHES_PER_PAGE = 50
MAX_TOURNAMENT_MATCHES = 100_000
CACHED_RESULTS = 50_000
ACTIVE = (MatchStatus.QUEUED, MatchStatus.RUNNING)


class Results:
    """Results of ended tournament matches, by match id (a bounded cache)."""

    def __init__(self) -> None:
        self._results: OrderedDict[str, MatchResult] = OrderedDict()
        self._roles: dict[tuple[str, int], list[str]] = {}

    async def of(
        self, site: Site, row: TournamentRow, matches: Sequence[MatchRow]
    ) -> list[MatchResult]:
        """Every result of the tournament: its ended scheduled matches and its awards."""
        ended = [m for m in matches if m.schedule_key is not None and m.status not in ACTIVE]
        new = [m for m in ended if m.id not in self._results]
        steps: dict[str, list[StepRow]] = {m.id: [] for m in new}
        for match_id, step, errors, times in await step_errors(site.store, list(steps)):
            steps[match_id].append(
                StepRow(
                    step=step,
                    moves=None,
                    state="",
                    state_time=0,
                    errors=errors,
                    response_times=times,
                    raw_replies=[],
                    details=[],
                )
            )
        for match in new:
            key = (match.game_name, match.game_version)
            if key not in self._roles:
                self._roles[key] = list((await site.store.get_game(*key)).roles)
            self._results[match.id] = match_result(match, steps[match.id], self._roles[key])
        found = []
        for match in ended:
            self._results.move_to_end(match.id)
            found.append(self._results[match.id])
        while len(self._results) > CACHED_RESULTS:
            self._results.popitem(last=False)
        awards = await _driver(site).tournaments.awards(row.id)
        return found + [MatchResult.model_validate(award) for award in awards]


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


async def schedule_size(
    site: Site, spec: TournamentSpec, roles_of: dict[str, int] | None = None
) -> int | None:
    """Matches in the whole schedule: known in advance for a round robin only."""
    if spec.format != "round_robin":
        return None
    roles_of = {} if roles_of is None else roles_of
    if spec.game not in roles_of:
        try:
            roles_of[spec.game] = len((await site.store.get_game(spec.game)).roles)
        except NotFound:
            return None
    roles = roles_of[spec.game]
    if roles > len(spec.players):
        return None
    return len(round_robin_schedule(spec, roles))


async def progress_of(
    site: Site,
    row: TournamentRow,
    counts: dict[str, int],
    awarded: int = 0,
    roles_of: dict[str, int] | None = None,
) -> Progress:
    """Finished matches and results decided without play, against the schedule's size
    (aborted matches are played again, so they are not done)."""
    spec = TournamentSpec.model_validate(row.spec)
    return Progress(
        done=counts.get(MatchStatus.FINISHED.value, 0) + awarded,
        total=await schedule_size(site, spec, roles_of),
        running=counts.get(MatchStatus.RUNNING.value, 0),
        queued=counts.get(MatchStatus.QUEUED.value, 0),
    )


async def tournament_list(site: Site, statuses: list[str] | None = None) -> list[dict[str, Any]]:
    """Each tournament (newest first) with its progress."""
    driver = _driver(site)
    rows = await driver.tournaments.find(status=statuses)
    counts = await match_counts(site.store, "tournament_id")
    roles_of: dict[str, int] = {}  # each game read once
    return [
        {"row": row, "progress": await progress_of(site, row, counts.get(row.id, {}), 0, roles_of)}
        for row in rows
    ]


async def tournament_context(site: Site, tournament_id: str, page: int) -> dict[str, Any]:
    """Everything the tournament page shows."""
    driver = _driver(site)
    row = await driver.tournaments.get(tournament_id)
    spec = TournamentSpec.model_validate(row.spec)
    matches = await match_summaries(site.store, tournament=row.id, limit=MAX_TOURNAMENT_MATCHES)
    results = await site.results.of(site, row, matches)
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
