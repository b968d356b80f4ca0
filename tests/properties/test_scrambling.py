"""Scrambling renames symbols one to one: unscrambling undoes it, for terms and rules."""

from __future__ import annotations

from gdl_strategies import MODEST
from hypothesis import given, settings
from hypothesis import strategies as st

from server.games import game_text, list_games
from server.gdl.parser import parse_gdl
from server.gdl.terms import RawTerm
from server.protocol import Scrambler

GAMES = {info.name: parse_gdl(game_text(info.name)) for info in list_games()}


def _symbols(term: RawTerm) -> list[str]:
    return [term] if isinstance(term, str) else [s for part in term for s in _symbols(part)]


def _game_terms(name: str) -> st.SearchStrategy[RawTerm]:
    """Terms made of the game's own symbols, in any shape."""
    symbols = sorted({s for rule in GAMES[name] for s in _symbols(rule.head)})
    atoms = st.sampled_from(symbols)
    return st.recursive(
        atoms,
        lambda inner: st.builds(
            lambda f, args: (f, *args), atoms, st.lists(inner, min_size=1, max_size=3)
        ),
        max_leaves=8,
    )


@st.composite
def game_and_term(draw: st.DrawFn) -> tuple[str, int, RawTerm]:
    name = draw(st.sampled_from(sorted(GAMES)))
    return name, draw(st.integers(0, 10_000)), draw(_game_terms(name))


@MODEST
@given(game_and_term())
def test_unscrambling_a_scrambled_term_gives_it_back(case: tuple[str, int, RawTerm]) -> None:
    name, seed, term = case
    scrambler = Scrambler(GAMES[name], seed)
    assert scrambler.unscramble_term(scrambler.scramble_term(term)) == term


@MODEST
@given(st.sampled_from(sorted(GAMES)), st.integers(0, 10_000))
def test_the_renaming_is_one_to_one_and_hides_every_renamed_name(name: str, seed: int) -> None:
    mapping = Scrambler(GAMES[name], seed).mapping
    assert len(set(mapping.values())) == len(mapping)
    assert not set(mapping.values()) & set(mapping)


@settings(MODEST, max_examples=20)
@given(st.sampled_from(sorted(GAMES)), st.integers(0, 10_000))
def test_unscrambling_scrambled_rules_gives_the_game_back(name: str, seed: int) -> None:
    scrambler = Scrambler(GAMES[name], seed)
    scrambled = scrambler.scramble_rules(GAMES[name])
    back = [
        (
            scrambler.unscramble_term(rule.head),
            tuple(scrambler.unscramble_term(b) for b in rule.body),
        )
        for rule in scrambled
    ]
    assert back == [(rule.head, tuple(rule.body)) for rule in GAMES[name]]
