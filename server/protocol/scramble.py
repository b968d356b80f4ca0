"""Scrambling: renaming a game's symbols on the wire.

Some players recognise games by their symbols. With scrambling on, every
constant and variable of the rules except GDL keywords and numbers is replaced
by a made-up word, role names included, the same way for the whole match. The
server scrambles what it sends and unscrambles what it receives, so logs keep the
true symbols.

The words are pronounceable nonsense built from syllables by a seeded random
generator: the same rules and seed always give the same mapping.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable

from server.gdl.parser import KEYWORDS, Rule
from server.gdl.terms import RawTerm, map_constants

from .messages import Abort, Info, Message, Play, Preview, Start, Stop

_NUMBER = re.compile(r"[-+]?\d+")
_ONSETS = ("b", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z", "br", "tr", "st")
_VOWELS = ("a", "e", "i", "o", "u", "ai", "ou")
_CODAS = ("", "", "", "n", "r", "s", "l")
_RESERVED = frozenset(
    {
        "nil",
        "ready",
        "busy",
        "done",
        "aborted",
        "available",
        "start",
        "play",
        "stop",
        "abort",
        "info",
        "preview",
        "noop",
    }
)
"""Protocol words never used as substitutes, to keep scrambled traffic unambiguous."""


def keeps_its_name(symbol: str) -> bool:
    """True for the symbols scrambling leaves alone: GDL keywords and numbers."""
    return symbol.lower() in KEYWORDS or bool(_NUMBER.fullmatch(symbol))


def _word(rng: random.Random) -> str:
    syllables = rng.randint(2, 4)
    return "".join(
        rng.choice(_ONSETS) + rng.choice(_VOWELS) + rng.choice(_CODAS) for _ in range(syllables)
    )


def _symbols_of(term: RawTerm, into: set[str]) -> None:
    stack = [term]
    while stack:
        current = stack.pop()
        if isinstance(current, str):
            into.add(current)
        else:
            stack.extend(current)


class Scrambler:
    """A one-to-one renaming of a game's symbols, deterministic from the rules and a seed."""

    def __init__(self, rules: Iterable[Rule], seed: int | str = 0) -> None:
        symbols: set[str] = set()
        for rule in rules:
            _symbols_of(rule.head, symbols)
            for literal in rule.body:
                _symbols_of(literal, symbols)
        names = sorted(symbol for symbol in symbols if not keeps_its_name(symbol))
        taken = {name.removeprefix("?").casefold() for name in names} | KEYWORDS | _RESERVED
        rng = random.Random(f"scramble:{seed}")
        self._forward: dict[str, str] = {}
        for name in names:
            word = _word(rng)
            while word in taken:
                word = _word(rng)
            taken.add(word)
            self._forward[name] = "?" + word if name.startswith("?") else word
        self._backward = {word: name for name, word in self._forward.items()}

    @property
    def mapping(self) -> dict[str, str]:
        """Each true symbol (variables with their ``?``) and its name on the wire."""
        return dict(self._forward)

    def scramble_symbol(self, symbol: str) -> str:
        """The wire name of one symbol; keywords, numbers and unknown symbols pass unchanged."""
        return self._forward.get(symbol, symbol)

    def unscramble_symbol(self, symbol: str) -> str:
        """The true name of a wire symbol; words the mapping does not know pass unchanged."""
        return self._backward.get(symbol, symbol)

    def scramble_term(self, term: RawTerm) -> RawTerm:
        """A term with every symbol renamed for the wire."""
        return map_constants(term, self.scramble_symbol)

    def unscramble_term(self, term: RawTerm) -> RawTerm:
        """A term read from the wire with its true symbols back."""
        return map_constants(term, self.unscramble_symbol)

    def scramble_rules(self, rules: Iterable[Rule]) -> list[Rule]:
        """The rules with every symbol renamed."""
        return [
            Rule(
                self.scramble_term(rule.head),
                tuple(self.scramble_term(literal) for literal in rule.body),
                rule.line,
                rule.column,
            )
            for rule in rules
        ]

    def scramble_moves(self, moves: list[RawTerm] | None) -> list[RawTerm] | None:
        """A joint move renamed for the wire (``None`` stays ``None``)."""
        return None if moves is None else [self.scramble_term(move) for move in moves]

    def scramble_message(self, message: Message) -> Message:
        """The message as it goes on the wire; match ids and clocks are unchanged."""
        match message:
            case Start():
                return message.model_copy(
                    update={
                        "role": self.scramble_symbol(message.role),
                        "rules": self.scramble_rules(message.rules),
                    }
                )
            case Play() | Stop():
                return message.model_copy(update={"moves": self.scramble_moves(message.moves)})
            case Preview():
                return message.model_copy(update={"rules": self.scramble_rules(message.rules)})
            case Abort() | Info():
                return message
        raise TypeError(f"not a GGP message: {message!r}")
