"""Generated code writes wide numbers as placeholders and nests shared literals greedily:
the placeholders become the numbers in the compiled code, and the nesting is the
plain greedy one, however it is computed (a literal that seldom holds first among
equals)."""

from __future__ import annotations

import random
import re
from collections import Counter
from pathlib import Path

from compiled_checks import engine_disagreements, fast_path_differences

from server.gdl.compiled import CompiledEngine, codegen
from server.gdl.compiled.code_limits import PLACEHOLDER_CHARS, number_chars
from server.gdl.compiled.plan import Conj
from server.gdl.interpreter import Interpreter
from server.gdl.parser import parse_gdl

ROOT = Path(__file__).resolve().parents[2]
NINE_BOARD = ROOT / "server" / "games" / "nineBoardTicTacToe.kif"


def test_a_wide_number_is_written_once_as_a_placeholder() -> None:
    numbers = codegen.Numbers()
    wide = 1 << 200
    assert numbers.text(12345) == "12345"
    assert numbers.text((1 << codegen.WIDE_NUMBER_BITS) - 1) == str((1 << 64) - 1)
    placeholder = numbers.text(wide)
    assert placeholder != str(wide) and len(placeholder) < 8
    assert numbers.text(wide) == placeholder and numbers.text(wide + 1) != placeholder
    assert numbers.values == {
        placeholder.strip("'"): wide,
        numbers.text(wide + 1).strip("'"): wide + 1,
    }


def test_placeholders_become_their_numbers_wherever_the_compiler_put_them() -> None:
    numbers = codegen.Numbers()
    a, b = numbers.text(3 << 100), numbers.text(5 << 90)
    source = (
        f"def f(s):\n"
        f"    if s in ({a}, {b}) or s in {{{a}, {b}}} or s in [{b}]:\n"
        f"        return s & {a} == {a}\n"
        f"    return (lambda: {b})()\n"
    )
    namespace: dict = {}
    exec(codegen.with_numbers(compile(source, "<test>", "exec"), numbers.values), namespace)
    f = namespace["f"]
    assert f(3 << 100) is True and f(5 << 90) is False and f(1) == 5 << 90


def test_the_generated_code_of_a_wide_game_holds_no_wide_number() -> None:
    rules = parse_gdl(NINE_BOARD.read_text())
    engine = CompiledEngine.from_rules(rules, time_limit=60)
    assert engine.network.n_inputs > 2 * codegen.WIDE_NUMBER_BITS
    digits = max(len(number) for number in re.findall(r"\d+", engine.source))
    assert digits <= len(str(1 << codegen.WIDE_NUMBER_BITS))
    assert fast_path_differences(engine) == []
    assert engine_disagreements(engine, Interpreter(rules), "nineBoardTicTacToe") == []


def plain_greedy(items: list[tuple[Conj | None, str]], depth: int = 0) -> list[str]:
    """The nesting of :func:`codegen.items_code`, counted afresh for every block."""
    lines: list[str] = []
    remaining = [(c if c is not None else frozenset(), a) for c, a in items]
    while remaining:
        counts = Counter(lit for conj, _ in remaining for lit in sorted(conj))
        common = [lit for lit, count in counts.items() if count >= 2]
        if depth >= codegen.MAX_NESTING or not common:
            for conj, action in remaining:
                if conj:
                    lines += [f"if {codegen.conj_code(conj, 's', str)}:", f"    {action}"]
                else:
                    lines.append(action)
            break
        # the first of the most common, a literal that seldom holds before one that
        # mostly does (a bit on, a gate, then a bit or gate off)
        lit = min(common, key=lambda lit: (-counts[lit], {"p": 0, "a": 0, "g": 1}.get(lit[0], 2)))
        group = [(conj - {lit}, a) for conj, a in remaining if lit in conj]
        remaining = [(conj, a) for conj, a in remaining if lit not in conj]
        lines.append(f"if {codegen.conj_code(frozenset({lit}), 's', str)}:")
        lines += ["    " + line for line in plain_greedy(group, depth + 1)]  # type: ignore[arg-type]
    return lines


def test_shared_literals_are_nested_as_the_plain_greedy_nests_them() -> None:
    rng = random.Random(5)
    for _ in range(400):
        universe = [(rng.choice("pnag!"), rng.randint(1, 9)) for _ in range(rng.randint(1, 9))]
        items: list[tuple[Conj | None, str]] = [
            (
                None
                if rng.random() < 0.1
                else frozenset(rng.sample(universe, rng.randint(0, min(5, len(universe))))),
                f"a{i}",
            )
            for i in range(rng.randint(0, 30))
        ]
        depth = rng.choice([0, 0, codegen.MAX_NESTING - 1])
        assert codegen.items_code(items, "s", str, depth) == plain_greedy(items, depth)


def test_among_equally_shared_literals_a_bit_on_is_nested_before_a_bit_off() -> None:
    # A knight's moves: each needs the knight on its square (a bit on, seldom true) and
    # its target free of the other knight (a bit off, nearly always true). Nested under
    # the knight's square, a state tests the moves of the one square it holds.
    knight_on = {square: ("p", 1 << square) for square in range(4)}
    target_free = {square: ("n", 1 << (8 + square)) for square in range(4)}
    items: list[tuple[Conj | None, str]] = [
        (frozenset({knight_on[source], target_free[target]}), f"move{source}{target}")
        for target in range(4)
        for source in range(4)
        if source != target
    ]
    outer = [line for line in codegen.items_code(items, "s", str) if not line[0].isspace()]
    assert sorted(outer) == sorted(f"if s & {1 << square}:" for square in range(4))


def test_the_size_caps_count_a_wide_number_as_its_placeholder() -> None:
    numbers = codegen.Numbers()
    for bits in (10, 40, 64):
        assert abs(number_chars(bits) - len(numbers.text((1 << bits) - 1))) <= 1
    for bits in (65, 3000):  # a placeholder, the same for any width
        assert len(numbers.text((1 << bits) - 1)) <= number_chars(bits) == PLACEHOLDER_CHARS
