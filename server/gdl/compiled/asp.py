"""Translate GDL rules into an ASP program that clingo can ground.

Names are encoded so that nothing of GDL's spelling is lost: every GDL constant
becomes an ASP string (``xPlayer`` -> ``"xPlayer"``, ``007`` -> ``"007"``), every
compound term a tuple (``(cell 1 b)`` -> ``("cell","1","b")``, the zero-argument
compound ``(p)`` -> ``("p",)``), and every relation a generated lower-case predicate
name, so the proposition ``p`` and the relation ``(p)`` stay different.

The state-dependent relations are left open with choice rules: ``true`` ranges over
``init`` and every derivable ``next``, ``does`` over every derivable ``legal``. Grounding
the result instantiates every rule over all states the rules can possibly reach.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable

import clingo

from ..parser import Rule
from ..terms import RawTerm
from .errors import CompileError

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

OPEN_INPUTS = """\
{ t(X) } :- i(X).
{ t(X) } :- n(X).
{ d(R, M) } :- l(R, M).
"""

MAX_DISJUNCTS = 4096
"""The largest number of rules one GDL rule with ``or`` may expand into."""

RelationKey = tuple[str, int, bool]
"""A relation: name, number of arguments, and whether it is written as a compound."""


def relation_key(sentence: RawTerm) -> RelationKey:
    """The relation a sentence belongs to; ``p`` and ``(p)`` are different relations."""
    if isinstance(sentence, str):
        return (sentence, 0, False)
    return (sentence[0], len(sentence) - 1, True)


def encode_constant(name: str) -> str:
    """A GDL constant as an ASP string literal."""
    escaped = name.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'


_ASP_TOKEN = re.compile(r'"((?:[^"\\]|\\.)*)"|([(),])')
_UNESCAPE = re.compile(r"\\(.)")


def decode_arguments(text: str) -> tuple[RawTerm, ...]:
    """The GDL terms encoded in the argument list of a printed ground atom.

    ``t(("cell","1","b"))`` gives ``(("cell", "1", "b"),)``; reading the printed form
    is much faster than walking clingo's symbol objects one call at a time.
    """
    start = text.find("(")
    if start < 0:
        return ()
    stack: list[list[RawTerm]] = []
    current: list[RawTerm] = []
    for match in _ASP_TOKEN.finditer(text, start + 1):
        string, mark = match.groups()
        if string is not None:
            if "\\" in string:
                string = _UNESCAPE.sub(lambda m: "\n" if m.group(1) == "n" else m.group(1), string)
            current.append(string)
        elif mark == "(":
            stack.append(current)
            current = []
        elif mark == ")":
            if not stack:
                return tuple(current)
            inner = tuple(current)
            current = stack.pop()
            current.append(inner)
    raise CompileError(f"unexpected ground atom {text}")


def decode_symbol(symbol: clingo.Symbol) -> RawTerm:
    """Turn a grounded ASP term back into the GDL term it encodes."""
    if symbol.type == clingo.SymbolType.String:
        return symbol.string
    if symbol.type == clingo.SymbolType.Function and symbol.name == "":
        functor, *args = symbol.arguments
        return (functor.string, *(decode_symbol(arg) for arg in args))
    raise CompileError(f"unexpected ground term {symbol}")


class Translator:
    """Turns GDL rules into ASP text, remembering the predicate name of each relation."""

    def __init__(self) -> None:
        self.predicates: dict[RelationKey, str] = {}
        self.keys_by_predicate: dict[str, RelationKey] = {}
        for (name, arity), predicate in KEYWORD_PREDICATES.items():
            key = (name, arity, arity > 0)
            self.predicates[key] = predicate
            self.keys_by_predicate[predicate] = key

    def predicate(self, key: RelationKey) -> str:
        found = self.predicates.get(key)
        if found is None:
            found = f"r{len(self.predicates)}"
            self.predicates[key] = found
            self.keys_by_predicate[found] = key
        return found

    def program(self, rules: Iterable[Rule]) -> str:
        """The whole ASP program: the open inputs, then one or more rules per GDL rule.

        ``source_of[n]`` is the GDL rule that line ``n`` (1-based) comes from.
        """
        lines = OPEN_INPUTS.rstrip("\n").split("\n")
        self.source_of: dict[int, Rule] = {}
        for rule in rules:
            if relation_key(rule.head)[0] in ("base", "input"):
                continue
            for line in self.rule(rule):
                lines.append(line)
                self.source_of[len(lines)] = rule
        return "\n".join(lines)

    def rule(self, rule: Rule) -> list[str]:
        names: dict[str, str] = {}
        head = self.atom(rule.head, names)
        alternatives = [_disjuncts(literal) for literal in rule.body]
        count = 1
        for options in alternatives:
            count *= len(options)
        if count > MAX_DISJUNCTS:
            raise CompileError(f"the rule at {rule.where} expands into {count} rules ('or')")
        out = []
        for body in itertools.product(*alternatives):
            literals = [self.literal(literal, names) for literal in body]
            out.append(f"{head} :- {', '.join(literals)}." if literals else f"{head}.")
        return out

    def literal(self, literal: RawTerm, names: dict[str, str]) -> str:
        if isinstance(literal, tuple) and literal[0] == "not" and len(literal) == 2:
            inner = literal[1]
            if isinstance(inner, tuple) and inner[0] == "distinct" and len(inner) == 3:
                return f"{self.term(inner[1], names)} = {self.term(inner[2], names)}"
            return "not " + self.atom(inner, names)
        if isinstance(literal, tuple) and literal[0] == "distinct" and len(literal) == 3:
            return f"{self.term(literal[1], names)} != {self.term(literal[2], names)}"
        return self.atom(literal, names)

    def atom(self, sentence: RawTerm, names: dict[str, str]) -> str:
        predicate = self.predicate(relation_key(sentence))
        if isinstance(sentence, str) or len(sentence) == 1:
            return predicate
        return f"{predicate}({', '.join(self.term(arg, names) for arg in sentence[1:])})"

    def term(self, term: RawTerm, names: dict[str, str]) -> str:
        if isinstance(term, str):
            if term.startswith("?"):
                found = names.get(term)
                if found is None:
                    found = names[term] = f"V{len(names)}"
                return found
            return encode_constant(term)
        parts = [encode_constant(term[0]), *(self.term(arg, names) for arg in term[1:])]
        if len(parts) == 1:
            return f"({parts[0]},)"
        return f"({','.join(parts)})"


def _disjuncts(literal: RawTerm) -> list[RawTerm]:
    """The alternatives of a body literal: several for ``or`` (flattened), else one."""
    if isinstance(literal, tuple) and literal[0] == "or":
        out: list[RawTerm] = []
        for option in literal[1:]:
            out.extend(_disjuncts(option))
        return out
    return [literal]
