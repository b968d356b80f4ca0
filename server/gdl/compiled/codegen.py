"""Generate straight-line Python from a :class:`Plan`.

The state is an ``int`` whose bit ``k`` is fluent ``k``; during ``next`` the input
``X`` is the state with the bits of the joint move added. Gates become local
variables computed in dependency order; a gate read only once is inlined where it
is read (so ``and``/``or`` short-circuit over it); a recursive component becomes a
loop that runs until no gate changes. Outputs that share a literal (``legal`` moves
that all need ``(true (control white))``) are nested under one ``if`` on it; a wide
OR of rule bodies is factored the same way inside one expression, so a goal that joins
two pieces' positions tests each position once instead of every pair.

``playout`` runs whole random playouts incrementally: gate values live across steps,
and a region's gates are recomputed only when the last move changed a bit of it. A
wide OR of positive conjunctions (the lines of a board) that was false and saw one of
its bits turn on tests only the bodies holding that bit, found in a module-level table.

``status`` is one step of that loop for the calls on single states: the terminal test
and the legal moves, from the gate values of any earlier state (passed in and handed
back as a tuple) and the bits that differ, so a caller that walks from state to state
recomputes only the regions a move touched. It is left out when it would carry more
than MAX_STATUS_GATES values.
"""

from __future__ import annotations

import heapq
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from types import CodeType
from typing import Any, NamedTuple, TypeAlias, cast

from .code_limits import (
    WIDE_NUMBER_BITS,
    CodeCaps,
    number_chars,
    predicted_too_large,
)
from .errors import GroundingTooLarge, check_deadline
from .plan import Conj, Gate, Joins, Lit, Plan, bit_masks, gate_refs, gates_needed

Ref = Callable[[int], str]
"""Gives the expression that reads a gate."""

Number = Callable[[int], str]
"""Gives the text of a number in the generated code (:class:`Numbers`)."""

MAX_INLINE_DEPTH = 25
"""Deeper expressions are stored in variables (CPython limits nesting)."""

VIEW_MIN_BITS = 128
"""A literal whose bits reach past this many is tested in the bytes of the state
(:class:`ByteView`) rather than with an ``int`` mask: ``s & m`` costs time in proportion
to the highest bit of ``m`` (30 bits a step), a byte read does not. One test of a bit past
the 3,000th costs 70 ns as ``s & m`` and 26 ns as ``B[j] & c``, past the 200th 28 and 25
ns. Measured through the public API at 512, 128 and 64: pacman3p 33,700, 44,600 and
44,700 transitions a second, crossers3 16,600, 20,000 (and 19,900), tron_10x10 24,200,
29,700 and 30,200; ticTacToe (29 fluents) reads no bytes."""

VIEW_MAX_BYTES = 2
"""A literal spread over more bytes than this keeps its ``int`` mask (one operation)."""


class ByteView:
    """The bytes of a wide input (the state, or the state and the moves' bits), little
    end first, computed once per call (``B = s.to_bytes(...)``) when some literal reads
    them: a test of bit ``k`` is then ``B[k >> 3] & (1 << (k & 7))``."""

    def __init__(self, var: str, bits: int) -> None:
        self.var = var
        self.name = f"B{var}"
        self.length = (bits + 7) // 8
        self.used = False

    def line(self) -> str:
        """The assignment of the view, for the start of the code that reads it."""
        return f"{self.name} = {self.var}.to_bytes({self.length}, 'little')"

    def test(self, pos: int, neg: int) -> str | None:
        """Bits ``pos`` on and ``neg`` off as byte tests, or ``None`` where the ``int``
        mask costs as little (low bits, or bits spread over many bytes)."""
        mask = pos | neg
        top = mask.bit_length()
        if top <= VIEW_MIN_BITS:
            return None
        if not mask & (mask - 1):  # one bit, the most common literal
            self.used = True
            read = f"{self.name}[{(top - 1) >> 3}] & {1 << ((top - 1) & 7)}"
            return read if pos else f"not {read}"
        if mask.bit_count() > 8 * VIEW_MAX_BYTES:
            return None
        by_byte: dict[int, list[int]] = {}
        for low in bit_masks(mask):
            index = low.bit_length() - 1
            on_off = by_byte.setdefault(index >> 3, [0, 0])
            on_off[0 if pos & low else 1] |= 1 << (index & 7)
        if len(by_byte) > VIEW_MAX_BYTES:
            return None
        self.used = True
        tests = []
        for byte, (on, off) in sorted(by_byte.items()):
            read = f"{self.name}[{byte}]"
            if not off:
                tests.append(f"{read} & {on}" if on & (on - 1) == 0 else f"{read} & {on} == {on}")
            elif not on:
                tests.append(f"not {read} & {off}")
            else:
                tests.append(f"{read} & {on | off} == {on}")
        return " and ".join(tests)

    def any_test(self, mask: int) -> str | None:
        """At least one bit of ``mask`` on, as one byte test, or ``None``."""
        if mask.bit_length() <= VIEW_MIN_BITS:
            return None
        low = (mask & -mask).bit_length() - 1
        if (mask.bit_length() - 1) >> 3 != low >> 3:
            return None
        self.used = True
        return f"{self.name}[{low >> 3}] & {mask >> (low & ~7)}"


MAX_INLINE_TEST_CHARS = 400
"""A gate that is one test of input bits is written where it is read (when asked for)
if at most one other gate reads it and its copies take at most this many characters:
it then need not be carried from state to state (outputs read it under conditions, so
few of the copies run)."""

MAX_STATUS_GATES = 1000
"""``status`` is left out when it would carry more gate values than this from state to
state (packing them costs more than recomputing saves)."""

EXPAND_MIN_OUTPUTS = 1000
"""A role with this many legal moves or more has the gates its moves read inline expanded
into their conditions (:meth:`GateWriter.expanded`): amazons_10x10 (3,041 moves a role)
ran 4,770 transitions a second with them expanded, 2,460 without; breakthrough (about
150) 70,500 with and 85,000 without, so fewer moves keep them as they are."""

MAX_NESTING = 20
"""Deepest nesting of ``if`` blocks when outputs share literals."""


class Numbers:
    """The text of each number in the generated code, worked out once per number.

    A mask over the fluents and moves of a large game is a number of hundreds or
    thousands of digits, written again wherever a rule body tests its bits: most of a
    large module's characters (90 % of knightwar's 5.6 million), each converted to
    decimal when written and back when compiled. A number wider than
    :data:`WIDE_NUMBER_BITS` is written instead as a short string constant (``'#7'``)
    that :func:`with_numbers` replaces by the number in the compiled code: the code
    runs the same, each number is the same constant as if written out.
    """

    def __init__(self) -> None:
        self.texts: dict[int, str] = {}
        self.values: dict[str, int] = {}
        """The number of each placeholder (without its quotes)."""

    def text(self, value: int) -> str:
        """``value`` as written in the generated code."""
        found = self.texts.get(value)
        if found is None:
            if value.bit_length() <= WIDE_NUMBER_BITS:
                found = str(value)
            else:
                placeholder = f"#{len(self.values)}"
                self.values[placeholder] = value
                found = repr(placeholder)
            self.texts[value] = found
        return found


class Module(NamedTuple):
    """Generated code: its source, the numbers of its placeholders (:class:`Numbers`)
    and the lookup tables it reads (module globals)."""

    source: str
    numbers: dict[str, int]
    tables: dict[str, dict[int, tuple[int, ...]]]


def with_numbers(code: CodeType, numbers: dict[str, int]) -> CodeType:
    """``code`` (and the code nested in it) with every placeholder constant replaced by
    its number; the compiler may have gathered constants into tuples or frozensets."""

    def constant(value: object) -> object:
        if isinstance(value, str):
            return numbers.get(value, value)
        if isinstance(value, CodeType):
            return with_numbers(value, numbers)
        if isinstance(value, tuple):
            return tuple(constant(item) for item in value)
        if isinstance(value, frozenset):
            return frozenset(constant(item) for item in value)
        return value

    return code.replace(co_consts=tuple(constant(value) for value in code.co_consts))


def _indent(lines: list[str], level: int = 1) -> list[str]:
    pad = "    " * level
    return [pad + line for line in lines]


def conj_code(
    conj: Conj, var: str, ref: Ref, num: Number = str, view: ByteView | None = None
) -> str:
    """A conjunction of literals as a Python condition (high bits read from ``view``,
    when given)."""
    pos = neg = 0
    parts: list[str] = []
    late: list[str] = []
    for kind, value in sorted(conj):
        if kind == "p":
            pos |= value
        elif kind == "n":
            neg |= value
        elif kind == "a":
            any_test = view.any_test(value) if view is not None else None
            parts.append(any_test or f"{var} & {num(value)}")
        elif kind == "g":
            late.append(ref(value))
        else:
            late.append("not " + ref(value))
    mask = pos | neg
    if mask:
        first = view.test(pos, neg) if view is not None else None
        if first is None:
            if not neg and pos & (pos - 1) == 0:
                first = f"{var} & {num(pos)}"
            elif not pos:
                first = f"not {var} & {num(neg)}"
            else:
                first = f"{var} & {num(mask)} == {num(pos)}"
        parts.insert(0, first)
    parts += late
    return " and ".join(parts) if parts else "True"


def or_code(
    bodies: list[Conj],
    var: str,
    ref: Ref,
    num: Number = str,
    depth: int = 0,
    view: ByteView | None = None,
    joins: Joins | None = None,
) -> str:
    """A disjunction of conjunctions, with the literals common to all pulled out.

    A wide one (:data:`FACTORED_OR_MIN` bodies or more) is factored instead: the
    literal that most bodies hold is tested once, before the rest of those bodies,
    nested the same way (:func:`shared_groups`), so that a join of independent
    conditions (a goal over two pieces' positions: 10,000 bodies) costs a test per
    piece position, not per body. Before that, bodies of bits at the same distances are
    tested by shifting (:func:`join_groups`; ``joins``: the groups already found, else
    they are looked for at the top level).
    """
    if not bodies:
        return "False"
    if len(bodies) == 1:
        return conj_code(bodies[0], var, ref, num, view)
    if joins is None and depth == 0 and len(bodies) >= SHIFTED_JOIN_MIN:
        joins = join_groups(bodies)
    if joins is not None and joins[0]:
        groups, rest = joins
        tests = [join_code(shape, mask, var, num) for shape, mask in groups]
        if rest:  # none of them joins with enough others
            tests.append(or_code(rest, var, ref, num, depth, view, joins=([], rest)))
        return " or ".join(f"({part})" if " or " in part else part for part in tests)
    if len(bodies) >= FACTORED_OR_MIN and depth < MAX_FACTORED_DEPTH:
        return _factored_or(bodies, var, ref, num, depth, view)
    common = frozenset.intersection(*bodies)
    if common:
        residual = [body - common for body in bodies]
        if any(not body for body in residual):
            return conj_code(common, var, ref, num, view)
        inner = " or ".join(conj_code(body, var, ref, num, view) for body in residual)
        return f"{conj_code(common, var, ref, num, view)} and ({inner})"
    return " or ".join(conj_code(body, var, ref, num, view) for body in bodies)


SHIFTED_JOIN_MIN = 8
"""Bodies of the same shape (bits on at the same distances from their lowest) tested as
one shifted mask (:func:`join_groups`) from this many on."""


SHIFTED_JOIN_MAX_BITS = 3
"""The most bits a body may ask for to be part of a shifted test: tron_10x10 ran 40,300
transitions a second with bodies of up to three (and two) bits shifted, 25,900 with its
bodies of four bits shifted too."""


def join_groups(bodies: list[Conj]) -> Joins:
    """The bodies that each ask for bits ``a``, ``a + d1``, ... on, with distances that at
    least :data:`SHIFTED_JOIN_MIN` of them share, as (distances, their lowest bits) groups;
    and the other bodies, as they were. Each group is one test (:func:`join_code`)."""
    by_shape: dict[tuple[int, ...], list[tuple[int, Conj]]] = {}
    for body in bodies:
        if not 2 <= len(body) <= SHIFTED_JOIN_MAX_BITS:
            continue
        places = []  # each bit's place, counted from 1
        for kind, bit in body:
            if kind != "p":
                break
            places.append(bit.bit_length())
        else:
            places.sort()
            base = places[0]
            shape = tuple(place - base for place in places[1:])
            by_shape.setdefault(shape, []).append((base, body))
    groups: list[tuple[tuple[int, ...], int]] = []
    joined: set[int] = set()
    for shape, members in by_shape.items():
        if len(members) < SHIFTED_JOIN_MIN:
            continue
        mask = 0
        for base, body in members:
            mask |= 1 << (base - 1)
            joined.add(id(body))
        groups.append((shape, mask))
    if not groups:
        return groups, bodies
    return groups, [body for body in bodies if id(body) not in joined]


def join_code(shape: tuple[int, ...], mask: int, var: str, num: Number) -> str:
    """One group of :func:`join_groups` as a test: ``s & A & (s >> d1) & ...``. A piece
    caught where another stands (mummymaze2p's terminal: an explorer and a mummy on the
    same one of 800 cells) or a line of marks then costs a few operations on the state
    instead of a test per cell."""
    return f"{var} & {num(mask)}" + "".join(f" & ({var} >> {distance})" for distance in shape)


FACTORED_OR_MIN = 16
"""ORs of this many bodies or more are written factored (:func:`or_code`)."""

MAX_FACTORED_DEPTH = 4
"""Deepest nesting of factored ORs (each level nests two parentheses, and factored
expressions may be inlined into one another: CPython limits nesting)."""


def _factored_or(
    bodies: list[Conj], var: str, ref: Ref, num: Number, depth: int, view: ByteView | None
) -> str:
    conds = [sorted(body) for body in bodies]
    groups, rest = shared_groups(conds)
    parts: list[str] = []
    for lit, members in groups:
        test = conj_code(frozenset({lit}), var, ref, num, view)
        residual = [frozenset(conds[i]) - {lit} for i in members]
        if any(not body for body in residual):
            parts.append(test)
        else:
            parts.append(f"{test} and ({or_code(residual, var, ref, num, depth + 1, view)})")
    parts += [conj_code(frozenset(conds[i]), var, ref, num, view) for i in rest]
    return " or ".join(f"({part})" if " or " in part else part for part in parts)


BATCH_MIN_GATES = 2
"""Consecutive gates written as one block of nested tests from this many on."""

BATCH_NAMES_PER_LINE = 64
"""Gates set to ``False`` by one line before their block."""


def _levels(gates: dict[int, Gate], ordered: list[int], gate_ids: set[int]) -> dict[int, int]:
    """How far each gate of ``gate_ids`` (``ordered``: in an order that puts the gates a
    gate reads before it) sits from the inputs: one more than the furthest gate it reads
    among them; the members of a recursive component share theirs."""
    levels: dict[int, int] = {}
    for gid in ordered:
        if gid in levels:
            continue
        component = gates[gid].component
        members = [m for m in component if m in gate_ids] if component else [gid]
        inside = set(members)
        level = 1 + max(
            (
                levels.get(ref, 0)
                for member in members
                for ref in gate_refs(gates[member].bodies)
                if ref not in inside
            ),
            default=0,
        )
        for member in members:
            levels[member] = level
    return levels


BATCH_MAX_BODIES = 256
"""The most bodies a gate may have to be written in a block (:meth:`GateBatch.takes`)."""

BATCH_GAIN = 2
"""How many times fewer tests a state must make for gates to be written as a block."""


def _first_tests(conds: list[list[Lit]]) -> int:
    """The tests a state makes first on ``conds`` (sorted literals) nested by the
    literals they share: a group under a literal that seldom holds (a bit on, a gate)
    counts as its one test, any other as its members, a condition left unnested as one."""
    groups, rest = shared_groups(conds)
    tests = len(rest)
    for lit, members in groups:
        tests += 1 if _skip_rank(lit) <= 1 else len(members)
    return tests


def _nesting_pays(conds: list[list[Lit]]) -> bool:
    """Whether nesting ``conds`` (sorted literals) by the literals they share leaves at
    most one in :data:`BATCH_GAIN` of them to be tested first (:func:`_first_tests`).
    Gates that share nothing (connectFour's "this column is full", one bit each) stay one
    line each, as ``g = not s & m`` costs less than ``if not s & m: g = True``."""
    return _first_tests(conds) * BATCH_GAIN <= len(conds)


def _spelt_nesting_pays(spelt: list[list[list[Lit]]]) -> bool:
    """Whether gates whose bodies read ORs written inline, nested as one block on their
    bodies with those ORs spelt out (``spelt``: per gate, sorted literals), make at most
    one in :data:`BATCH_GAIN` of the tests they make each on its own line, each factored
    by the literals its own bodies share. tron_10x10's "a wall next to the head" gates
    share literals only within their own OR (each factored under its own direction) and
    stay one line each."""
    own = sum(_first_tests(conds) for conds in spelt)
    return _first_tests([conds for each in spelt for conds in each]) * BATCH_GAIN <= own


class GateBatch:
    """Consecutive gates that read none of one another, written as one block.

    Each gate's bodies become actions ``g = True`` under their conditions, nested by the
    literals they share across the whole block (:func:`items_code`) after the gates are
    set to ``False``. Gates of one game often share a literal gate by gate: urmAdd's 285
    gates "the instruction at the program counter is i" are each an OR over ten lines of
    "the counter is at line n and line n holds i", and written gate by gate they test
    the counter 2,850 times a state; nested, ten times, then the instructions of its one
    line. Only for code without guards (every gate computed on every call, in order,
    level by level); gates tested by shifting (:func:`join_groups`) and gates of more
    than :data:`BATCH_MAX_BODIES` bodies keep their own line, as do the gates of a
    block where nesting does not pay (:func:`_nesting_pays`).
    """

    def __init__(self, writer: GateWriter) -> None:
        self.writer = writer
        self.gates: list[int] = []
        self.members: set[int] = set()
        self.exprs: list[str] = []
        """Each gate's OR as written on its own line, for a block that does not pay."""

    def reads(self, gid: int) -> set[int]:
        """The gates that ``gid``'s code reads, through the gates written inline."""
        gates = self.writer.plan.gates
        inlined = self.writer.inlined
        found: set[int] = set()
        stack = list(gate_refs(gates[gid].bodies))
        while stack:
            ref = stack.pop()
            if ref in found:
                continue
            found.add(ref)
            if ref in inlined:
                stack.extend(gate_refs(gates[ref].bodies))
        return found

    def reads_any(self, gid: int) -> bool:
        """Whether ``gid``'s code reads a gate of the block (which must be written first)."""
        return bool(self.members) and not self.members.isdisjoint(self.reads(gid))

    def takes(self, gid: int, expr: str) -> bool:
        """Take ``gid`` into the block, unless it is tested by shifting or is a very wide
        OR (factored on its own, and stopping at its first body that holds: tron_10x10's
        goals, two gates of 20,550 bodies, ran 33 % slower written in a block); ``expr``
        is its OR, written on its own line should the block not pay."""
        if len(self.writer.plan.gates[gid].bodies) > BATCH_MAX_BODIES:
            return False
        joins = self.writer.plan.joins.get(gid)
        if joins is not None and joins[0]:
            return False
        self.gates.append(gid)
        self.members.add(gid)
        self.exprs.append(expr)
        return True

    def flush(self) -> list[str]:
        """The lines computing the block's gates; the block is then empty."""
        gates, exprs, writer = self.gates, self.exprs, self.writer
        self.gates, self.members, self.exprs = [], set(), []
        own_lines = [f"g{gid} = {expr}" for gid, expr in zip(gates, exprs, strict=True)]
        if len(gates) < BATCH_MIN_GATES:
            return own_lines
        bodies = [writer.plan.gates[gid].bodies for gid in gates]
        if not _nesting_pays([sorted(body) for each in bodies for body in each]):
            spelt = [writer.spelt_out(gid) for gid in gates]
            if spelt == bodies or not _spelt_nesting_pays(
                [[sorted(body) for body in each] for each in spelt]
            ):
                return own_lines
            bodies = spelt
        lines = [
            " = ".join(f"g{gid}" for gid in gates[start : start + BATCH_NAMES_PER_LINE])
            + " = False"
            for start in range(0, len(gates), BATCH_NAMES_PER_LINE)
        ]
        items: list[tuple[Conj | None, str]] = [
            (body, f"g{gid} = True")
            for gid, each in zip(gates, bodies, strict=True)
            for body in each
        ]
        lines += items_code(
            items,
            writer.var,
            writer.ref,
            deadline=writer.deadline,
            num=writer.num,
            view=writer.view,
        )
        return lines


class GateWriter:
    """Writes the code that computes a set of gates."""

    def __init__(
        self,
        plan: Plan,
        var: str,
        incremental: bool,
        inline_tests: bool = False,
        num: Number = str,
    ) -> None:
        self.deadline = plan.deadline
        self.num = num
        self.plan = plan
        self.var = var
        network = plan.network
        # ``X`` (in next) holds the moves' bits above the fluents; ``s`` the fluents only
        width = network.n_inputs if var == "X" else len(network.fluents)
        self.view = ByteView(var, width) if width > VIEW_MIN_BITS else None
        """The bytes of the input, for literals on its high bits (None on narrow games)."""
        self.incremental = incremental
        self.inline_tests = inline_tests
        """Whether a gate that is one test of input bits is written where it is read."""
        self.inlined: dict[int, str] = {}
        self.depth: dict[int, int] = {}
        self.tables: dict[str, dict[int, tuple[int, ...]]] = {}
        self.kept: list[int] = []
        """The gates whose values carry over from the previous state (each assigned
        only when a guard says that what it reads changed)."""

    def ref(self, gid: int) -> str:
        if gid in self.inlined:
            return "(" + self.inlined[gid] + ")"
        return f"g{gid}"

    def closure(self, roots: list[int], within: set[int]) -> set[int]:
        return gates_needed(self.plan.gates, roots, within)

    def write(self, gate_ids: set[int], outside_uses: Counter, regional: bool) -> list[str]:
        """Lines computing the gates; ``outside_uses`` counts reads by output code."""
        gates = self.plan.gates
        uses = Counter(outside_uses)
        for gid in gate_ids:
            for v in gate_refs(gates[gid].bodies):
                uses[v] += 1
        users: dict[int, int] = {}
        for gid in gate_ids:
            for v in gate_refs(gates[gid].bodies):
                users[v] = gid
        ordered = sorted(gate_ids, key=lambda g: (gates[g].order, g))
        batch = GateBatch(self) if not self.incremental and not regional else None
        if batch is not None:  # by level, so that a block holds every gate of one
            levels = _levels(gates, ordered, gate_ids)
            ordered.sort(key=lambda g: (levels[g], gates[g].order, g))
        blocks: dict[int, list[str]] = {}
        # global gates, each with its guard (0: computed every step)
        global_parts: list[tuple[int, list[str]]] = []
        kept: list[int] = []
        volatile = self.plan.volatile
        done: set[int] = set()

        def guard(gate: Gate) -> int:
            """The bits whose change forces the gate to be recomputed; 0 when a bit
            that changes on most moves is among them (the test would not pay)."""
            if not self.incremental or not gate.support or gate.support & volatile:
                return 0
            return gate.support

        for count, gid in enumerate(ordered):
            if count & 31 == 31:
                check_deadline(self.deadline, "generating code")
            if gid in done:
                continue
            gate = gates[gid]
            region = gate.region if regional else -1
            if gate.component:
                if batch is not None:
                    global_parts.append((0, batch.flush()))
                members = [m for m in gate.component if m in gate_ids]
                done.update(members)
                lines = self._fixpoint(members)
                if region >= 0:
                    blocks.setdefault(region, []).extend(lines)
                    kept.extend(members)
                else:
                    global_parts.append((guard(gate), lines))
                    if guard(gate):
                        kept.extend(members)
                continue
            done.add(gid)
            expr = self._or_code(gid)
            level = 1 + max((self.depth.get(v, 0) for v in gate_refs(gate.bodies)), default=0)
            user = users.get(gid)
            same_place = (
                user is not None
                and outside_uses[gid] == 0
                and (gates[user].region if regional else -1) == region
                and not gates[user].component
            ) or (user is None and region < 0)
            keep = region < 0 and len(gate.bodies) > 1 and guard(gate) != 0
            if (uses[gid] == 1 and same_place and level < MAX_INLINE_DEPTH and not keep) or (
                self.inline_tests
                and uses[gid] - outside_uses[gid] <= 1
                and len(expr) * uses[gid] <= MAX_INLINE_TEST_CHARS
                and self._one_test(gate)
            ):
                self.inlined[gid] = expr
                self.depth[gid] = level
                continue
            if batch is not None:
                if batch.reads_any(gid):
                    global_parts.append((0, batch.flush()))
                if batch.takes(gid, expr):
                    continue
            line = f"g{gid} = {expr}"
            masks = _positive_masks(gate.bodies) if keep else None
            mask = 0
            if region >= 0:
                blocks.setdefault(region, []).append(line)
                mask = -1
            elif masks is not None:
                mask = -1
                global_parts.append((mask, self._monotone(gid, masks, expr)))
            else:
                mask = guard(gate) if len(gate.bodies) > 1 else 0
                global_parts.append((mask, [line]))
            if mask:
                kept.append(gid)
        if batch is not None:
            global_parts.append((0, batch.flush()))
        out: list[str] = []
        for region in sorted(blocks):
            if self.incremental:
                out.append(f"if ch & {self.num(self.plan.regions[region])}:")
                out.extend(_indent(blocks[region]))
            else:
                out.extend(blocks[region])
        # consecutive gates with the same guard share one test
        previous = None
        for mask, lines in global_parts:
            if mask <= 0:
                out.extend(lines)
                previous = None
                continue
            if mask != previous:
                out.append(f"if ch & {self.num(mask)}:")
                previous = mask
            out.extend(_indent(lines))
        if self.incremental:
            self.kept.extend(kept)
        return out

    def expanded(self, cond: Conj | None) -> Conj | None:
        """``cond`` with each gate it reads that is written inline and has one body
        replaced by that body's literals, so that outputs sharing a literal inside such
        gates are nested under one test of it (:func:`items_code`): amazons_10x10's
        6,000 legal moves each read a gate holding the square the queen moves from, and
        were tested one by one."""
        if cond is None:
            return cond
        gates = self.plan.gates
        for _ in range(MAX_INLINE_DEPTH):  # inlined gates nest no deeper than this
            inner = [
                lit
                for lit in cond
                if lit[0] == "g"
                and lit[1] in self.inlined
                and not gates[lit[1]].component
                and len(gates[lit[1]].bodies) == 1
            ]
            if not inner:
                break
            for lit in inner:
                cond = (cond - {lit}) | gates[lit[1]].bodies[0]
        return cond

    def spelt_out(self, gid: int) -> list[Conj]:
        """A gate's bodies with each OR written inline that one reads spelt out: a body
        that reads such a gate becomes one body per body of it, as long as the gate keeps
        at most BATCH_MAX_BODIES bodies (else its own; an OR tested by shifting stays
        whole, one test). In a block, the literals that those ORs share across its gates
        then nest too: urmAdd's next state has 266 gates that read ORs over "the
        instruction at the counter is i" and a register's value, the same instruction
        gates in every one (13,510 bodies spelt out). Gate by gate they make 1,810 first
        tests a state (:func:`_first_tests`), as one block 510, nested under the
        instruction gates, of which one holds."""
        gates, joins = self.plan.gates, self.plan.joins
        bodies = list(gates[gid].bodies)
        for _ in range(MAX_INLINE_DEPTH):  # inlined gates nest no deeper than this
            spelt: list[Conj] = []
            changed = False
            for body in bodies:
                inner = next(
                    (
                        lit
                        for lit in body
                        if lit[0] == "g"
                        and lit[1] in self.inlined
                        and not gates[lit[1]].component
                        and not joins.get(lit[1], ((),))[0]  # tested by shifting: kept
                    ),
                    None,
                )
                if inner is None:
                    spelt.append(body)
                    continue
                rest = body - {inner}
                spelt.extend(rest | inner_body for inner_body in gates[inner[1]].bodies)
                changed = True
                if len(spelt) > BATCH_MAX_BODIES:
                    return list(gates[gid].bodies)
            if not changed:
                break
            bodies = spelt
        return bodies

    def _or_code(self, gid: int) -> str:
        """The OR of a gate's bodies, its shifted tests worked out once per plan."""
        bodies = self.plan.gates[gid].bodies
        joins = self.plan.joins.get(gid)
        if joins is None and len(bodies) >= SHIFTED_JOIN_MIN:
            joins = self.plan.joins[gid] = join_groups(bodies)
        return or_code(bodies, self.var, self.ref, self.num, view=self.view, joins=joins)

    def _one_test(self, gate: Gate) -> bool:
        """Whether a gate is one test of input bits: a mask and at most one any-of, or
        a gate written inline that is one test, or its negation."""
        if gate.component or len(gate.bodies) != 1:
            return False
        body = gate.bodies[0]
        if len(body) == 1:
            ((kind, value),) = tuple(body)
            if kind in ("g", "!"):
                return value in self.inlined and self._one_test(self.plan.gates[value])
        kinds = [kind for kind, _ in body]
        return bool(kinds) and kinds.count("a") <= 1 and all(k in ("p", "n", "a") for k in kinds)

    def _monotone(self, gid: int, masks: list[int], expr: str) -> list[str]:
        """A wide OR of positive conjunctions, updated from its previous value.

        When it was false and the move changed one bit of it, turning the bit on,
        only the bodies holding that bit can have become true: they are looked up in
        a table by the bit. Otherwise the whole expression is evaluated.
        """
        support = 0
        table: dict[int, list[int]] = {}
        for mask in masks:
            support |= mask
            for low in bit_masks(mask):
                table.setdefault(low, []).append(mask)
        name = f"T{gid}"
        self.tables[name] = {bit: tuple(found) for bit, found in table.items()}
        g = f"g{gid}"
        v = self.var
        return [
            f"c = ch & {self.num(support)}",
            "if c:",
            f"    if c & (c - 1) or {g} or not {v} & c:",
            f"        {g} = {expr}",
            "    else:",
            f"        {g} = False",
            f"        for k in {name}[c]:",
            f"            if {v} & k == k:",
            f"                {g} = True",
            "                break",
        ]

    def _fixpoint(self, members: list[int]) -> list[str]:
        lines = [" = ".join(f"g{m}" for m in members) + " = False", "while True:"]
        lines.append("    _changed = False")
        for gid in members:
            expr = self._or_code(gid)
            lines.append(f"    if not g{gid} and ({expr}):")
            lines.append(f"        g{gid} = True")
            lines.append("        _changed = True")
        lines.append("    if not _changed:")
        lines.append("        break")
        return lines


MONOTONE_MIN = 8
"""Wide ORs of positive conjunctions with this many bodies are updated by table."""


def _positive_masks(bodies: list[Conj]) -> list[int] | None:
    """The bit mask of each body when every body only asks for bits to be on."""
    if len(bodies) < MONOTONE_MIN:
        return None
    masks = []
    for body in bodies:
        mask = 0
        for kind, value in body:
            if kind != "p":
                return None
            mask |= value
        if not mask:
            return None
        masks.append(mask)
    support = 0
    for mask in masks:
        support |= mask
    return masks if support & (support - 1) else None


def items_code(
    items: list[tuple[Conj | None, str]],
    var: str,
    ref: Ref,
    depth: int = 0,
    deadline: float = float("inf"),
    num: Number = str,
    view: ByteView | None = None,
) -> list[str]:
    """Actions under their conditions, nesting the literals that many share.

    Greedily, the literal that the most of the remaining conditions hold (among equals,
    a bit on before a bit off, then the first met, reading them in order) becomes an
    ``if`` over the actions whose conditions hold it, nested the same way; the rest
    follow unnested.
    """
    return _nested(
        [(sorted(c) if c is not None else [], a) for c, a in items],
        var,
        ref,
        depth,
        deadline,
        num,
        view,
    )


def _nested(
    items: list[tuple[list[Lit], str]],
    var: str,
    ref: Ref,
    depth: int,
    deadline: float,
    num: Number,
    view: ByteView | None,
) -> list[str]:
    """:func:`items_code` on conditions given as sorted literals, grouped by
    :func:`shared_groups`."""
    check_deadline(deadline, "generating code")
    lines: list[str] = []
    if depth < MAX_NESTING:
        groups, rest = shared_groups([lits for lits, _ in items])
    else:
        groups, rest = [], list(range(len(items)))
    for lit, members in groups:
        group = [([other for other in items[i][0] if other != lit], items[i][1]) for i in members]
        lines.append(f"if {conj_code(frozenset({lit}), var, ref, num, view)}:")
        lines.extend(_indent(_nested(group, var, ref, depth + 1, deadline, num, view)))
    for index in rest:
        lits, action = items[index]
        if lits:
            lines.append(f"if {conj_code(frozenset(lits), var, ref, num, view)}:")
            lines.append(f"    {action}")
        else:
            lines.append(action)
    return lines


_APPEND = re.compile(r"(\s*)([LG]\d+)\.append\((\d+)\)")
"""An action that adds a legal move's or a goal value's index to a role's list."""


def merged_appends(lines: list[str]) -> list[str]:
    """``lines`` with each run of unconditional appends to the same list at the same
    indent written as one ``extend`` of a constant tuple, in the same order:
    colonelBlotto's 67 moves a role that are always legal cost one call, not 67."""
    out: list[str] = []
    run: list[str] = []
    run_key: tuple[str, str] | None = None

    def flush() -> None:
        if run_key is None:
            return
        indent, name = run_key
        if len(run) == 1:
            out.append(f"{indent}{name}.append({run[0]})")
        else:
            out.append(f"{indent}{name}.extend(({', '.join(run)},))")
        run.clear()

    for line in lines:
        found = _APPEND.fullmatch(line)
        key = (found.group(1), found.group(2)) if found else None
        if key is None or key != run_key:
            flush()
            run_key = key
        if found is None:
            out.append(line)
        else:
            run.append(found.group(3))
    flush()
    return out


def shared_groups(conds: list[list[Lit]]) -> tuple[list[tuple[Lit, list[int]]], list[int]]:
    """The conditions (sorted literals) grouped greedily by a literal they share.

    The literal that the most of the remaining conditions hold (among equals, one that
    seldom holds (:func:`_skip_rank`) before one that mostly does, then the first met,
    reading them in order) takes those conditions (their indices, in order), until no
    literal is shared by two; the indices of the conditions left follow.

    The counts of the literals are kept up to date as conditions are taken into groups,
    not counted afresh for each group, and the next literal is found in a heap whose
    entries are brought up to date only when they come to the top (a count only falls
    and the first condition holding a literal only moves later, so an entry that is up
    to date at the top is the literal wanted).
    """
    alive = [True] * len(conds)
    groups: list[tuple[Lit, list[int]]] = []
    holders: dict[Lit, list[tuple[int, int]]] = {}
    """Where each literal occurs: the index of the condition, its place in it."""
    for index, lits in enumerate(conds):
        for place, lit in enumerate(lits):
            holders.setdefault(lit, []).append((index, place))
    counts = {lit: len(found) for lit, found in holders.items()}
    first = dict.fromkeys(holders, 0)
    heap = [
        (-len(found), _skip_rank(lit), found[0], lit)
        for lit, found in holders.items()
        if len(found) > 1
    ]
    heapq.heapify(heap)
    while heap:
        negative, rank, where, lit = heap[0]
        count = counts[lit]
        if count < 2:
            heapq.heappop(heap)
            continue
        found = holders[lit]
        at = first[lit]
        while not alive[found[at][0]]:
            at += 1
        first[lit] = at
        if -negative != count or where != found[at]:
            heapq.heapreplace(heap, (-count, rank, found[at], lit))
            continue
        members: list[int] = []
        for index, _ in found[at:]:
            if alive[index]:
                alive[index] = False
                for other in conds[index]:
                    counts[other] -= 1
                members.append(index)
        heapq.heappop(heap)
        groups.append((lit, members))
    return groups, [index for index in range(len(conds)) if alive[index]]


SKIP_RANKS = {"p": 0, "a": 0, "g": 1}
"""The rank of each kind of literal (any other, a bit or gate off: 2) for
:func:`_skip_rank`."""


def _skip_rank(lit: Lit) -> int:
    """How seldom a literal holds, as a rank (lower: holds more seldom), to break ties.

    A bit on (``p``, ``a``) holds in few states, as a state holds few of its fluents;
    a bit off (``n``) in most; a gate (``g``) may go either way. Among literals held by
    as many conditions, nesting under a rare one skips its whole group in most states,
    under a common one hardly ever (knightfight's legal moves, nested under the empty
    target square first, tested every knight square of the board for each)."""
    return SKIP_RANKS.get(lit[0], 2)


def generate(plan: Plan) -> str:
    """The module source (:func:`generate_module`), its wide numbers as placeholders."""
    return generate_module(plan).source


def generate_module(plan: Plan) -> Module:
    """The module: terminal, legal, status (unless too wide), goals, next and playout."""
    network = plan.network
    roles = list(range(len(network.roles)))
    out: list[str] = []
    size = 0
    max_source = plan.caps.max_source
    numbers = Numbers()
    num = numbers.text

    def function(name: str, args: str, body: list[str]) -> None:
        nonlocal size
        out.append(f"def {name}({args}):")
        out.extend(_indent(body))
        out.append("")
        # the module only grows: refuse it as soon as it passes the cap
        size += sum(len(line) + 5 for line in body)
        if size > max_source:
            raise _too_large(max_source)

    def conjs(values: list[Conj | None | bool]) -> list[Conj]:
        return [v for v in values if isinstance(v, frozenset)]

    def state_block(
        writer: GateWriter, roots: list[Conj], within: set[int] | None = None
    ) -> list[str]:
        pool = plan.state_gates if within is None else within
        needed = writer.closure(gate_refs(roots), pool)
        return writer.write(needed, Counter(gate_refs(roots)), regional=writer.incremental)

    def legal_lines(writer: GateWriter, role_list: list[int], sort: bool) -> list[str]:
        lines: list[str] = []
        for r in role_list:
            lines.append(f"L{r} = []")
            conds = plan.legal[r]
            if len(conds) >= EXPAND_MIN_OUTPUTS:
                conds = [(writer.expanded(c), j) for c, j in conds]
            items = [(c, f"L{r}.append({j})") for c, j in conds]
            lines.extend(
                merged_appends(
                    items_code(
                        items,
                        writer.var,
                        writer.ref,
                        deadline=plan.deadline,
                        num=num,
                        view=writer.view,
                    )
                )
            )
            if sort:
                lines.append(f"L{r}.sort()")
        return lines

    # terminal
    writer = GateWriter(plan, "s", incremental=False, num=num)
    roots = conjs([plan.terminal])
    lines = state_block(writer, roots)
    lines.append(f"return bool({_cond(plan.terminal, writer)})")
    function("terminal", "s", _viewed(writer, lines))

    # legal
    legal_roots = [c for r in roles for c, _ in plan.legal[r] if isinstance(c, frozenset)]
    writer = GateWriter(plan, "s", incremental=False, num=num)
    lines = state_block(writer, legal_roots) + legal_lines(writer, roles, sort=True)
    lines.append("return (" + "".join(f"L{r}, " for r in roles) + ")")
    function("legal", "s", _viewed(writer, lines))

    # terminal and legal together, updated from the gate values G of a state that
    # differs from s in the bits ch (ch = -1 computes every gate)
    status_writer = GateWriter(plan, "s", incremental=True, inline_tests=True, num=num)
    status_roots = conjs([plan.terminal]) + legal_roots
    needed = status_writer.closure(gate_refs(status_roots), plan.state_gates)
    lines = status_writer.write(needed, Counter(gate_refs(status_roots)), regional=True)
    with_status = len(status_writer.kept) <= MAX_STATUS_GATES
    if with_status:
        kept = "".join(f"g{gid}, " for gid in status_writer.kept)
        lines = ([f"{kept}= G"] if kept else []) + lines
        lines.append(f"T = bool({_cond(plan.terminal, status_writer)})")
        lines += legal_lines(status_writer, roles, sort=True)
        legal_tuple = "(" + "".join(f"L{r}, " for r in roles) + ")"
        lines.append(f"return T, {legal_tuple}, ({kept})")
        function("status", "s, ch, G", _viewed(status_writer, lines))
        out.append(f"STATUS_GATES = {len(status_writer.kept)}")
        out.append("")

    # goals (all gates, since goal atoms are not state gates of the playout)
    goal_roots = [c for r in roles for c, _ in plan.goals[r] if isinstance(c, frozenset)]
    writer = GateWriter(plan, "s", incremental=False, num=num)
    all_state = set(plan.gates) - plan.next_gates
    lines = state_block(writer, goal_roots, all_state)
    for r in roles:
        lines.append(f"G{r} = []")
        items = [(c, f"G{r}.append({k})") for c, k in plan.goals[r]]
        lines.extend(
            merged_appends(
                items_code(
                    items, "s", writer.ref, deadline=plan.deadline, num=num, view=writer.view
                )
            )
        )
        lines.append(f"G{r}.sort()")
    lines.append("return (" + "".join(f"G{r}, " for r in roles) + ")")
    function("goals", "s", _viewed(writer, lines))

    # next, given X = state | move bits and the move indices
    assert plan.next is not None
    tables = plan.next
    args = "X, " + ", ".join(f"m{r}" for r in roles)
    writer = GateWriter(plan, "X", incremental=False, num=num)
    general_roots = [body for body, _ in tables.general]
    lines = state_block(writer, general_roots, set(plan.gates))
    lines += _next_lines(plan, writer, roles, "X", f"(X & {num((1 << len(network.fluents)) - 1)})")
    function("next", args, _viewed(writer, lines + ["return n"]))

    # the playout loop
    body = ["ch = -1", "steps = 0", "while True:"]
    state_writer = GateWriter(plan, "s", incremental=True, num=num)
    roots = conjs([plan.terminal]) + legal_roots + general_roots
    # state gates that next-part gates read must stay variables: count them twice
    from_next = [
        v for g in plan.next_gates for v in gate_refs(plan.gates[g].bodies) if v in plan.state_gates
    ]
    needed = state_writer.closure(gate_refs(roots) + from_next, plan.state_gates)
    loop = state_writer.write(needed, Counter(gate_refs(roots) + from_next * 2), regional=True)
    loop.append(f"if {_cond(plan.terminal, state_writer)}:")
    loop.append("    return s, steps, True")
    loop.append("if steps >= limit:")
    loop.append("    return s, steps, False")
    loop += legal_lines(state_writer, roles, sort=False)
    loop.append("if " + " or ".join(f"not L{r}" for r in roles) + ":")
    loop.append("    return s, steps, False")
    for r in roles:
        loop.append(f"m{r} = L{r}[0] if len(L{r}) == 1 else L{r}[int(rnd() * len(L{r}))]")
    loop.append("if record is not None:")
    loop.append("    record.append((" + "".join(f"m{r}, " for r in roles) + "))")
    # the move bits are only needed when a rule body tests them outside the dispatch
    fluent_mask = (1 << len(network.fluents)) - 1
    move_literals = any(
        kind in ("p", "n", "a") and value & ~fluent_mask
        for gid in plan.next_gates
        for body in plan.gates[gid].bodies
        for kind, value in body
    ) or any(
        kind in ("p", "n", "a")
        and value & ~fluent_mask
        and (kind, value) != _move_key(body, fluent_mask)
        for body, _ in tables.general
        for kind, value in body
    )
    next_var = "X" if move_literals else "s"
    next_writer = GateWriter(plan, next_var, incremental=False, num=num)
    if next_var == "s":  # the loop's view of the state, read at the top of each step
        next_writer.view = state_writer.view
    # a state gate that only a next rule body reads is written where it is read
    next_writer.inlined.update(state_writer.inlined)
    next_code = next_writer.write(
        next_writer.closure(gate_refs(general_roots), plan.next_gates),
        Counter(gate_refs(general_roots)),
        regional=False,
    )
    next_code += _next_lines(plan, next_writer, roles, next_var, "s")
    if move_literals:
        loop.append("X = s | " + " | ".join(f"D{r}[m{r}]" for r in roles))
        next_code = _viewed(next_writer, next_code)
    loop = _viewed(state_writer, loop) + next_code
    loop += ["ch = s ^ n", "s = n", "steps += 1"]
    body += _indent(loop)
    function("playout", "s, rnd, limit, record", body)
    lookups = (status_writer.tables if with_status else {}) | state_writer.tables
    return Module("\n".join(out), numbers.values, lookups)


def _next_lines(
    plan: Plan, writer: GateWriter, roles: list[int], var: str, state: str
) -> list[str]:
    tables = plan.next
    assert tables is not None
    # per-move tables that are all zero are left out
    keep = [f"K{r}[m{r}]" for r in roles if any(tables.keep[r])]
    sets = [f"S{r}[m{r}]" for r in roles if any(tables.sets[r])]
    num = writer.num
    kept = [num(tables.persist)] if tables.persist else []
    kept += keep
    parts = []
    if kept:
        parts.append(f"{state} & ({' | '.join(kept)})" if len(kept) > 1 else f"{state} & {kept[0]}")
    parts += sets
    if tables.constant:
        parts.append(num(tables.constant))
    if tables.frame:
        kill = [f"Q{r}[m{r}]" for r in roles if any(tables.kill[r])]
        parts.append(
            f"{state} & {num(tables.frame)} & ~({' | '.join(kill)})"
            if kill
            else f"{state} & {num(tables.frame)}"
        )
    lines = [f"n = {' | '.join(parts) or '0'}"]
    # rule bodies that need one particular move: dispatch on the move index
    groups = _next_groups(plan)
    for r, moves in sorted(groups.by_move.items()):
        actions = {j: _set_actions(found, var, num) for j, found in moves.items()}
        lines += _dispatch(
            f"m{r}", sorted(moves), actions, var, writer.ref, plan.deadline, num, writer.view
        )
    others = _set_actions(groups.rest, var, num)
    lines += items_code(others, var, writer.ref, deadline=plan.deadline, num=num, view=writer.view)
    return lines


@dataclass
class _NextGroups:
    """The next-state rule bodies left to code, grouped (:func:`_group_sets`)."""

    by_move: dict[int, dict[int, _SetGroups]]
    """Per role and move: the bodies dispatched on it (without the move's literal)."""
    rest: _SetGroups
    """The bodies that test no move."""


def _next_groups(plan: Plan) -> _NextGroups:
    """The next-state rule bodies left to code, by the role and move they are dispatched
    on, grouped; worked out once per plan (:attr:`Plan.next_groups`) for the size count
    and the ``next`` and ``playout`` functions."""
    if plan.next_groups is not None:
        return cast(_NextGroups, plan.next_groups)
    assert plan.next is not None
    owner: dict[int, tuple[int, int]] = {}
    network = plan.network
    for r in range(len(network.roles)):
        for j in range(len(network.moves[r])):
            owner[network.does_bit(r, j)] = (r, j)
    by_move: dict[int, dict[int, list[tuple[Conj, int]]]] = {}
    rest: list[tuple[Conj, int]] = []
    fluent_mask = (1 << len(network.fluents)) - 1
    for body, bit in plan.next.general:
        key = _move_key(body, fluent_mask)
        if key is None:
            rest.append((body, bit))
            continue
        r, j = owner[key[1]]
        by_move.setdefault(r, {}).setdefault(j, []).append((body - {key}, bit))
    groups = _NextGroups(
        {
            r: {j: _group_sets(bodies, fluent_mask) for j, bodies in moves.items()}
            for r, moves in by_move.items()
        },
        _group_sets(rest, fluent_mask),
    )
    plan.next_groups = groups
    return groups


def _set_actions(groups: _SetGroups, var: str, num: Number) -> list[tuple[Conj | None, str]]:
    """The next-state rule bodies as actions under conditions; those that copy a fluent
    (or move it by the same number of bits) under the same other literals become one
    action, ``n |= X & M`` (shifted), instead of one ``if`` per fluent. A pit's count that
    stays as it is unless the pit is sown, a piece that keeps its square, a counter that
    goes up by one: kalaha5x2x3's next-state code tested and set 90 such fluents one by
    one under each move. So do the fluents set from any of several fluents at the same
    distances (:func:`_any_copy`); ``groups``: the bodies grouped so (:func:`_group_sets`)."""
    actions: list[tuple[Conj | None, str]] = [
        (body, f"n |= {num(bit)}") for body, bit in groups.one_by_one
    ]
    for (condition, distance), members in groups.copies.items():
        if len(members) == 1:
            source = members[0][2]
            actions.append((condition | {("p", source)}, f"n |= {num(_moved(source, distance))}"))
            continue
        mask = 0
        for _, _, source in members:
            mask |= source
        copied = f"{var} & {num(mask)}"
        if distance > 0:
            copied = f"({copied}) >> {distance}"
        elif distance < 0:
            copied = f"({copied}) << {-distance}"
        actions.append((condition or None, f"n |= {copied}"))
    for (condition, distances), any_members in groups.any_copies.items():
        targets = 0
        for _, bit in any_members:
            targets |= bit
        shifted = " | ".join(_shifted(var, distance) for distance in distances)
        actions.append((condition or None, f"n |= ({shifted}) & {num(targets)}"))
    return actions


CopyKey: TypeAlias = tuple[Conj, int]
"""The other literals of a body that copies a fluent, and the bits it moves down by."""
AnyCopyKey: TypeAlias = tuple[Conj, tuple[int, ...]]
"""The other literals of a body that sets a fluent from any of several, and their
distances (:func:`_any_copy`)."""


@dataclass
class _SetGroups:
    """Next-state rule bodies grouped by how :func:`_set_actions` codes them."""

    copies: dict[CopyKey, list[tuple[Conj, int, int]]]
    """Bodies that copy a fluent (body, bit set, fluent copied), by their other literals
    and distance."""
    any_copies: dict[AnyCopyKey, list[tuple[Conj, int]]]
    """Bodies that set a fluent from any of several, in groups large enough to shift."""
    one_by_one: list[tuple[Conj, int]]
    """The rest (body, bit set)."""


def _group_sets(bodies: list[tuple[Conj, int]], fluent_mask: int) -> _SetGroups:
    """Group next-state rule bodies into copies, any-copies and the rest. A body that
    holds two fluents or more besides its own (a cell lit while the power is on and a
    player stands on it) may copy either, the other joining its other literals: it
    copies the one whose group (other literals and distance) the most bodies share."""
    copies: dict[CopyKey, list[tuple[Conj, int, int]]] = {}
    any_copies: dict[AnyCopyKey, list[tuple[Conj, int]]] = {}
    one_by_one: list[tuple[Conj, int]] = []
    either: list[tuple[Conj, int, list[tuple[CopyKey, int]]]] = []
    for body, bit in bodies:
        if ("p", bit) in body:  # the fluent itself, kept
            key: CopyKey = (body - {("p", bit)}, 0)
            copies.setdefault(key, []).append((body, bit, bit))
            continue
        sources = [
            value
            for kind, value in body
            if kind == "p" and value & fluent_mask and not value & (value - 1)
        ]
        if len(sources) == 1:
            source = sources[0]
            key = (body - {("p", source)}, source.bit_length() - bit.bit_length())
            copies.setdefault(key, []).append((body, bit, source))
        elif sources:
            sources.sort()
            at = bit.bit_length()
            candidates = [
                ((body - {("p", source)}, source.bit_length() - at), source) for source in sources
            ]
            either.append((body, bit, candidates))
        else:
            any_copy = _any_copy(body, bit, fluent_mask)
            if any_copy is None:
                one_by_one.append((body, bit))
            else:
                any_copies.setdefault(any_copy, []).append((body, bit))
    if either:
        shared: dict[CopyKey, int] = {}
        for _, _, candidates in either:
            for key, _ in candidates:
                shared[key] = shared.get(key, 0) + 1
        for body, bit, candidates in either:
            best = -1
            for key, source in candidates:  # the first of the most shared, on a tie
                found = copies.get(key)
                score = shared[key] + (len(found) if found else 0)
                if score > best:
                    best, chosen, chosen_source = score, key, source
            copies.setdefault(chosen, []).append((body, bit, chosen_source))
    for any_key, members in list(any_copies.items()):
        if len(members) < ANY_COPY_MIN_PER_DISTANCE * len(any_key[1]):
            one_by_one += members
            del any_copies[any_key]
    return _SetGroups(copies, any_copies, one_by_one)


ANY_COPY_MIN_PER_DISTANCE = 2
"""Fluents set from any of the fluents at the same distances, under the same other
literals, per distance, from which they are set by shifting (:func:`_any_copy`): each
distance costs a shift and an OR of the whole state, each fluent set one by one a
test and an OR."""


def _any_copy(body: Conj, bit: int, fluent_mask: int) -> tuple[Conj, tuple[int, ...]] | None:
    """How a body sets ``bit`` when any of several fluents holds, if it does: its other
    literals, and the bits each of those fluents lies above ``bit`` (below, when
    negative). A cell visited stays visited, or is visited when a player is on it now:
    tron_10x10's 144 cells each tested three fluents at the same distances from it, one
    ``if`` per cell, where three shifts of the state set them all."""
    found: Lit | None = None
    for literal in body:
        kind, value = literal
        if kind == "a" and not value & ~fluent_mask:
            if found is not None:
                return None
            found = literal
    if found is None:
        return None
    at = bit.bit_length()
    value = found[1]
    distances = []
    while value:
        lowest = value & -value
        distances.append(lowest.bit_length() - at)
        value ^= lowest
    return body - {found}, tuple(distances)


def _shifted(var: str, distance: int) -> str:
    """``var`` moved down by ``distance`` bits (up, when negative)."""
    if distance > 0:
        return f"{var} >> {distance}"
    if distance < 0:
        return f"{var} << {-distance}"
    return var


def _moved(source: int, distance: int) -> int:
    return source >> distance if distance >= 0 else source << -distance


def _move_key(body: Conj, fluent_mask: int) -> Lit | None:
    """The move literal a next-state rule body is dispatched on, if any."""
    return next((lit for lit in sorted(body) if lit[0] == "p" and lit[1] & ~fluent_mask), None)


def _dispatch(
    index: str,
    keys: list[int],
    items: dict[int, list[tuple[Conj | None, str]]],
    var: str,
    ref: Ref,
    deadline: float,
    num: Number = str,
    view: ByteView | None = None,
) -> list[str]:
    """Run the items of the move ``index`` holds, by binary search over ``keys``."""
    if len(keys) <= 2:
        lines: list[str] = []
        for position, key in enumerate(keys):
            lines.append(f"{'if' if position == 0 else 'elif'} {index} == {key}:")
            code = items_code(items[key], var, ref, deadline=deadline, num=num, view=view)
            lines.extend(_indent(code or ["pass"]))
        return lines
    middle = len(keys) // 2
    return (
        [f"if {index} < {keys[middle]}:"]
        + _indent(_dispatch(index, keys[:middle], items, var, ref, deadline, num, view))
        + ["else:"]
        + _indent(_dispatch(index, keys[middle:], items, var, ref, deadline, num, view))
    )


def _cond(value: Conj | None | bool, writer: GateWriter) -> str:
    if value is None:
        return "True"
    if isinstance(value, bool):
        return str(value)
    return conj_code(value, writer.var, writer.ref, writer.num, writer.view)


def _viewed(writer: GateWriter, lines: list[str]) -> list[str]:
    """``lines`` after the assignment of the writer's byte view, when they read it."""
    view = writer.view
    return [view.line(), *lines] if view is not None and view.used else lines


def _too_large(max_source: int) -> GroundingTooLarge:
    return GroundingTooLarge(f"the generated code would exceed {max_source} characters")


def _digits(number: int) -> int:
    """The characters of a non-negative ``number`` as written (:class:`Numbers`), give
    or take one, without writing it out."""
    return int(number_chars(number.bit_length())) + 1


def next_body_chars(plan: Plan) -> int:
    """The characters of the next-state rule bodies left to code, each written out on
    its own: the numbers of its literals (the move it is dispatched on included) and the
    fluent it sets, and a few characters around each (counted, not generated); the
    fluents copied under the same literals (:func:`_set_actions`) count once, and so do
    the fluents set by shifting from any of the fluents at the same distances."""
    groups = _next_groups(plan)
    total = _written_chars(groups.rest)
    for r, moves in groups.by_move.items():
        for j, found in moves.items():
            move_chars = _digits(plan.network.does_bit(r, j)) + 4
            total += _written_chars(found, move_chars)
    return total


def _written_chars(groups: _SetGroups, extra: int = 0) -> int:
    """:func:`next_body_chars` of one move's bodies, ``extra`` more each."""
    written = [members[0][:2] for members in groups.copies.values()]
    written += [members[0] for members in groups.any_copies.values()]
    written += groups.one_by_one
    return sum(
        _digits(bit) + 10 + extra + sum(_digits(value) + 4 for _, value in body)
        for body, bit in written
    )


def check_predicted_size(plan: Plan) -> None:
    """Raise :class:`GroundingTooLarge` when the plan's next-state bodies are too many
    to fit the module into its cap (:data:`MAX_SOURCE` and :data:`MAX_NEXT_BODY_CHARS`
    at the default time limit, ``plan.caps``)."""
    if next_body_chars(plan) > plan.caps.max_next_body_chars:
        raise predicted_too_large(plan.caps.max_source)


def compile_plan(
    plan: Plan, deadline: float = float("inf"), caps: CodeCaps | None = None
) -> dict[str, Any]:
    """Generate, compile and run the module within ``caps`` (by default those of the
    default time limit); returns its namespace."""
    assert plan.next is not None
    plan.deadline = deadline
    plan.caps = caps or CodeCaps()
    check_predicted_size(plan)
    source, numbers, tables = generate_module(plan)
    check_deadline(deadline, "generating code")
    if len(source) > plan.caps.max_source:
        raise _too_large(plan.caps.max_source)
    code = with_numbers(compile(source, "<compiled game>", "exec"), numbers)
    return run_module(plan, source, code, tables)


def run_module(plan: Plan, source: str, code: CodeType, tables: dict[str, Any]) -> dict[str, Any]:
    """Run a game's compiled module (``code``, compiled from ``source`` with its
    numbers in place) with its ``tables``; returns its namespace, which keeps the three
    under ``__source__``, ``__code__`` and ``__tables__`` (so that the module can be run
    again elsewhere: :meth:`CompiledEngine.portable`)."""
    network = plan.network
    assert plan.next is not None
    namespace: dict[str, Any] = {
        "__source__": source,
        "__code__": code,
        "__tables__": tables,
        **tables,
    }
    for r in range(len(network.roles)):
        namespace[f"D{r}"] = tuple(network.does_bit(r, j) for j in range(len(network.moves[r])))
        namespace[f"K{r}"] = tuple(plan.next.keep[r])
        namespace[f"S{r}"] = tuple(plan.next.sets[r])
        namespace[f"Q{r}"] = tuple(plan.next.kill[r])
    exec(code, namespace)  # noqa: S102 - generated from parsed terms only
    return namespace


__all__ = [
    "Gate",
    "Module",
    "Numbers",
    "compile_plan",
    "generate",
    "generate_module",
    "run_module",
    "with_numbers",
]
