"""Terms of any depth print, read, order and compare without recursion."""

from __future__ import annotations

import random

import pytest

from server.gdl import GdlSyntaxError
from server.gdl.parser import MAX_NESTING, node_to_term, parse_term, read_nodes
from server.gdl.terms import (
    MAX_TERM_DEPTH,
    RawTerm,
    map_constants,
    sort_key,
    state_fits,
    term_depth,
    terms_equal,
    to_ggp,
    to_ggp_prefix,
    to_kif,
    unwrap,
)
from server.protocol import Scrambler, parse_move_reply
from server.protocol.sexpr import fold_keywords

DEEP = 100_000


def nested(depth: int, functor: str = "s", leaf: str = "zero") -> RawTerm:
    term: RawTerm = leaf
    for _ in range(depth):
        term = (functor, term)
    return term


def test_a_100000_deep_term_prints_and_reads_back_in_both_forms() -> None:
    term = nested(DEEP)
    for printed in (to_ggp(term), to_kif(term)):
        assert printed.count("(") == DEEP
        back = parse_term(printed, max_depth=None)
        assert term_depth(back) == DEEP
        assert terms_equal(back, term)
        assert to_ggp(back) == to_ggp(term)
    assert to_ggp(nested(2)) == "( s ( s zero ) )"
    assert to_kif(nested(2)) == "(s (s zero))"


def test_deep_terms_map_order_and_unwrap_without_recursion() -> None:
    term = nested(DEEP, leaf="Zero")
    folded = map_constants(term, str.lower)
    assert terms_equal(folded, nested(DEEP, leaf="zero"))
    assert terms_equal(unwrap(term), term)
    assert sort_key(nested(DEEP)) < sort_key(nested(DEEP + 1))
    assert not terms_equal(term, nested(DEEP - 1, leaf="Zero"))
    text, complete = to_ggp_prefix(term, 12)
    assert (text, complete) == ("( s ( s ( s ", False)


def test_fold_keywords_and_scrambling_take_any_depth() -> None:
    text = "(f " * DEEP + "TRUE" + ")" * DEEP
    node = fold_keywords(read_nodes(text, gdl=False, max_depth=None)[0])
    assert terms_equal(node_to_term(node), nested(DEEP, "f", "true"))
    scrambler = Scrambler([], seed=1)
    assert terms_equal(scrambler.unscramble_term(nested(DEEP)), nested(DEEP))


def test_untrusted_text_is_capped_everywhere_with_one_limit() -> None:
    assert MAX_NESTING == MAX_TERM_DEPTH
    fits = "(f " * MAX_TERM_DEPTH + "x" + ")" * MAX_TERM_DEPTH
    assert term_depth(parse_term(fits)) == MAX_TERM_DEPTH
    assert term_depth(parse_move_reply(fits)) == MAX_TERM_DEPTH
    with pytest.raises(GdlSyntaxError, match="nested deeper"):
        parse_term("(" + fits + ")")
    assert state_fits([nested(MAX_TERM_DEPTH - 1)])
    assert not state_fits([nested(MAX_TERM_DEPTH)])


def _old_sort_key(term: RawTerm) -> tuple:
    """The order terms always had, written recursively: the flat key must agree with it."""
    if isinstance(term, str):
        if term.isascii() and term.isdigit():
            return (0, int(term), term)
        return (1, 0, term)
    return (2, len(term), term[0], tuple(_old_sort_key(arg) for arg in term[1:]))


def _random_term(rng: random.Random, depth: int) -> RawTerm:
    if depth == 0 or rng.random() < 0.3:
        return rng.choice(["a", "b", "1", "2", "10", "07"])
    return (
        rng.choice(["f", "g"]),
        *(_random_term(rng, depth - 1) for _ in range(rng.randint(0, 3))),
    )


def test_the_flat_sort_key_orders_terms_as_before() -> None:
    rng = random.Random(4)
    terms = [_random_term(rng, 4) for _ in range(400)]
    assert sorted(terms, key=sort_key) == sorted(terms, key=_old_sort_key)
