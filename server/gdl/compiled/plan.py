"""Plan the generated code: gates, regions of the state, and next-state tables.

A *gate* is a value the generated code keeps in a local variable: a derived atom of
the network, or a sub-expression worth sharing. Its bodies are conjunctions of
literals (:data:`Lit`). Every gate has a *support*: the state bits it depends on,
directly or through other gates.

Incremental evaluation rests on *regions*: small groups of state bits (a board of
nine-board tic-tac-toe, say) found by joining the bits that small gates read
together. A gate whose support lies in one region is recomputed only when a move
changed a bit of that region; the playout loop keeps every gate's value from one
step to the next.

The next state is computed mostly with masks: a fluent that persists
(``next(f) :- true(f)``), that a move sets, or that persists unless a move says
otherwise comes from per-move tables (``n = s & (PERSIST | K[m]) | S[m]``), also when
one rule body tests any of the fluent itself and some roles' moves (it is split bit by
bit); only the remaining rule bodies are generated as code.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

from .code_limits import MAX_MOVE_GATE_BODIES, CodeCaps
from .errors import check_deadline
from .network import Body, Network, Output, output_atom

Lit = tuple[str, int]
"""A literal: ``("p", bit)`` input bit on, ``("n", bit)`` input bit off,
``("a", mask)`` at least one bit of the mask on, ``("g", gate)`` gate true,
``("!", gate)`` gate false."""

Conj = frozenset[Lit]

Joins = tuple[list[tuple[tuple[int, ...], int]], list[Conj]]
"""Bodies tested by shifting, as (distances, lowest bits) groups, and the other bodies
(:func:`server.gdl.compiled.codegen.join_groups`)."""

REGION_MIN = 8
"""Regions grow up to max(REGION_MIN, 2 * sqrt(number of fluents)) bits."""

SPLIT_MIN = 4
"""An OR gate with at least this many bodies is split by region."""

CHUNK_MIN = 12
"""Bodies left over after splitting by region are cut into chunks from this many on."""

MAX_SPLIT_BITS = 16
"""A next-state body testing any of this many bits at most (the fluent itself, some
moves) is split into one body per bit, so that it fits the per-move tables."""

CHUNK_FACTOR = 2.5
"""A chunk holds about CHUNK_FACTOR * sqrt(bodies) bodies (measured on the benchmark
games: fewer, larger chunks cost fewer change tests than they recompute)."""


@dataclass
class Gate:
    """One value of the generated code."""

    id: int
    bodies: list[Conj]
    support: int = 0
    order: float = 0.0
    region: int = -1
    component: list[int] | None = None  # members of a recursive component

    @property
    def name(self) -> str:
        return f"g{self.id}"


@dataclass
class NextTables:
    """The mask part of the next state, per role and move."""

    persist: int
    constant: int
    keep: list[list[int]]
    sets: list[list[int]]
    general: list[tuple[Conj, int]]
    frame: int = 0
    kill: list[list[int]] = field(default_factory=list)


@dataclass
class Plan:
    """Everything the code generator needs."""

    network: Network
    gates: dict[int, Gate] = field(default_factory=dict)
    regions: list[int] = field(default_factory=list)
    legal: list[list[tuple[Conj | None, int]]] = field(default_factory=list)
    goals: list[list[tuple[Conj | None, int]]] = field(default_factory=list)
    terminal: Conj | None | bool = False
    next: NextTables | None = None
    next_gates: set[int] = field(default_factory=set)
    state_gates: set[int] = field(default_factory=set)
    deadline: float = float("inf")
    caps: CodeCaps = field(default_factory=CodeCaps)
    """The size caps of the generated code (set by :func:`compile_plan`)."""
    joins: dict[int, Joins] = field(default_factory=dict)
    """Each gate's bodies that are tested by shifting, as (distances, lowest bits) groups,
    and the rest, worked out once for all the functions that compute the gate (see
    :func:`server.gdl.compiled.codegen.join_groups`)."""
    next_groups: Any = None
    """The next-state rule bodies left to code, per role and move and those that test no
    move, grouped into copies, any-copies and the rest, worked out once for the ``next``
    and ``playout`` functions (see :func:`server.gdl.compiled.codegen._next_groups`)."""
    volatile: int = 0

    def uses(self, gate_ids: set[int]) -> Counter:
        """How often each gate is read by the bodies of the given gates."""
        count: Counter = Counter()
        for gid in gate_ids:
            for body in self.gates[gid].bodies:
                for kind, value in body:
                    if kind in ("g", "!"):
                        count[value] += 1
        return count


def gate_refs(conjs: list[Conj]) -> list[int]:
    """The gates that rule bodies read, positively or negated."""
    return [v for c in conjs for k, v in c if k in ("g", "!")]


def gates_needed(gates: dict[int, Gate], roots: list[int], within: set[int]) -> set[int]:
    """The gates of ``within`` that ``roots`` depend on, the roots included."""
    seen: set[int] = set()
    stack = [r for r in roots if r in within]
    while stack:
        gid = stack.pop()
        if gid in seen:
            continue
        seen.add(gid)
        stack.extend(v for v in gate_refs(gates[gid].bodies) if v in within and v not in seen)
    return seen


FEW_BITS = 16
"""Masks with up to this many one bits are split bit by bit; those with more through
their binary text. Each step of the first way costs as much as the integer is long, so
splitting a mask of 2,700 moves of brawl's 5,546 that way took most of planning its
next state; the text costs about what 16 to 32 such steps do."""


def bit_positions(mask: int) -> list[int]:
    """The positions of the one bits of ``mask`` (not negative), lowest first."""
    out: list[int] = []
    if mask.bit_count() <= FEW_BITS:
        while mask:
            low = mask & -mask
            out.append(low.bit_length() - 1)
            mask ^= low
        return out
    text = bin(mask)
    last = len(text) - 1  # the index of bit 0
    found = text.rfind("1", 2)
    while found >= 2:
        out.append(last - found)
        found = text.rfind("1", 2, found)
    return out


def bit_masks(mask: int) -> list[int]:
    """The one-bit masks of ``mask``, lowest first."""
    return [1 << position for position in bit_positions(mask)]


def body_literals(body: Body) -> Conj:
    """A network body as a set of literals."""
    lits: list[Lit] = [("p", bit) for bit in bit_masks(body.pos_in)]
    lits += [("n", bit) for bit in bit_masks(body.neg_in)]
    lits += [("a", mask) for mask in body.any_of]
    lits += [("g", atom) for atom in body.pos]
    lits += [("!", atom) for atom in body.neg]
    return frozenset(lits)


def merge_single_bits(bodies: list[Conj]) -> list[Conj]:
    """Bodies that differ only in one required input bit become one any-of test."""
    groups: dict[Conj, int] = {}
    rest: list[Conj] = []
    for body in bodies:
        singles = [lit for lit in body if lit[0] == "p"]
        if len(singles) == 1:
            key = body - {singles[0]}
            groups[key] = groups.get(key, 0) | singles[0][1]
        else:
            rest.append(body)
    for key, mask in groups.items():
        kind = "p" if mask & (mask - 1) == 0 else "a"
        rest.append(key | {(kind, mask)})
    return list(dict.fromkeys(rest))


def build_plan(network: Network, deadline: float = float("inf")) -> Plan:
    """Gates for every atom, outputs as literal sets, regions and next-state tables."""
    plan = Plan(network)
    fluent_mask = (1 << len(network.fluents)) - 1
    position = {atom: i for i, comp in enumerate(network.order) for atom in comp}
    for component in network.order:
        recursive = len(component) > 1 or component[0] in network.recursive
        for atom in component:
            bodies = merge_single_bits([body_literals(b) for b in network.rules[atom]])
            plan.gates[atom] = Gate(
                atom,
                bodies,
                order=position[atom],
                component=component if recursive else None,
            )
    next_id = max(plan.gates, default=0) + 1

    # supports, dependencies first
    for component in network.order:
        support = 0
        for atom in component:
            for body in plan.gates[atom].bodies:
                support |= _support(body, plan.gates, fluent_mask)
        for atom in component:
            plan.gates[atom].support = support

    def output(value: Output) -> Conj | None | bool:
        atom = output_atom(value)
        if atom is None:
            return None if value else False
        return frozenset({("g", atom)})

    plan.terminal = output(network.terminal)

    def item(value: Output) -> Conj | None:
        """An output the network never folds to false: None stands for always."""
        atom = output_atom(value)
        return None if atom is None else frozenset({("g", atom)})

    plan.legal = [[(item(v), j) for j, v in role_legal] for role_legal in network.legal]
    plan.goals = [
        [(item(v), k) for k, (_, v) in enumerate(role_goals)] for role_goals in network.goals
    ]

    # inline the gate of each legal output into the output itself
    def unfold(conj: Conj | None) -> list[Conj]:
        if conj is None:
            return [frozenset()]
        ((_, atom),) = tuple(conj)
        return list(plan.gates[atom].bodies)

    shared: dict[frozenset[Conj], int] = {}
    new_legal = []
    for role_legal in plan.legal:
        items: list[tuple[Conj | None, int]] = []
        for conj, j in role_legal:
            bodies = unfold(conj)
            if any(not b for b in bodies):
                items.append((None, j))
                continue
            common = frozenset.intersection(*bodies)
            residual = frozenset(b - common for b in bodies)
            if len(residual) == 1:
                items.append((common | next(iter(residual)), j))
                continue
            if frozenset() in residual:
                items.append((common, j))
                continue
            gid = shared.get(residual)
            if gid is None:
                gid = shared[residual] = next_id
                next_id += 1
                gate = Gate(gid, merge_single_bits(list(residual)))
                gate.support = 0
                gate.order = (
                    max(
                        (plan.gates[v].order for b in residual for k, v in b if k in ("g", "!")),
                        default=-1,
                    )
                    + 0.5
                )
                for body in gate.bodies:
                    gate.support |= _support(body, plan.gates, fluent_mask)
                plan.gates[gid] = gate
            items.append((common | {("g", gid)}, j))
        new_legal.append(items)
    plan.legal = new_legal

    check_deadline(deadline, "planning the generated code")
    _inline_move_gates(plan, fluent_mask, deadline)
    plan.next = _next_tables(network, plan, deadline)
    steady = plan.next.persist | plan.next.frame
    for role_keep in plan.next.keep:
        for mask in role_keep:
            steady |= mask
    plan.volatile = fluent_mask & ~steady
    _classify(plan)
    check_deadline(deadline, "planning the generated code")
    _regions(plan, fluent_mask)
    check_deadline(deadline, "planning the generated code")
    next_id = _split(plan, next_id)
    check_deadline(deadline, "planning the generated code")
    _drop_aliases(plan)
    return plan


def _support(body: Conj, gates: dict[int, Gate], fluent_mask: int) -> int:
    support = 0
    for kind, value in body:
        if kind in ("p", "n", "a"):
            support |= value & fluent_mask
        else:
            gate = gates.get(value)
            if gate is not None:
                support |= gate.support
    return support


def _next_tables(network: Network, plan: Plan, deadline: float) -> NextTables:
    roles = range(len(network.roles))
    role_masks = [((1 << len(network.moves[r])) - 1) << network.does_base[r] for r in roles]
    keep = [[0] * len(network.moves[r]) for r in roles]
    sets = [[0] * len(network.moves[r]) for r in roles]
    persist = constant = 0
    general: list[tuple[Conj, int]] = []

    def single_role(lits: Conj) -> int | None:
        """The role whose moves all these literals test, if they test only one."""
        found = None
        for _, value in lits:
            owner = [r for r in roles if value & role_masks[r]]
            if len(owner) != 1 or value & ~role_masks[owner[0]]:
                return None
            if found is not None and found != owner[0]:
                return None
            found = owner[0]
        return found

    def moves_matching(r: int, lits: Conj) -> list[int]:
        mask = role_masks[r]
        for kind, value in lits:
            if kind == "n":
                mask &= ~value
            else:
                mask &= value
        return bit_positions(mask >> network.does_base[r])

    def table_entry(body: Conj, bit: int) -> tuple[list[list[int]] | None, int, list[int]] | None:
        """Where a body of ``next(bit)`` goes in the tables: (None, -1, []) to persist,
        (keep or sets, role, moves) for one role's moves; None when it needs code."""
        if body == {("p", bit)}:
            return None, -1, []
        if any(kind not in ("p", "n", "a") for kind, _ in body):
            return None
        own = frozenset({("p", bit)}) if ("p", bit) in body else frozenset()
        rest = body - own
        owner = single_role(rest) if rest else None
        if owner is None:
            return None
        return (keep if own else sets), owner, moves_matching(owner, rest)

    def table_entries(
        body: Conj, bit: int
    ) -> list[tuple[list[list[int]] | None, int, list[int]]] | None:
        """The table entries of a body, splitting an any-of literal (the fluent itself
        or some roles' moves) into one body per bit; None when it needs code."""
        entry = table_entry(body, bit)
        if entry is not None:
            return [entry]
        wide = [lit for lit in body if lit[0] == "a"]
        if len(wide) != 1 or wide[0][1].bit_count() > MAX_SPLIT_BITS:
            return None
        rest = body - {wide[0]}
        entries = []
        for single in bit_masks(wide[0][1]):
            entry = table_entry(rest | {("p", single)}, bit)
            if entry is None:
                return None
            entries.append(entry)
        return entries

    kill = [[0] * len(network.moves[r]) for r in roles]
    frame = 0
    does_mask = 0
    for mask in role_masks:
        does_mask |= mask
    for k, value in network.next:
        check_deadline(deadline, "planning the next state")
        bit = 1 << k
        if value is True:
            constant |= bit
            continue
        atom = output_atom(value)
        assert atom is not None
        for body in plan.gates[atom].bodies:
            rest = body - {("p", bit)}
            if (
                len(rest) < len(body)
                and rest
                and all(kind == "n" and v & does_mask == v for kind, v in rest)
                and not frame & bit
            ):
                # persists unless some role plays one of these moves
                frame |= bit
                for _, v in rest:
                    for r in roles:
                        for move in bit_positions((v & role_masks[r]) >> network.does_base[r]):
                            kill[r][move] |= bit
                continue
            entries = table_entries(body, bit)
            if entries is None:
                general.append((body, bit))
                continue
            for table, owner, moves in entries:
                if table is None:
                    persist |= bit
                    continue
                for j in moves:
                    table[owner][j] |= bit
    return NextTables(persist, constant, keep, sets, general, frame, kill)


class _TooManyBodies(Exception):
    """Expanding a gate's move-only gates gives more bodies than the cap."""


def _inline_move_gates(plan: Plan, fluent_mask: int, deadline: float) -> None:
    """Replace gates that only test moves by the move literals themselves.

    ``(changed 1 2 3)`` defined as "some role plays (mark 2 3) on grid 1" becomes
    input literals in every body that reads it, so the next-state tables see
    "this fluent persists unless one of these moves is played".
    """
    network = plan.network

    known: dict[int, bool] = {}

    def move_only(gid: int) -> bool:
        found = known.get(gid)
        if found is None:
            gate = plan.gates.get(gid)
            found = known[gid] = (
                gate is not None
                and gid in network.does_dependent
                and not gate.component
                and len(gate.bodies) <= MAX_MOVE_GATE_BODIES
                and all(
                    kind in ("p", "a", "n") and not v & fluent_mask
                    for b in gate.bodies
                    for kind, v in b
                )
            )
        return found

    def replaceable(lit: Lit) -> bool:
        """A move-only gate, or the negation of one that tests single moves."""
        kind, gid = lit
        if kind == "g":
            return move_only(gid)
        return (
            kind == "!"
            and move_only(gid)
            and all(len(b) == 1 and next(iter(b))[0] in ("p", "a") for b in plan.gates[gid].bodies)
        )

    def expand(body: Conj, room: int) -> list[Conj]:
        """The body with its move-only gates replaced by their bodies; raises
        :class:`_TooManyBodies` as soon as more than ``room`` bodies come out (the
        expansion can grow exponentially; past the cap it is not used anyway)."""
        # the first literal, in sorted order, that can be replaced
        lit = min((lit for lit in body if lit[0] in ("g", "!") and replaceable(lit)), default=None)
        if lit is not None:
            kind, gid = lit
            if kind == "g":
                rest = body - {lit}
                out: list[Conj] = []
                for b in plan.gates[gid].bodies:
                    out += expand(rest | b, room - len(out))
                return out
            bits = [bit for b in plan.gates[gid].bodies for _, m in b for bit in bit_masks(m)]
            return expand((body - {lit}) | {("n", bit) for bit in bits}, room)
        if room < 1:
            raise _TooManyBodies
        return [body]

    in_order = [gid for component in network.order for gid in component]
    for gid in in_order:
        if gid not in network.does_dependent:
            continue
        check_deadline(deadline, "planning the next state")
        gate = plan.gates.get(gid)
        if gate is None or gate.component:
            continue
        cap = MAX_MOVE_GATE_BODIES * max(1, len(gate.bodies))
        bodies: list[Conj] = []
        try:
            for body in gate.bodies:
                bodies += expand(body, cap - len(bodies))
        except _TooManyBodies:
            continue
        if any(not b for b in bodies):
            bodies = [frozenset()]
        gate.bodies = list(dict.fromkeys(bodies))
        known.pop(gid, None)


def _classify(plan: Plan) -> None:
    """Which gates the state part and the next part need."""
    network = plan.network

    def closure(roots: list[int]) -> set[int]:
        seen: set[int] = set()
        stack = list(roots)
        while stack:
            gid = stack.pop()
            if gid in seen:
                continue
            seen.add(gid)
            for body in plan.gates[gid].bodies:
                stack.extend(v for k, v in body if k in ("g", "!") and v not in seen)
        return seen

    def gates_of(conjs: list[Conj | None | bool]) -> list[int]:
        return [v for c in conjs if isinstance(c, frozenset) for k, v in c if k in ("g", "!")]

    state_roots = gates_of([plan.terminal]) + gates_of(
        [c for items in plan.legal for c, _ in items]
    )
    assert plan.next is not None
    next_roots = gates_of([body for body, _ in plan.next.general])
    next_all = closure(next_roots)
    plan.next_gates = {g for g in next_all if g in network.does_dependent}
    plan.state_gates = closure(state_roots) | (next_all - plan.next_gates)


def _regions(plan: Plan, fluent_mask: int) -> None:
    """Group state bits into regions and place each state gate in one, if it fits."""
    n = len(plan.network.fluents)
    limit = max(REGION_MIN, int(2 * n**0.5), n // 2)
    parent = list(range(n))
    size = [1] * n

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    gates = sorted(
        (plan.gates[g] for g in plan.state_gates), key=lambda g: bin(g.support).count("1")
    )
    for gate in gates:
        bits = bit_positions(gate.support)
        if not bits or len(bits) > limit:
            continue
        roots = {find(b) for b in bits}
        if sum(size[r] for r in roots) > limit:
            continue
        first, *others = roots
        for other in others:
            parent[other] = first
            size[first] += size[other]
    masks: dict[int, int] = defaultdict(int)
    for b in range(n):
        masks[find(b)] |= 1 << b
    found = sorted((m for m in masks.values() if m & (m - 1)), key=lambda m: m & -m)
    # neighbouring small regions (a column of cells, say) share one test
    target = max(REGION_MIN, int(2 * n**0.5))
    merged: list[int] = []
    for mask in found:
        if merged and (merged[-1] | mask).bit_count() <= target:
            merged[-1] |= mask
        else:
            merged.append(mask)
    plan.regions = merged
    region_of = {m: i for i, m in enumerate(plan.regions)}
    by_bit: dict[int, int] = {}
    for mask, i in region_of.items():
        for bit in bit_masks(mask):
            by_bit[bit] = i
    for gid in plan.state_gates:
        gate = plan.gates[gid]
        if gate.support:
            low = gate.support & -gate.support
            i = by_bit.get(low, -1)
            if i >= 0 and gate.support & ~plan.regions[i] == 0:
                gate.region = i


def _split(plan: Plan, next_id: int) -> int:
    """Split wide OR gates so that a move recomputes only a part of them.

    The bodies lying in one region become a gate of that region; what is left of a
    very wide gate is cut into chunks of neighbouring bodies, each a gate with its
    own support (a move that touches none of a chunk's bits skips it).
    """
    fluent_mask = (1 << len(plan.network.fluents)) - 1

    def new_gate(bodies: list[Conj], order: float, region: int) -> Conj:
        nonlocal next_id
        sub = Gate(next_id, bodies, support=0, order=order, region=region)
        for body in bodies:
            sub.support |= _support(body, plan.gates, fluent_mask)
        plan.gates[next_id] = sub
        plan.state_gates.add(next_id)
        next_id += 1
        return frozenset({("g", sub.id)})

    for gid in sorted(plan.state_gates):
        gate = plan.gates[gid]
        if gate.region >= 0 or gate.component or len(gate.bodies) < SPLIT_MIN:
            continue
        by_region: dict[int, list[Conj]] = defaultdict(list)
        rest: list[tuple[int, Conj]] = []
        for body in gate.bodies:
            support = _support(body, plan.gates, fluent_mask)
            placed = -1
            for i, mask in enumerate(plan.regions):
                if support and support & ~mask == 0:
                    placed = i
                    break
            if placed >= 0:
                by_region[placed].append(body)
            else:
                rest.append((support, body))
        new_bodies: list[Conj] = []
        for region, bodies in sorted(by_region.items()):
            if len(bodies) == 1:
                new_bodies.append(bodies[0])
            else:
                new_bodies.append(new_gate(bodies, gate.order - 0.25, region))
        if len(rest) >= CHUNK_MIN:
            rest.sort(key=lambda item: ((item[0] & -item[0]).bit_length(), item[0]))
            size = max(2, int(CHUNK_FACTOR * len(rest) ** 0.5))
            for start in range(0, len(rest), size):
                chunk = [body for _, body in rest[start : start + size]]
                if len(chunk) == 1:
                    new_bodies.append(chunk[0])
                else:
                    new_bodies.append(new_gate(chunk, gate.order - 0.25, -1))
        else:
            new_bodies.extend(body for _, body in rest)
        gate.bodies = new_bodies
    return next_id


def _drop_aliases(plan: Plan) -> None:
    """A gate defined as exactly another gate, or with the same bodies as an earlier
    gate, is replaced by that gate everywhere (one pass, dependencies first)."""
    alias: dict[int, int] = {}
    seen: dict[frozenset[Conj], int] = {}

    def resolve(gid: int) -> int:
        visited = set()
        while gid in alias and gid not in visited:
            visited.add(gid)
            gid = alias[gid]
        return gid

    def fix(conj: Conj) -> Conj:
        for kind, v in conj:
            if kind in ("g", "!") and v in alias:
                break
        else:
            return conj
        return frozenset(
            (kind, resolve(v)) if kind in ("g", "!") else (kind, v) for kind, v in conj
        )

    for gate in sorted(plan.gates.values(), key=lambda g: (g.order, g.id)):
        if alias:
            gate.bodies = [fix(body) for body in gate.bodies]
        if gate.component:
            continue
        if len(gate.bodies) == 1 and len(gate.bodies[0]) == 1:
            ((kind, target),) = tuple(gate.bodies[0])
            if kind == "g":
                alias[gate.id] = target
                continue
        key = frozenset(gate.bodies)
        if key in seen:
            canonical = plan.gates[seen[key]]
            if canonical.region < 0:
                canonical.region = gate.region
            alias[gate.id] = canonical.id
        else:
            seen[key] = gate.id
    if not alias:
        return

    plan.legal = [[(None if c is None else fix(c), j) for c, j in items] for items in plan.legal]
    plan.goals = [[(None if c is None else fix(c), k) for c, k in items] for items in plan.goals]
    if isinstance(plan.terminal, frozenset):
        plan.terminal = fix(plan.terminal)
    assert plan.next is not None
    plan.next.general = [(fix(body), bit) for body, bit in plan.next.general]
    for gid in alias:
        target = resolve(gid)
        if gid in plan.state_gates:
            plan.state_gates.discard(gid)
            plan.state_gates.add(target)
        if gid in plan.next_gates:
            plan.next_gates.discard(gid)
            plan.next_gates.add(target)
