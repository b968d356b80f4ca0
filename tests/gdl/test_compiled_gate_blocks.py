"""Gates that share literals are written as one block of nested tests.

A little machine runs the instruction at its program counter: "the current instruction
is op" is an OR, over the lines, of "the counter is at line n and line n holds op". Gate
by gate, every state would test the counter once for each body of each gate; as one block,
the gates start false and are nested under the counter's bits, so a state tests the
counter four times, then the instructions of its one line. The answers are the same.
"""

from __future__ import annotations

import re

from compiled_checks import engine_disagreements, fast_path_differences

from server.gdl.compiled import CompiledEngine, codegen
from server.gdl.interpreter import Interpreter
from server.gdl.parser import parse_gdl

MACHINE = """
(role machine)
(index 1) (index 2) (index 3) (index 4)
(op inc) (op dec) (op jump) (op halt)
(init (pc 1))
(init (code 1 inc)) (init (code 2 dec)) (init (code 3 jump)) (init (code 4 halt))
(init (step 0))
(succ 0 1) (succ 1 2) (succ 2 3) (succ 3 4) (succ 4 5) (succ 5 6)
(<= (current ?op) (true (pc ?n)) (true (code ?n ?op)))
(<= (legal machine (run ?op)) (current ?op))
(<= (legal machine (trace ?op)) (current ?op))
(<= (legal machine (swap ?n ?op)) (index ?n) (op ?op) (not (current halt)))
(<= (swapped ?n) (does machine (swap ?n ?op)))
(<= (next (code ?n ?op)) (true (code ?n ?op)) (not (swapped ?n)))
(<= (next (code ?n ?op)) (does machine (swap ?n ?op)))
(<= (next (pc ?m)) (true (pc ?n)) (succ ?n ?m) (index ?m) (not (current jump)))
(<= (next (pc 1)) (current jump))
(<= (next (pc 1)) (true (pc 4)))
(<= (next (step ?m)) (true (step ?n)) (succ ?n ?m))
(<= terminal (true (step 6)))
(<= terminal (current halt))
(<= (goal machine 100) (current halt))
(<= (goal machine 0) (not (current halt)))
"""


def function_source(source: str, name: str) -> str:
    start = source.index(f"def {name}(")
    end = source.find("\ndef ", start + 1)
    return source[start : end if end >= 0 else None]


def test_the_current_instruction_gates_are_one_block_under_the_counter() -> None:
    rules = parse_gdl(MACHINE)
    engine = CompiledEngine.from_rules(rules)
    legal = function_source(engine.source, "legal").splitlines()
    cleared = [line for line in legal if re.fullmatch(r"    (g\d+ = )+False", line)]
    assert len(cleared) == 1 and cleared[0].count("= ") == 4  # the four instructions
    counter_tests = [line for line in legal if re.fullmatch(r"    if s & \d+:", line)]
    assert len(counter_tests) == 4  # one per line the counter can be at
    assert not [line for line in legal if " or " in line]  # no gate left as an OR
    assert fast_path_differences(engine) == []
    assert engine_disagreements(engine, Interpreter(rules), "machine", playouts=8) == []


def test_gates_that_share_nothing_keep_a_line_each() -> None:
    # connectFour's "this column is full": one bit off each, nothing to nest under
    columns_full = [[("n", 1 << column)] for column in range(7)]
    assert not codegen._nesting_pays(columns_full)
    # the machine's instructions: four lines' bits, each shared by four bodies
    instructions = [
        [("p", 1 << line), ("p", 1 << (8 + 4 * line + op))] for line in range(4) for op in range(4)
    ]
    assert codegen._nesting_pays(instructions)
    # shared only by bits that must be off, which hardly ever skip a group
    free_targets = [
        [("n", 1 << square), ("p", 1 << (8 + 2 * square + k))]
        for square in range(4)
        for k in range(2)
    ]
    assert not codegen._nesting_pays(free_targets)
