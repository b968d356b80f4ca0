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


def register_machine(lines: int, registers: int, values: int) -> str:
    """A register machine whose program is written in its first three steps: ``beq r s
    t`` jumps to line t when registers r and s hold the same value. Its next counter
    reads "the instruction at the counter is beq r s t and register r holds x" for every
    instruction and value, the same instruction gates in every such gate."""
    numbers = " ".join(f"(succ {k} {k + 1})" for k in range(max(values, lines + 1, 8)))
    return f"""
    (role coder)
    {" ".join(f"(line {k})" for k in range(1, lines + 1))}
    {" ".join(f"(register {k})" for k in range(1, registers + 1))}
    {numbers}
    (<= (instruction (zero ?r)) (register ?r))
    (<= (instruction (incr ?r)) (register ?r))
    (<= (instruction (beq ?r ?s ?l)) (register ?r) (register ?s) (line ?l))
    {" ".join(f"(init (rv {k} 0))" for k in range(1, registers + 1))}
    (init (pc 1)) (init (step 0))
    (<= writing (true (step 0))) (<= writing (true (step 1))) (<= writing (true (step 2)))
    (<= (legal coder (write ?l ?i)) (line ?l) (instruction ?i) writing)
    (<= (legal coder run) (not writing))
    (<= (next (code ?l ?i)) (does coder (write ?l ?i)))
    (<= (next (code ?l ?i)) (true (code ?l ?i)))
    (<= (current ?i) (true (pc ?l)) (true (code ?l ?i)))
    (<= (set ?r 0) (current (zero ?r)))
    (<= (set ?r ?m) (current (incr ?r)) (true (rv ?r ?n)) (succ ?n ?m))
    (<= (changed ?r) (set ?r ?v))
    (<= (next (rv ?r ?v)) (set ?r ?v))
    (<= (next (rv ?r ?v)) (true (rv ?r ?v)) (not (changed ?r)))
    (<= branching (current (beq ?r ?s ?l)))
    (<= (next (pc ?m)) (true (pc ?l)) (succ ?l ?m) (not branching))
    (<= (next (pc ?m)) (true (pc ?l)) (succ ?l ?m) (current (beq ?r ?s ?t))
        (true (rv ?r ?x)) (true (rv ?s ?y)) (distinct ?x ?y))
    (<= (next (pc ?t)) (current (beq ?r ?s ?t)) (true (rv ?r ?x)) (true (rv ?s ?x)))
    (<= (next (step ?m)) (true (step ?n)) (succ ?n ?m))
    (<= terminal (true (step 12)))
    (<= terminal (true (pc {lines + 1})))
    (<= (goal coder 100) (true (rv 2 2)))
    (<= (goal coder 0) (not (true (rv 2 2))))
    """


def cleared_blocks(function: str) -> list[int]:
    """The gates each block of a generated function sets false first (a block's names
    may take several lines)."""
    blocks: list[int] = []
    previous = False
    for line in function.splitlines():
        cleared = re.fullmatch(r"    (g\d+ = )+False", line)
        if cleared and previous:
            blocks[-1] += line.count("= ")
        elif cleared:
            blocks.append(line.count("= "))
        previous = bool(cleared)
    return blocks


def test_gates_reading_inline_ors_of_shared_gates_nest_under_them() -> None:
    """The register machine's gates "the counter's instruction compares register r,
    which holds x" each read ORs written inline over the instruction gates: written
    gate by gate, each tests its instructions one by one. With those ORs spelt out, the
    gates share the instruction gates and the registers' bits across the block, and are
    written as one block nested under them."""
    rules = parse_gdl(register_machine(lines=5, registers=4, values=10))
    engine = CompiledEngine.from_rules(rules)
    following = function_source(engine.source, "next")
    # one block of "the instruction at the counter is i", one of the comparisons
    assert len([gates for gates in cleared_blocks(following) if gates >= 80]) == 2
    assert fast_path_differences(engine) == []
    assert engine_disagreements(engine, Interpreter(rules), "coder", playouts=8) == []


def test_ors_shared_only_within_their_gate_stay_on_their_line() -> None:
    # tron_10x10's "a wall next to the head": each gate one body, its direction and an
    # OR written inline over the squares; spelt out, each gate's bodies share its
    # direction, which its OR already tests once: nothing to gain from a block
    walls = [
        [[("g", direction), ("n", 1 << square), ("p", 1 << (64 + square))] for square in range(50)]
        for direction in (1, 2)
    ]
    assert not codegen._spelt_nesting_pays(walls)
    # the register machine's: every gate reads the same instruction gates
    compares = [
        [[("g", instruction), ("p", 1 << (4 * register + value))] for instruction in range(8)]
        for register in range(4)
        for value in range(4)
    ]
    assert codegen._spelt_nesting_pays(compares)
