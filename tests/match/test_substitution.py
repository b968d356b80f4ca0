"""Substitute moves: the first legal move, or a seeded random one that a rerun repeats."""

from __future__ import annotations

import random

from server.match.substitution import MoveChooser
from server.records import SubstitutePolicy

LEGAL = ["noop", ("push", "1"), ("push", "2"), ("push", "3")]


def test_the_first_policy_always_takes_the_first_legal_move() -> None:
    chooser = MoveChooser(SubstitutePolicy.FIRST, seed=5)
    assert [chooser.substitute(LEGAL) for _ in range(10)] == ["noop"] * 10
    assert chooser.substitute(LEGAL[2:]) == ("push", "2")


def test_the_random_policy_draws_from_the_seeded_generator() -> None:
    chooser = MoveChooser(SubstitutePolicy.RANDOM, seed=5)
    expected = random.Random(5)
    draws = [chooser.substitute(LEGAL) for _ in range(20)]
    assert draws == [LEGAL[expected.randrange(len(LEGAL))] for _ in range(20)]
    assert len(set(draws)) > 1


def test_the_same_seed_and_faults_choose_the_same_moves() -> None:
    first, second = (MoveChooser(SubstitutePolicy.RANDOM, seed=42) for _ in range(2))
    assert [first.substitute(LEGAL) for _ in range(30)] == [
        second.substitute(LEGAL) for _ in range(30)
    ]


def test_random_moves_for_the_random_role_share_the_generator_with_substitutes() -> None:
    chooser = MoveChooser(SubstitutePolicy.FIRST, seed=9)
    expected = random.Random(9)
    assert chooser.random_move(LEGAL) == LEGAL[expected.randrange(4)]
    assert chooser.substitute(LEGAL) == "noop"
    assert chooser.random_move(LEGAL) == LEGAL[expected.randrange(4)]


def test_the_chooser_keeps_its_policy_and_seed_for_the_log() -> None:
    chooser = MoveChooser(SubstitutePolicy.FORFEIT, seed=123)
    assert (chooser.policy, chooser.seed) == (SubstitutePolicy.FORFEIT, 123)
