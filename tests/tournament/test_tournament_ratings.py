"""Ratings: OpenSkill updates, what is rated, and recomputation from the archive."""

import random
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from server.tournament import (
    MatchResult,
    Rating,
    RatingBook,
    order_by_rating,
    player_figures,
    recompute_ratings,
    update_ratings,
)

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def match(key: str, players: str, goals: list[int], minute: int = 0, **fields: Any) -> MatchResult:
    return MatchResult(
        key=key,
        game="g",
        players=list(players),
        goals=goals,
        **{"finished_at": T0 + timedelta(minutes=minute), **fields},
    )


def test_finish_times_without_a_zone_are_read_as_utc_and_others_keep_theirs() -> None:
    # The order of finishing decides the ratings, so a time from a database that drops
    # the zone must compare with the others; a time with its zone is kept as it is.
    naive = match("n", "ab", [100, 0], finished_at=datetime(2026, 1, 1, 12))
    assert naive.finished_at == datetime(2026, 1, 1, 12, tzinfo=UTC)
    paris = timezone(timedelta(hours=1))
    aware = match("p", "ab", [100, 0], finished_at=datetime(2026, 1, 1, 13, tzinfo=paris))
    assert aware.finished_at == naive.finished_at and aware.finished_at.utcoffset() == timedelta(
        hours=1
    )
    assert match("u", "ab", [100, 0], finished_at=None).finished_at is None


def test_a_win_moves_both_ratings_as_openskill_publishes() -> None:
    book = update_ratings(RatingBook(), match("m1", "ab", [100, 0]))
    assert book.ratings["a"].mu == pytest.approx(27.635389493140497)
    assert book.ratings["b"].mu == pytest.approx(22.364610506859503)
    assert book.ratings["a"].sigma == book.ratings["b"].sigma == pytest.approx(8.06590141354368)
    assert book.ratings["a"].ordinal == pytest.approx(27.635389493140497 - 3 * 8.06590141354368)


def test_three_roles_and_goals_that_are_not_zero_sum_rank_by_goal() -> None:
    book = update_ratings(RatingBook(), match("m1", "abc", [70, 70, 20]))
    a, b, c = (book.ratings[p] for p in "abc")
    assert a == b  # equal goals tie, whatever the sum
    assert a.mu > Rating().mu > c.mu
    assert a.sigma < Rating().sigma


@pytest.mark.parametrize(
    "skipped",
    [
        match("m", "ab", [0, 0], aborted_by_server=True),
        match("m", "ab", [0, 100], forfeits=[True, False]),
        MatchResult(key="bye", players=["a"], goals=[100], bye=True),
        match("m", "aa", [100, 0]),
    ],
    ids=["aborted by the server", "forfeit", "bye", "self-play"],
)
def test_what_is_not_rated(skipped: MatchResult) -> None:
    assert update_ratings(RatingBook(), skipped) == RatingBook()


def test_matches_with_player_errors_are_rated_and_history_is_kept() -> None:
    book = RatingBook()
    for result in [
        match("m1", "ab", [100, 0], 1, errors=[{}, {"TO": 3}], steps=3),
        match("m2", "bc", [50, 50], 2),
        match("m3", "ca", [100, 0], 3),
    ]:
        book = update_ratings(book, result)
    assert [p.key for p in book.history["a"]] == ["m1", "m3"]
    assert [p.key for p in book.history["b"]] == ["m1", "m2"]
    assert book.history["c"][-1].rating == book.ratings["c"]
    # ordinals: c 4.1, a 1.4, an unrated player 0 (25 - 3 * 25/3), b -0.9
    assert order_by_rating(["b", "a", "c", "newcomer"], book.ratings) == ["c", "a", "newcomer", "b"]


@settings(max_examples=40, deadline=None)
@given(
    matches=st.lists(
        st.tuples(
            st.permutations("abcde").map(lambda p: "".join(p)),
            st.integers(min_value=2, max_value=3),
            st.lists(st.sampled_from([0, 25, 50, 100]), min_size=3, max_size=3),
            st.sampled_from(["played", "played", "played", "aborted", "forfeit"]),
        ),
        max_size=30,
    ),
    shuffle_seed=st.integers(),
)
def test_recomputing_from_the_archive_reproduces_the_stored_incremental_ratings(
    matches: list[tuple[str, int, list[int], str]], shuffle_seed: int
) -> None:
    results = []
    for minute, (order, roles, goals, kind) in enumerate(matches):
        results.append(
            match(
                f"m{minute}",
                order[:roles],
                goals[:roles],
                minute,
                aborted_by_server=kind == "aborted",
                forfeits=[i == 0 for i in range(roles)] if kind == "forfeit" else [],
            )
        )
    stored = RatingBook()
    for result in results:  # as a service does: load the stored book, update, store it
        stored = update_ratings(RatingBook.model_validate_json(stored.model_dump_json()), result)
        stored = RatingBook.model_validate_json(stored.model_dump_json())
    archive = list(results)
    random.Random(shuffle_seed).shuffle(archive)  # the archive comes back in any order
    assert recompute_ratings(archive) == stored


def test_figures_per_game_and_role() -> None:
    results = [  # the match the server aborted comes first: it is passed over, not the end
        match("m3", "ab", [0, 100], 3, roles=["x", "o"], aborted_by_server=True),
        match(
            "m1",
            "ab",
            [100, 0],
            1,
            roles=["x", "o"],
            steps=4,
            errors=[{"TO": 1}, {}],
            response_times_ms=[[10, 20], [5]],
        ),
        match(
            "m2",
            "ba",
            [50, 50],
            2,
            roles=["x", "o"],
            steps=6,
            errors=[{}, {"IL": 3}],
            response_times_ms=[[1], [30, 40]],
        ),
    ]
    figures = {(f.player, f.role): f for f in player_figures(results)}
    a_all, a_x, a_o = figures["a", None], figures["a", "x"], figures["a", "o"]
    assert (a_all.matches, a_all.average_goal, a_all.win_rate) == (2, 75.0, 0.75)
    assert (a_x.matches, a_x.average_goal, a_x.win_rate) == (1, 100.0, 1.0)
    assert a_x.error_rates == {"TO": 0.25, "CE": 0.0, "IL": 0.0}
    assert a_o.error_rates == {"TO": 0.0, "CE": 0.0, "IL": 0.5}
    assert a_all.error_rates == {"TO": 0.1, "CE": 0.0, "IL": 0.3}
    assert a_all.response_ms == {"p50": 20.0, "p90": 40.0, "p99": 40.0}  # of 10, 20, 30, 40
    assert figures["b", None].win_rate == 0.25
