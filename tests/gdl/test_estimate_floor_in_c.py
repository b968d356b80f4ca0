"""The compile estimate's floor counted in C (``_estimate_floor.c``) gives the counts of the
Python ``EstimateFloor``: rule by rule on hand-made batches, on random batches whose
open inputs grow between them, and on whole ground programs, read as the grounder reads
them."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from server.gdl.compiled import grounder
from server.gdl.compiled.estimate import EstimateFloor
from server.gdl.compiled.grounder import ground
from server.gdl.compiled.rule_observer import RULE_BUFFER, floor_counter
from server.gdl.parser import parse_gdl

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT.parent / "shared" / "conformance" / "games"

pytestmark = pytest.mark.skipif(
    RULE_BUFFER is None and not os.environ.get("CI"), reason="no C rule buffer built"
)
"""CI installs with a C compiler, so there the C count must be there."""

Rules = list[tuple[int, tuple[int, ...]]]


def both_counts(batches: list[tuple[Rules, set[int]]]) -> tuple[tuple[int, int], tuple[int, int]]:
    """(bodies, literals) of the Python floor and of the C one, over the same batches, each
    with the open inputs known when it is counted (``None`` rules: only noted)."""
    python_choices: set[int] = set()
    c_choices: set[int] = set()
    in_python = EstimateFloor(python_choices)
    in_c = EstimateFloor(c_choices, floor_counter())
    assert in_c.counter is not None and in_python.counter is None
    for rules, choices in batches:
        python_choices |= choices
        c_choices |= choices
        in_python.add(rules)
        in_c.add(rules)
    return (in_python.bodies, in_python.literals), (in_c.bodies, in_c.literals)


def test_each_kind_of_body_is_counted_as_in_python() -> None:
    open_inputs = {1, 2}
    rules: Rules = [
        (10, (1, 2)),  # on open inputs only: the key is the head alone
        (10, (2, 1)),  # the same body in another order: merged
        (11, ()),  # no body
        (12, (10,)),  # one derived literal
        (12, (10,)),  # repeated
        (13, (99,)),  # one positive literal nothing derives: left out
        (14, (-99,)),  # one negative literal nothing derives: always true, no literal
        (15, (1, 10, 12)),  # open input and derived literals
        (15, (2, 12, 10)),  # differs only in the open input and the order: merged
        (16, (1, 10, 99)),  # a positive literal nothing derives: left out
        (17, (1, 10, -99)),  # a negative one nothing derives: dropped, two literals left
        (18, (10, -99, -98)),  # down to one literal
        (19, (-10, -12, 1)),  # negative derived literals
        (20, (1,)),  # one literal on an open input
        (21, (-1, 2)),  # a negated open input nothing derives: dropped
    ]
    python, in_c = both_counts([(rules, open_inputs)])
    assert in_c == python
    assert python == (10, 14)


def test_the_heads_of_a_batch_count_for_the_bodies_before_them() -> None:
    # the body of 30 reads 31, whose rule comes later in the same batch
    python, in_c = both_counts([([(30, (1, 31, 32)), (31, ()), (32, ())], {1})])
    assert in_c == python == (3, 3)


def test_noted_batches_derive_without_being_counted() -> None:
    in_c = EstimateFloor(set(), floor_counter())
    in_c.note([(40, ()), (41, ())])
    in_c.add([(42, (40, 41))])
    assert (in_c.bodies, in_c.literals) == (1, 2)
    assert in_c.counter.sizes == (6, 1)  # 40, 41, 42 and their negations; one body key


@pytest.mark.parametrize("seed", range(20))
def test_random_batches_are_counted_as_in_python(seed: int) -> None:
    chooser = random.Random(seed)
    atoms = list(range(1, 200))
    batches: list[tuple[Rules, set[int]]] = []
    for _ in range(8):
        rules: Rules = []
        for _ in range(chooser.randrange(50, 400)):
            size = chooser.choice([0, 1, 1, 2, 2, 3, 4, 6, 9, 40])
            body = tuple(chooser.choice(atoms) * chooser.choice([1, 1, -1]) for _ in range(size))
            rules.append((chooser.choice(atoms[:120]), body))
        opened = set(chooser.sample(atoms[120:], 4))
        batches.append((rules, opened))
    python, in_c = both_counts(batches)
    assert in_c == python
    assert python[0] > 100  # most bodies counted, not all left out


def test_a_malformed_rule_is_a_type_error_not_a_crash() -> None:
    counter = floor_counter()
    with pytest.raises(TypeError, match="a rule is a"):
        counter.add([(1, [2, 3])], set())
    with pytest.raises(TypeError, match="a literal is an int, not str"):
        counter.add([("head", (2,))], set())
    with pytest.raises(TypeError, match="not bool"):
        counter.add([(1, (True,))], set())
    with pytest.raises(TypeError):
        counter.add([(1, (2,))], [3])  # the open inputs must be a set
    with pytest.raises(OverflowError):
        counter.add([(1, (2**80,))], set())


GAMES = [
    ROOT / "server" / "games" / "nineBoardTicTacToe.kif",
    ROOT / "server" / "games" / "ticTacHeaven.kif",
    CORPUS / "brawl.kif",
    CORPUS / "kalaha6x2x4.kif",
]


@pytest.mark.parametrize("path", GAMES, ids=lambda path: path.stem)
def test_grounding_a_game_gives_the_same_floor_either_way(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not path.exists():
        if os.environ.get("GGP_REQUIRE_SHARED"):
            pytest.fail(f"{path} is missing")
        pytest.skip("the shared corpus is not beside the project")
    rules = parse_gdl(path.read_text())
    in_c = ground(rules, max_rules=10**6, deadline=1e9, work_budget=1e18)
    asked: list[bool] = []
    monkeypatch.setattr(grounder, "floor_counter", lambda: asked.append(True))  # None: Python
    in_python = ground(rules, max_rules=10**6, deadline=1e9, work_budget=1e18)
    assert asked == [True]
    assert in_c.rules == in_python.rules
    assert in_c.estimate_floor == in_python.estimate_floor > 0
