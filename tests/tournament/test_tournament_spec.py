"""Tournament specs: the script-stable shape, and errors that name their field."""

import pytest

from server.tournament import TournamentSpecError, check_roles, parse_spec

BASE = {
    "name": "autumn cup",
    "game": "ticTacToe",
    "format": "round_robin",
    "players": ["alice", "bob", "carol"],
    "matches_per_seating": 2,
    "startclock": 30,
    "playclock": 10,
}


def test_the_script_stable_shape_is_accepted_with_defaults_for_the_rest() -> None:
    spec = parse_spec(BASE)
    assert (spec.format, spec.players, spec.matches_per_seating) == (
        "round_robin",
        ["alice", "bob", "carol"],
        2,
    )
    assert (spec.failure_rule, spec.points, spec.seed, spec.max_concurrent) == (
        "forfeit",
        "outcome",
        0,
        None,
    )
    swiss = parse_spec({**BASE, "format": "swiss", "rounds": 3})
    assert swiss.rounds == 3


@pytest.mark.parametrize(
    ("change", "field", "message"),
    [
        (
            {"format": "knockout"},
            "format",
            "Input should be 'round_robin', 'swiss', 'single_elimination' or 'ladder'",
        ),
        (
            {"players": ["alice"]},
            "players",
            "List should have at least 2 items after validation, not 1",
        ),
        ({"players": ["alice", "bob", "alice"]}, "players", "duplicate names: alice"),
        ({"players": ["alice", " "]}, "players", "names must not be empty"),
        (
            {"matches_per_seating": 0},
            "matches_per_seating",
            "Input should be greater than or equal to 1",
        ),
        (
            {"playclock": "soon"},
            "playclock",
            "Input should be a valid integer, unable to parse string as an integer",
        ),
        ({"format": "swiss"}, "rounds", "a Swiss tournament needs a number of rounds"),
        ({"rounds": 3}, "rounds", "only a Swiss tournament has a number of rounds"),
        ({"games": ["chess"]}, "games", "only a ladder plays more than one game"),
        ({"best_of": 3}, "best_of", "only single elimination plays series"),
        ({"failure_rule": "ignore"}, "failure_rule", "Input should be 'forfeit' or 'pause'"),
        ({"colour": "red"}, "colour", "Extra inputs are not permitted"),
        (
            {"format": "swiss", "rounds": 2, "roles": 3},
            "format",
            "swiss needs a two-role game; 'ticTacToe' has 3 roles",
        ),
        ({"roles": 4}, "players", "'ticTacToe' has 4 roles but only 3 players"),
    ],
)
def test_a_bad_spec_is_refused_naming_the_field(
    change: dict[str, object], field: str, message: str
) -> None:
    with pytest.raises(TournamentSpecError) as caught:
        parse_spec({**BASE, **change})
    assert caught.value.problems == [(field, message)]
    assert str(caught.value) == f"{field}: {message}"


def test_every_problem_is_reported_at_once() -> None:
    with pytest.raises(TournamentSpecError) as caught:
        parse_spec({**BASE, "startclock": 0, "playclock": 0, "name": ""})
    assert [field for field, _ in caught.value.problems] == ["name", "startclock", "playclock"]


@pytest.mark.parametrize(
    ("format", "roles", "refused"),
    [
        ("round_robin", 3, False),
        ("ladder", 3, False),
        ("swiss", 3, True),
        ("single_elimination", 3, True),
        ("single_elimination", 2, False),
    ],
)
def test_only_round_robin_and_the_ladder_take_three_role_games(
    format: str, roles: int, refused: bool
) -> None:
    extra = {"rounds": 2} if format == "swiss" else {}
    spec = parse_spec({**BASE, "format": format, "matches_per_seating": 1, **extra})
    if refused:
        with pytest.raises(TournamentSpecError, match="needs a two-role game"):
            check_roles(spec, {"ticTacToe": roles})
    else:
        check_roles(spec, {"ticTacToe": roles})
