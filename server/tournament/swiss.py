"""Swiss: a fixed number of rounds, each paired from the standings after the last one.

Two-role games only. A round is paired when every match of the previous one has a
result. Each pair plays one seating `matches_per_seating` times. Pairing priorities, in
order: no pair that met before (repeats only when unavoidable); seats balanced (a
player's rounds in the first role and in the second stay within one of each other; in
round one the higher seed plays first on the first table, second on the next, and so on);
the bye to the lowest-ranked player who has not had one; then players as close in the
ranking as possible (the leader with the next player, and so on down).
The bye scores as a win for each match of the round. A player that forfeited is
withdrawn from the rounds paired afterwards.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations

import networkx as nx

from .planned import PlannedMatch, match_key
from .results import MatchResult, match_points
from .spec import TournamentSpec

_BYE = 1_000_000
"""The pairing graph's vertex for the bye (players are vertices 0, 1, ...)."""


@dataclass(frozen=True)
class SwissRound:
    """One paired round: pairs in seat order (first role, second role) and the bye."""

    number: int
    pairs: list[tuple[str, str]]
    bye: str | None


@dataclass(frozen=True)
class SwissPlan:
    """Every round paired so far, their matches and byes, and whether all are played."""

    rounds: list[SwissRound]
    matches: list[PlannedMatch]
    byes: list[MatchResult]
    complete: bool


@dataclass
class _History:
    points: defaultdict[str, float] = field(default_factory=lambda: defaultdict(float))
    met: Counter[frozenset[str]] = field(default_factory=Counter)
    seat_balance: Counter[str] = field(default_factory=Counter)
    """Rounds in the first role minus rounds in the second."""
    last_seat: dict[str, int] = field(default_factory=dict)
    had_bye: set[str] = field(default_factory=set)
    withdrawn: set[str] = field(default_factory=set)


def bye_key(round_: int, game_index: int, player_index: int) -> str:
    """The key of a bye's result."""
    return f"{round_}/bye/{game_index}/{player_index}"


def swiss_plan(spec: TournamentSpec, results: Mapping[str, MatchResult]) -> SwissPlan:
    """Replay the pairings from the results by slot; stop at the first unfinished round."""
    assert spec.rounds is not None
    history = _History()
    rounds: list[SwissRound] = []
    matches: list[PlannedMatch] = []
    byes: list[MatchResult] = []
    for number in range(1, spec.rounds + 1):
        ranked = [
            p
            for p in sorted(spec.players, key=lambda p: (-history.points[p], spec.players.index(p)))
            if p not in history.withdrawn
        ]
        if len(ranked) < 2:
            break
        paired = _pair_round(number, ranked, history)
        rounds.append(paired)
        round_matches = _round_matches(spec, paired)
        matches.extend(round_matches)
        if paired.bye is not None:
            byes.extend(_byes(spec, number, paired.bye))
        if any(m.key not in results for m in round_matches):
            return SwissPlan(rounds, matches, byes, complete=False)
        _record(spec, history, paired, [results[m.key] for m in round_matches])
    return SwissPlan(rounds, matches, byes, complete=True)


def _pair_round(number: int, ranked: Sequence[str], history: _History) -> SwissRound:
    """Pair one round of players listed best first (see the module's priorities).

    The pairing is a minimum-cost perfect matching (Edmonds' blossom algorithm) whose
    cost counts, on scales far enough apart that each outweighs all the next ones:
    repeat pairings, seat clashes, the bye's height in the ranking, and the squared
    distances in the ranking between partners.
    """
    n = len(ranked)
    distance_unit = 1
    bye_unit = n**3 + 1
    clash_unit = bye_unit * (n + 1)
    repeat_unit = clash_unit * (n + 1)
    ceiling = repeat_unit * (n + 1)
    graph = nx.Graph()
    for i, j in combinations(range(n), 2):
        a, b = ranked[i], ranked[j]
        cost = (
            repeat_unit * (history.met[frozenset((a, b))] > 0)
            + clash_unit * _clash(a, b, history)
            + distance_unit * (j - i) ** 2
        )
        graph.add_edge(i, j, weight=ceiling - cost)
    if n % 2:
        fresh = [i for i in reversed(range(n)) if ranked[i] not in history.had_bye]
        for height, i in enumerate(fresh or reversed(range(n))):
            graph.add_edge(i, _BYE, weight=ceiling - bye_unit * height)
    matching = nx.max_weight_matching(graph, maxcardinality=True)
    bye = None
    pairs = []
    for i, j in sorted(tuple(sorted(edge)) for edge in matching):
        if j == _BYE:
            bye = ranked[i]
        else:
            pairs.append((ranked[i], ranked[j]))
    seated = [_seat(a, b, number + table, history) for table, (a, b) in enumerate(pairs)]
    return SwissRound(number, seated, bye)


def _clash(a: str, b: str, history: _History) -> bool:
    """Whether seating the two must push one of them two seats out of balance."""
    return history.seat_balance[a] * history.seat_balance[b] > 0


def _seat(a: str, b: str, parity: int, history: _History) -> tuple[str, str]:
    """Seat a pair (`a` ranked higher): the one more often second plays first.

    Between players with the same seat history, the higher-ranked plays first when
    `parity` (round number plus table number) is odd, so seats alternate down the tables.
    """
    balance_a, balance_b = history.seat_balance[a], history.seat_balance[b]
    if balance_a != balance_b:
        return (a, b) if balance_a < balance_b else (b, a)
    last_a, last_b = history.last_seat.get(a), history.last_seat.get(b)
    if last_a is not None and last_a != last_b:
        return (a, b) if last_a == 1 else (b, a)
    return (a, b) if parity % 2 else (b, a)


def _round_matches(spec: TournamentSpec, paired: SwissRound) -> list[PlannedMatch]:
    matches = []
    for table, pair in enumerate(paired.pairs):
        seating = [spec.players.index(p) for p in pair]
        for game_index in range(spec.matches_per_seating):
            matches.append(
                PlannedMatch(
                    key=match_key(paired.number, table, game_index, seating),
                    round=paired.number,
                    table=table,
                    game_index=game_index,
                    game=spec.game,
                    players=list(pair),
                    startclock=spec.startclock,
                    playclock=spec.playclock,
                )
            )
    return matches


def _byes(spec: TournamentSpec, number: int, player: str) -> list[MatchResult]:
    """One bye result per match the round's pairs play."""
    return [
        MatchResult(
            key=bye_key(number, game_index, spec.players.index(player)),
            game=spec.game,
            players=[player],
            goals=[100],
            bye=True,
        )
        for game_index in range(spec.matches_per_seating)
    ]


def _record(
    spec: TournamentSpec, history: _History, paired: SwissRound, results: list[MatchResult]
) -> None:
    for first, second in paired.pairs:
        history.met[frozenset((first, second))] += 1
        history.seat_balance[first] += 1
        history.seat_balance[second] -= 1
        history.last_seat[first], history.last_seat[second] = 0, 1
    if paired.bye is not None:
        history.had_bye.add(paired.bye)
        history.points[paired.bye] += spec.matches_per_seating
    for result in results:
        for role, (player, points) in enumerate(
            zip(result.players, match_points(result, spec.points), strict=True)
        ):
            history.points[player] += points
            if result.forfeited(role):
                history.withdrawn.add(player)
