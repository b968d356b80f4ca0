"""Printing and reading are inverse: every term and every state reads back as printed."""

from __future__ import annotations

from gdl_strategies import MODEST, ground_terms, terms
from hypothesis import given
from hypothesis import strategies as st

from server.gdl.parser import parse_gdl, parse_term
from server.gdl.state import State
from server.gdl.terms import RawTerm, to_ggp, to_kif
from server.replay.states import parse_state_text


@MODEST
@given(terms)
def test_a_term_printed_as_kif_reads_back_the_same(term: RawTerm) -> None:
    assert parse_term(to_kif(term)) == term


@MODEST
@given(terms)
def test_a_term_printed_as_ggp_base_prints_it_reads_back_the_same(term: RawTerm) -> None:
    assert parse_term(to_ggp(term)) == term


@MODEST
@given(ground_terms)
def test_a_ground_term_is_a_fact_of_a_game_text(term: RawTerm) -> None:
    fact = term if isinstance(term, tuple) else (term,)
    (rule,) = parse_gdl(to_kif(fact))
    assert rule.head == fact and rule.body == ()


@MODEST
@given(st.frozensets(ground_terms, max_size=8))
def test_a_state_printed_for_a_log_reads_back_the_same(facts: frozenset[RawTerm]) -> None:
    state = State(facts)
    assert parse_state_text(state.to_ggp()) == facts
    assert parse_state_text(state.to_kif()) == facts


@MODEST
@given(st.lists(ground_terms, max_size=8))
def test_a_state_prints_the_same_whatever_the_order_of_its_facts(
    facts: list[RawTerm],
) -> None:
    assert State(facts).to_ggp() == State(reversed(facts)).to_ggp()
