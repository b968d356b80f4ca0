"""Relations and variables of GDL sentences, as the translation to ASP sees them."""

from __future__ import annotations

from ..terms import RawTerm

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


__all__ = ["RelationKey", "relation_key", "term_variables"]
