"""Splitting masks into their bits, as planning and code generation do on every body."""

from __future__ import annotations

import random

import pytest

from server.gdl.compiled.plan import FEW_BITS, bit_masks, bit_positions


def positions_one_by_one(mask: int) -> list[int]:
    """The plain way: the lowest bit, then the rest."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def test_no_bits_and_one_bit() -> None:
    assert bit_positions(0) == []
    assert bit_masks(0) == []
    assert bit_positions(1) == [0]
    assert bit_positions(1 << 5000) == [5000]
    assert bit_masks(1 << 5000) == [1 << 5000]


def test_a_dense_mask_of_moves_is_read_through_its_text() -> None:
    """Brawl's 'every move but these' masks: thousands of bits above the fluents."""
    base, moves = 481, 2773
    every_move = ((1 << moves) - 1) << base
    but_two = every_move & ~(1 << (base + 7)) & ~(1 << (base + 2000))
    found = bit_positions(but_two)
    assert len(found) == moves - 2 > FEW_BITS
    assert found[0] == base and found[-1] == base + moves - 1
    assert base + 7 not in found and base + 2000 not in found
    assert found == sorted(found)
    assert bit_positions(but_two >> base) == [p - base for p in found]


@pytest.mark.parametrize("length", [1, 16, 17, 64, 300, 3_000, 9_000])
@pytest.mark.parametrize("density", [0.001, 0.01, 0.3, 0.9])
def test_both_ways_agree_with_the_plain_way(length: int, density: float) -> None:
    rng = random.Random(length * 1000 + int(density * 1000))
    for _ in range(20):
        mask = sum(1 << i for i in range(length) if rng.random() < density)
        expected = positions_one_by_one(mask)
        assert bit_positions(mask) == expected
        assert bit_masks(mask) == [1 << i for i in expected]
