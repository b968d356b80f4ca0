"""Relations and variables of GDL sentences, as the translation to ASP sees them."""

from __future__ import annotations

from ..terms import RawTerm

KEYWORD_PREDICATES = {
    ("true", 1): "t",
    ("does", 2): "d",
    ("next", 1): "n",
    ("legal", 2): "l",
    ("goal", 2): "g",
    ("terminal", 0): "z",
    ("init", 1): "i",
    ("role", 1): "o",
}
"""The GDL relations the engine reads back, with their fixed ASP predicate names."""

RelationKey = tuple[str, int, bool]
"""A relation: name, number of arguments, and whether it is written as a compound."""


def relation_key(sentence: RawTerm) -> RelationKey:
    """The relation a sentence belongs to; ``p`` and ``(p)`` are different relations."""
    if isinstance(sentence, str):
        return (sentence, 0, False)
    return (sentence[0], len(sentence) - 1, True)


def term_variables(term: RawTerm) -> list[str]:
    """Every variable occurrence in ``term``, in order."""
    found: list[str] = []
    _collect(term, found)
    return found


def _collect(term: RawTerm, found: list[str]) -> None:
    if isinstance(term, str):
        if term.startswith("?"):
            found.append(term)
        return
    for part in term:
        _collect(part, found)


__all__ = ["KEYWORD_PREDICATES", "RelationKey", "relation_key", "term_variables"]
