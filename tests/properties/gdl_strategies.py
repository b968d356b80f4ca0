"""Hypothesis strategies for GDL terms, and the modest settings every property test uses."""

from __future__ import annotations

import string

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from server.gdl.parser import KEYWORDS
from server.gdl.terms import RawTerm

MODEST = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
"""Few examples and no per-example deadline: the suite runs on a small, busy machine."""

_NAME_CHARS = string.ascii_letters + string.digits + "_-+.*<>=!'"

names = st.text(alphabet=_NAME_CHARS, min_size=1, max_size=8).filter(
    lambda name: name.casefold() not in KEYWORDS
)
"""Constant and function names: anything GDL reads as one token, keywords excepted
(the parser folds those to lower case)."""

variables = names.map(lambda name: "?" + name)

ground_terms: st.SearchStrategy[RawTerm] = st.recursive(
    names,
    lambda inner: st.builds(
        lambda functor, args: (functor, *args), names, st.lists(inner, min_size=1, max_size=4)
    ),
    max_leaves=12,
)
"""Ground terms: a constant, or a function name applied to one or more terms."""

terms: st.SearchStrategy[RawTerm] = st.recursive(
    names | variables,
    lambda inner: st.builds(
        lambda functor, args: (functor, *args), names, st.lists(inner, min_size=1, max_size=4)
    ),
    max_leaves=12,
)
"""Terms with variables in argument positions."""
