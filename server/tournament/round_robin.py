"""Round robin: every set of players meets in every seating, `matches_per_seating` times.

For an n-role game every n-subset of the players plays, each permutation of the subset
over the roles being one seating; so each player plays each role against each set of
opponents. Any number of roles is supported.
"""

from __future__ import annotations

from functools import lru_cache
from itertools import combinations, permutations

from .planned import PlannedMatch, match_key
from .spec import TournamentSpec


def round_robin_schedule(spec: TournamentSpec, roles: int) -> list[PlannedMatch]:
    """The whole schedule, in rounds where nobody plays twice.

    Seatings are listed subset by subset (in the spec's player order), each seating
    `matches_per_seating` times in a row, then packed greedily: a round takes, in list
    order, every seating that shares no player with those it already holds. The
    schedule is computed once per spec and number of roles (the scheduler asks for it
    on every call).
    """
    return list(_cached_schedule(spec.model_dump_json(), roles))


@lru_cache(maxsize=64)
def _cached_schedule(spec_json: str, roles: int) -> tuple[PlannedMatch, ...]:
    return tuple(_schedule(TournamentSpec.model_validate_json(spec_json), roles))


def _schedule(spec: TournamentSpec, roles: int) -> list[PlannedMatch]:
    remaining = [
        (seating, repeat)
        for subset in combinations(range(len(spec.players)), roles)
        for seating in permutations(subset)
        for repeat in range(spec.matches_per_seating)
    ]
    schedule: list[PlannedMatch] = []
    round_ = 0
    while remaining:
        round_ += 1
        seated: set[int] = set()
        later = []
        for seating, repeat in remaining:
            if seated.isdisjoint(seating):
                seated.update(seating)
                schedule.append(_planned(spec, round_, len(seated) // roles - 1, seating, repeat))
            else:
                later.append((seating, repeat))
        remaining = later
    return schedule


def _planned(
    spec: TournamentSpec, round_: int, table: int, seating: tuple[int, ...], repeat: int
) -> PlannedMatch:
    return PlannedMatch(
        key=match_key(round_, table, repeat, seating),
        round=round_,
        table=table,
        game_index=repeat,
        game=spec.game,
        players=[spec.players[i] for i in seating],
        startclock=spec.startclock,
        playclock=spec.playclock,
    )
