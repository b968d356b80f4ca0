"""GDL terms: one representation, shared by the parser, the reasoner and the wire.

Terms are plain immutable Python values, chosen so that hashing and comparison
run at C speed inside the reasoner:

- a constant is a ``str`` (``"xplayer"``, ``"1"``), kept exactly as written;
- a variable is a ``str`` that starts with ``?`` (``"?x"``);
- a compound term is a ``tuple`` ``(functor, arg1, ..., argN)``; ``("f",)`` is the
  zero-argument compound ``(f)``, which differs from the constant ``f``.

The public API hands out :class:`Constant` and :class:`Compound`, thin subclasses of
``str`` and ``tuple`` that compare and hash exactly like the plain values but print
as KIF: ``str(Compound(("mark", "1", "2")))`` is ``"(mark 1 2)"``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeAlias

RawTerm: TypeAlias = "str | tuple"
"""A term as the reasoner stores it: ``str`` or nested ``tuple``."""


def to_kif(term: RawTerm) -> str:
    """Print a term as compact KIF: ``(mark 1 2)``."""
    if isinstance(term, str):
        return str.__str__(term)
    return "(" + " ".join(to_kif(part) for part in term) + ")"


def to_ggp(term: RawTerm) -> str:
    """Print a term exactly as GGP-Base does: ``( mark 1 2 )``.

    This is the form used on the wire and in ggp.org match logs.
    """
    if isinstance(term, str):
        return str.__str__(term)
    return "( " + "".join(to_ggp(part) + " " for part in term) + ")"


def variables_of(term: RawTerm) -> set[str]:
    """All variables that occur in a term."""
    found: set[str] = set()
    stack = [term]
    while stack:
        current = stack.pop()
        if isinstance(current, str):
            if current.startswith("?"):
                found.add(current)
        else:
            stack.extend(current[1:])
    return found


def is_ground(term: RawTerm) -> bool:
    """True when the term has no variables."""
    if isinstance(term, str):
        return not term.startswith("?")
    return all(is_ground(part) for part in term[1:])


def sort_key(term: RawTerm) -> tuple:
    """A total, deterministic order on terms: numbers numerically, then names."""
    if isinstance(term, str):
        if term.isascii() and term.isdigit():
            return (0, int(term), term)
        return (1, 0, term)
    return (2, len(term), term[0], tuple(sort_key(arg) for arg in term[1:]))


class Constant(str):
    """A GDL constant, e.g. ``xplayer`` or ``100``; equal to the plain ``str``."""

    __slots__ = ()

    @property
    def name(self) -> str:
        return str.__str__(self)

    @property
    def args(self) -> tuple[Term, ...]:
        return ()

    def __repr__(self) -> str:
        return f"Constant({str.__str__(self)!r})"


class Compound(tuple):
    """A GDL compound term ``(functor arg...)``; equal to the plain ``tuple``."""

    __slots__ = ()

    @property
    def name(self) -> str:
        """The functor, e.g. ``mark`` in ``(mark 1 2)``."""
        return tuple.__getitem__(self, 0)

    @property
    def args(self) -> tuple[Term, ...]:
        return tuple(wrap(arg) for arg in tuple.__getitem__(self, slice(1, None)))

    def __str__(self) -> str:
        return to_kif(self)

    def __repr__(self) -> str:
        return f"Compound({to_kif(self)!r})"


Term: TypeAlias = "Constant | Compound"
"""A term as the public API returns it."""


def wrap(term: RawTerm) -> Term:
    """Turn a raw term into a public :class:`Constant` or :class:`Compound`."""
    if isinstance(term, (Constant, Compound)):
        return term
    if isinstance(term, str):
        return Constant(term)
    return Compound(term)


def wrap_all(terms: Iterable[RawTerm]) -> list[Term]:
    """Wrap every term of an iterable."""
    return [wrap(term) for term in terms]


def unwrap(term: RawTerm) -> RawTerm:
    """Turn a public term back into plain ``str``/``tuple`` values."""
    if isinstance(term, str):
        return str.__str__(term)
    return tuple(unwrap(part) for part in term)
