"""Small games a bot has never seen: a claiming race with random size and fresh symbols.

Two roles take turns; the role in control claims a free cell, the other waits.
The game ends after a few steps; whoever owns the prize cell scores 100 (the
other 0), and 50 each when nobody does. The number of cells, the number of steps,
the prize and every symbol but the GDL keywords vary with the seed, so a bot can
only play it by reading the rules.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from server.gdl import Game
from server.gdl.parser import KEYWORDS, Rule, parse_gdl

_TEMPLATE = """
(role {first}) (role {second})
(init ({control} {first})) (init ({step} 0))
{cells}
{succ}
(<= ({owned} ?c) (true ({mine} ?r ?c)))
(<= ({free} ?c) ({cell} ?c) (not ({owned} ?c)))
(<= (legal ?r ({claim} ?c)) (true ({control} ?r)) ({free} ?c))
(<= (legal ?r {wait}) (role ?r) (not (true ({control} ?r))))
(<= (next ({mine} ?r ?c)) (does ?r ({claim} ?c)))
(<= (next ({mine} ?r ?c)) (true ({mine} ?r ?c)))
(<= (next ({control} {second})) (true ({control} {first})))
(<= (next ({control} {first})) (true ({control} {second})))
(<= (next ({step} ?n)) (true ({step} ?m)) ({succ_name} ?m ?n))
(<= terminal (true ({step} {steps})))
(<= (goal ?r 100) (true ({mine} ?r {prize})))
(<= (goal ?r 0) (role ?r) (true ({mine} ?o {prize})) (distinct ?r ?o))
(<= (goal ?r 50) (role ?r) (not ({owned} {prize})))
"""

PLAIN_NAMES = {
    "control": "control",
    "step": "step",
    "owned": "owned",
    "mine": "mine",
    "free": "free",
    "cell": "cell",
    "claim": "claim",
    "wait": "noop",
    "succ_name": "succ",
}
"""The relation and move names of the readable version of the game."""

ROLE_PAIRS = (("xplayer", "oplayer"), ("white", "black"), ("red", "blue"), ("left", "right"))
"""Role names as games usually spell them."""

_RESERVED = frozenset(
    {"nil", "ready", "busy", "done", "aborted", "available", "start", "play", "stop"}
    | {"abort", "info", "preview", "noop"}
)
_ONSETS = ("b", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z", "kr", "sp")
_VOWELS = ("a", "e", "i", "o", "u", "ee", "oa")


@dataclass(frozen=True)
class MadeGame:
    """A generated game: its text, its rules and a loaded :class:`Game`."""

    text: str
    rules: list[Rule]
    game: Game


def fresh_words(rng: random.Random, count: int) -> list[str]:
    """``count`` different made-up words, some capitalised (symbols keep their case)."""
    words: list[str] = []
    taken = set(KEYWORDS | _RESERVED)
    while len(words) < count:
        word = "".join(rng.choice(_ONSETS) + rng.choice(_VOWELS) for _ in range(rng.randint(2, 3)))
        if word.lower() in taken:
            continue
        taken.add(word.lower())
        words.append(word.capitalize() if rng.random() < 0.3 else word)
    return words


def make_game(seed: int | str, *, fresh: bool = True) -> MadeGame:
    """A new claiming race; ``fresh=False`` keeps readable names (for scrambling on the wire)."""
    rng = random.Random(f"game:{seed}")
    size, steps = rng.randint(4, 6), rng.randint(3, 4)
    first, second = rng.choice(ROLE_PAIRS)
    if fresh:
        words = fresh_words(rng, len(PLAIN_NAMES) + size)
        names = dict(zip(PLAIN_NAMES, words, strict=False))
        cells = words[len(PLAIN_NAMES) :]
    else:
        names = dict(PLAIN_NAMES)
        cells = [f"c{index}" for index in range(1, size + 1)]
    text = _TEMPLATE.format(
        first=first,
        second=second,
        cells=" ".join(f"({names['cell']} {cell})" for cell in cells),
        succ=" ".join(f"({names['succ_name']} {n} {n + 1})" for n in range(steps)),
        steps=steps,
        prize=rng.choice(cells),
        **names,
    )
    rules = parse_gdl(text)
    return MadeGame(text=text, rules=rules, game=Game(rules, engine="interpreter"))
