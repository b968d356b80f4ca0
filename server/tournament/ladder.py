"""A continuous ladder, as Tiltyard runs: matches go on being made until it is stopped.

Each new match takes the game played least so far, then the free players who have
played that game least (then played least overall), then gives them the roles they have
played least in that game. Ties are broken by a generator seeded with the spec's seed
and the match's number, so the same history always gives the same next match. Any
number of roles is supported.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from itertools import permutations

from .planned import PlannedMatch, match_key
from .spec import TournamentSpec

MAX_PERMUTED_ROLES = 6
"""Up to this many roles every seating is weighed; beyond, roles are dealt one by one."""


class LadderCounts:
    """How often each player has played each game and role (matches made so far)."""

    def __init__(self, matches: Iterable[tuple[str, list[str]]]) -> None:
        self.games: Counter[str] = Counter()
        self.player: Counter[str] = Counter()
        self.player_game: Counter[tuple[str, str]] = Counter()
        self.player_role: Counter[tuple[str, str, int]] = Counter()
        for game, players in matches:
            self.add(game, players)

    def add(self, game: str, players: list[str]) -> None:
        """Count one more match."""
        self.games[game] += 1
        for role, player in enumerate(players):
            self.player[player] += 1
            self.player_game[player, game] += 1
            self.player_role[player, game, role] += 1


def ladder_matches(
    spec: TournamentSpec,
    roles: Mapping[str, int],
    counts: LadderCounts,
    made: int,
    free: Mapping[str, int],
    limit: int,
) -> list[PlannedMatch]:
    """Up to `limit` new matches numbered from `made`, for players with free slots.

    `free` maps each player that may play now to how many more matches it can take.
    """
    free = Counter({p: n for p, n in free.items() if n > 0})
    matches: list[PlannedMatch] = []
    while len(matches) < limit:
        number = made + len(matches)
        match = _next_match(spec, roles, counts, number, free)
        if match is None:
            break
        matches.append(match)
        counts.add(match.game, match.players)
        free.subtract(match.players)
        free = +free
    return matches


def _next_match(
    spec: TournamentSpec,
    roles: Mapping[str, int],
    counts: LadderCounts,
    number: int,
    free: Counter[str],
) -> PlannedMatch | None:
    rng = random.Random(f"{spec.seed}/{number}")
    games = spec.all_games
    tiebreak = {g: rng.random() for g in games}
    for game in sorted(games, key=lambda g: (counts.games[g], tiebreak[g])):
        size = roles[game]
        players = sorted(free, key=lambda p: spec.players.index(p))
        if len(players) < size:
            continue
        shuffle = {p: rng.random() for p in players}
        chosen = sorted(
            players, key=lambda p: (counts.player_game[p, game], counts.player[p], shuffle[p])
        )[:size]
        seating = _seat(counts, game, chosen)
        return PlannedMatch(
            key=match_key(number, 0, spec.all_games.index(game), _indices(spec, seating)),
            round=number,
            table=0,
            game_index=spec.all_games.index(game),
            game=game,
            players=seating,
            startclock=spec.startclock,
            playclock=spec.playclock,
        )
    return None


def _seat(counts: LadderCounts, game: str, chosen: list[str]) -> list[str]:
    """The seating that keeps the most-played role count lowest, then the total."""

    def cost(seating: Sequence[str]) -> tuple[int, int]:
        played = [counts.player_role[p, game, role] for role, p in enumerate(seating)]
        return (max(played), sum(played))

    if len(chosen) <= MAX_PERMUTED_ROLES:
        best: tuple[str, ...] = min(permutations(chosen), key=cost)
        return list(best)
    seating: list[str] = []
    left = list(chosen)
    for role in range(len(chosen)):
        pick = min(left, key=lambda p: counts.player_role[p, game, role])
        seating.append(pick)
        left.remove(pick)
    return seating


def _indices(spec: TournamentSpec, players: list[str]) -> list[int]:
    return [spec.players.index(p) for p in players]
