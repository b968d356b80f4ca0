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

import functools
from collections.abc import Callable, Iterable, Iterator
from itertools import repeat
from typing import TypeAlias

RawTerm: TypeAlias = "str | tuple"
"""A term as the reasoner stores it: ``str`` or nested ``tuple``."""


MAX_TERM_DEPTH = 400
"""The deepest nesting of parentheses the server reads or keeps, wherever a term enters.

Rule files, players' replies and messages, match logs read back (a state's fluents sit
one level inside the state's list) and the states the rules derive all stay within it
(see :func:`state_fits`).  The printers and readers here work at any depth without
recursion, but Python compares nested tuples recursively in C under the interpreter's
recursion limit (1,000 frames by default), so deeper terms could fail to compare;
400 leaves room for the caller's own frames.
"""


def _print(term: RawTerm, *, ggp: bool, limit: int | None = None) -> tuple[str, bool]:
    """Print without recursion; stop once more than ``limit`` characters are out.

    Returns the text (cut at ``limit`` when given) and whether it is complete.
    """
    if isinstance(term, str):
        text = str.__str__(term)
        if limit is not None and len(text) > limit:
            return text[:limit], False
        return text, True
    out: list[str] = []
    size = 0
    stack: list[RawTerm] = [term]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            piece = str.__str__(item)
        elif not any(map(isinstance, item, repeat(tuple))):  # flat: the common case, at once
            piece = ("( " + " ".join(item) + " )") if ggp else ("(" + " ".join(item) + ")")
        else:
            piece = "( " if ggp else "("
            stack.append(")")
            for index, part in enumerate(reversed(item)):
                if ggp:
                    stack.append(" ")
                elif index:
                    stack.append(" ")
                stack.append(part)
        out.append(piece)
        size += len(piece)
        if limit is not None and size > limit:
            return "".join(out)[:limit], False
    return "".join(out), True


def to_kif(term: RawTerm) -> str:
    """Print a term as compact KIF: ``(mark 1 2)``."""
    return _print(term, ggp=False)[0]


def to_ggp(term: RawTerm) -> str:
    """Print a term exactly as GGP-Base does: ``( mark 1 2 )``.

    This is the form used on the wire and in ggp.org match logs.
    """
    return _print(term, ggp=True)[0]


def to_ggp_prefix(term: RawTerm, limit: int) -> tuple[str, bool]:
    """At most ``limit`` characters of :func:`to_ggp`, and whether that is all of it.

    The work is bounded by ``limit``, not by the size of the term.
    """
    return _print(term, ggp=True, limit=limit)


def term_depth(term: RawTerm) -> int:
    """How deeply parentheses nest in the printed term: 0 for a constant, 1 for ``(f a)``."""
    deepest = 0
    stack: list[tuple[RawTerm, int]] = [(term, 0)]
    while stack:
        current, depth = stack.pop()
        if isinstance(current, str):
            continue
        depth += 1
        deepest = max(deepest, depth)
        stack.extend((part, depth) for part in current if not isinstance(part, str))
    return deepest


def state_fits(fluents: Iterable[RawTerm]) -> bool:
    """True when a state, printed as one list of fluents, nests within :data:`MAX_TERM_DEPTH`."""
    return all(fluent_info(fluent)[2] < MAX_TERM_DEPTH for fluent in fluents)


FLUENT_CACHE_SIZE = 50_000
"""How many fluents :func:`fluent_info` remembers before it starts afresh."""

_fluent_infos: dict[RawTerm, tuple[tuple, str, int]] = {}


def fluent_info(term: RawTerm) -> tuple[tuple, str, int]:
    """A fluent's sort key, GGP-Base print form and depth, remembered.

    A match prints a state every step, and consecutive states share most of their
    fluents (the engines even hand out the same objects), so this turns printing a
    state into lookups.  Looking up hashes the term, which a :class:`State` has already
    done when it was built.
    """
    info = _fluent_infos.get(term)
    if info is None:
        if len(_fluent_infos) >= FLUENT_CACHE_SIZE:
            _fluent_infos.clear()
        info = _fluent_infos[term] = (sort_key(term), to_ggp(term), term_depth(term))
    return info


def map_constants(term: RawTerm, rename: Callable[[str], str]) -> RawTerm:
    """The term with every constant (and variable) passed through ``rename``; no recursion."""
    if isinstance(term, str):
        return rename(term)
    built: list[list[RawTerm]] = [[]]
    pending: list[Iterator[RawTerm]] = [iter(term)]
    while pending:
        for part in pending[-1]:
            if isinstance(part, str):
                built[-1].append(rename(part))
            else:
                built.append([])
                pending.append(iter(part))
                break
        else:
            pending.pop()
            done = tuple(built.pop())
            if not built:
                return done
            built[-1].append(done)
    raise AssertionError("unreachable")


def terms_equal(first: RawTerm, second: RawTerm) -> bool:
    """Structural equality without recursion, for terms of any depth."""
    stack: list[tuple[RawTerm, RawTerm]] = [(first, second)]
    while stack:
        left, right = stack.pop()
        if left is right:
            continue
        if isinstance(left, str) or isinstance(right, str):
            if not (isinstance(left, str) and isinstance(right, str)) or left != right:
                return False
            continue
        if len(left) != len(right):
            return False
        stack.extend(zip(left, right, strict=True))
    return True


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
    stack = [term]
    while stack:
        current = stack.pop()
        if isinstance(current, str):
            if current.startswith("?"):
                return False
        else:
            stack.extend(current[1:])
    return True


@functools.lru_cache(maxsize=65_536)
def _constant_key(term: str) -> tuple:
    if term.isascii() and term.isdigit():
        return (0, int(term), term)
    return (1, 0, term)


def sort_key(term: RawTerm) -> tuple:
    """A total, deterministic order on terms: numbers numerically, then names.

    Compounds come after constants, ordered by arity, functor, then arguments.  The key
    is flat (one entry per symbol, in print order), so building and comparing it never
    recurses; each entry says how many arguments follow, so comparing two keys orders
    terms exactly as comparing them argument by argument would.
    """
    if isinstance(term, str):
        return (_constant_key(term),)
    if not any(map(isinstance, term, repeat(tuple))):  # flat: the common case
        return ((2, len(term), term[0]), *map(_constant_key, term[1:]))
    key: list[tuple] = []
    stack: list[RawTerm] = [term]
    while stack:
        current = stack.pop()
        if isinstance(current, str):
            key.append(_constant_key(current))
        else:
            key.append((2, len(current), current[0]))
            stack.extend(reversed(current[1:]))
    return tuple(key)


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
    return map_constants(term, str.__str__)
