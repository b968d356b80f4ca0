"""Bulk random playouts: many states advanced at once.

The states of a batch are stored *bit-sliced*: fluent ``k`` is one Python ``int``
whose bit ``i`` says whether state ``i`` holds it, so one ``&`` evaluates a rule
body for every state of the batch. NumPy picks a uniformly random legal move for
every state at once, and turns the chosen moves back into bit slices.

A state that reaches a terminal state (or has a role without legal moves) is
counted, its goals are added up, and it starts again from the initial state.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from .plan import Conj, Plan, bit_positions, gate_refs, gates_needed

if TYPE_CHECKING:
    from .network import Network

CHAIN = 32
"""Operands joined in one flat chain at most: longer chains are grouped in parentheses,
so the nesting of generated expressions grows with the logarithm of their length (a flat
chain of thousands of operands is too deep for Python's compiler)."""


def _chain(operator: str, operands: list[str]) -> str:
    """``operands`` joined by ``operator``, grouped so that no chain exceeds ``CHAIN``."""
    while len(operands) > CHAIN:
        operands = [
            "(" + f" {operator} ".join(operands[start : start + CHAIN]) + ")"
            for start in range(0, len(operands), CHAIN)
        ]
    return f" {operator} ".join(operands)


class _Writer:
    """Bit-sliced expressions: ``&`` for and, ``|`` for or, ``ALL & ~x`` for not."""

    def __init__(self, plan: Plan) -> None:
        self.plan = plan
        network = plan.network
        self.n_fluents = len(network.fluents)
        self.owner: dict[int, tuple[int, int]] = {}
        for r, moves in enumerate(network.moves):
            for j in range(len(moves)):
                self.owner[network.does_base[r] + j] = (r, j)
        self.any_names: dict[int, str] = {}
        self.any_lines: list[str] = []

    def bit(self, index: int) -> str:
        if index < self.n_fluents:
            return f"F{index}"
        r, j = self.owner[index]
        return f"D{r}_{j}"

    def any_of(self, mask: int) -> str:
        name = self.any_names.get(mask)
        if name is None:
            name = self.any_names[mask] = f"A{len(self.any_names)}"
            self.any_lines.append(
                f"{name} = " + _chain("|", [self.bit(i) for i in bit_positions(mask)])
            )
        return name

    def conj(self, conj: Conj) -> str:
        pos: list[str] = []
        neg: list[str] = []
        for kind, value in sorted(conj):
            if kind == "p":
                pos += [self.bit(i) for i in bit_positions(value)]
            elif kind == "n":
                neg += [self.bit(i) for i in bit_positions(value)]
            elif kind == "a":
                pos.append(self.any_of(value))
            elif kind == "g":
                pos.append(f"g{value}")
            else:
                neg.append(f"g{value}")
        if not pos:
            pos = ["ALL"]
        return _chain("&", pos + [f"~{n}" for n in neg])

    def disj(self, bodies: list[Conj]) -> str:
        if not bodies:
            return "0"
        return _chain("|", [f"({self.conj(body)})" for body in bodies])


def generate_batch(plan: Plan) -> str:
    """Source of ``state_part(F)`` and ``next_part(F, D)`` over bit slices."""
    network = plan.network
    writer = _Writer(plan)
    roles = range(len(network.roles))
    gates = plan.gates
    goal_roots = [c for items in plan.goals for c, _ in items if c is not None]
    legal_roots = [c for items in plan.legal for c, _ in items if c is not None]
    roots = goal_roots + legal_roots
    if isinstance(plan.terminal, frozenset):
        roots.append(plan.terminal)
    state_pool = set(gates) - plan.next_gates
    assert plan.next is not None
    tables = plan.next
    next_roots = [body for body, _ in tables.general]

    def closure(conjs: list[Conj], pool: set[int]) -> list[int]:
        seen = gates_needed(gates, gate_refs(conjs), pool)
        return sorted(seen, key=lambda g: (gates[g].order, g))

    def gate_lines(order: list[int]) -> list[str]:
        lines: list[str] = []
        done: set[int] = set()
        for gid in order:
            if gid in done:
                continue
            gate = gates[gid]
            if gate.component:
                members = [m for m in gate.component if m in order]
                done.update(members)
                lines.append(" = ".join(f"g{m}" for m in members) + " = 0")
                lines.append("while True:")
                names = ", ".join(f"g{m}" for m in members)
                lines.append(f"    _old = ({names},)")
                for m in members:
                    lines.append(f"    g{m} = {writer.disj(gates[m].bodies)}")
                lines.append(f"    if ({names},) == _old:")
                lines.append("        break")
                continue
            done.add(gid)
            lines.append(f"g{gid} = {writer.disj(gate.bodies)}")
        return lines

    fluents = ", ".join(f"F{k}" for k in range(len(network.fluents)))
    out = ["def state_part(state, ALL):", f"    ({fluents},) = state" if fluents else "    pass"]
    body = gate_lines(closure(roots, state_pool))

    def cond(conj: Conj | None | bool) -> str:
        if conj is None or conj is True:
            return "ALL"
        if conj is False:
            return "0"
        return f"({writer.conj(conj)})"

    body.append(f"T = {cond(plan.terminal)}")
    for r in roles:
        by_move = ["0"] * len(network.moves[r])
        for c, j in plan.legal[r]:
            by_move[j] = cond(c)
        body.append(f"L{r} = [" + ", ".join(by_move) + "]")
        body.append(f"G{r} = [" + ", ".join(cond(c) for c, _ in plan.goals[r]) + "]")
    body.append("return T, (" + "".join(f"L{r}, " for r in roles) + "), (")
    body[-1] += "".join(f"G{r}, " for r in roles) + ")"
    out += ["    " + line for line in writer.any_lines + body]
    writer.any_lines, writer.any_names = [], {}  # the next part defines its own
    out.append("")

    # next part: D{r}_{j} are the slices of the states that play move j of role r
    moves = ", ".join(f"D{r}_{j}" for r in roles for j in range(len(network.moves[r])))
    out += [
        "def next_part(state, moves, ALL):",
        f"    ({fluents},) = state" if fluents else "    pass",
    ]
    out.append(f"    ({moves},) = moves" if moves else "    pass")
    body = gate_lines(closure(next_roots, set(gates)))
    # each table grouped by fluent once, rather than scanned once per fluent (quadratic:
    # mineClearingSmall's 11,358 fluents and 68,000 general bodies took 97 s)
    keep_of, kill_of, set_of = (
        _moves_by_fluent(t) for t in (tables.keep, tables.kill, tables.sets)
    )
    general_of: dict[int, list[Conj]] = {}
    for conj, conj_bit in tables.general:
        general_of.setdefault(conj_bit.bit_length() - 1, []).append(conj)
    played = _Played(writer, network)
    new = []
    for k in range(len(network.fluents)):
        bit = 1 << k
        parts = []
        if tables.constant & bit:
            parts.append("ALL")
        keep = keep_of.get(k, ())
        if tables.persist & bit:
            parts.append(f"F{k}")
        elif keep:
            parts.append(f"F{k} & (" + played.any_of(keep) + ")")
        if tables.frame & bit:
            killed = _chain("|", [f"D{r}_{j}" for r, j in kill_of.get(k, ())]) or "0"
            parts.append(f"F{k} & ~({killed})")
        parts += [f"D{r}_{j}" for r, j in set_of.get(k, ())]
        parts += [f"({writer.conj(b)})" for b in general_of.get(k, ())]
        new.append(_chain("|", parts) if parts else "0")
    body += [f"N{k} = {expr}" for k, expr in enumerate(new)]
    body.append("return [" + ", ".join(f"N{k}" for k in range(len(new))) + "]")
    out += ["    " + line for line in writer.any_lines + body]
    return "\n".join(out) + "\n"


class _Played:
    """Bit-sliced expressions of the states that play one of some moves.

    Each state plays at most one move per role, so the states playing one of most of a
    role's moves are those playing any of its moves (one named group) but none of the
    others: a fluent that every move but its own cell's keeps is written with the few
    moves that do not keep it (brawl: 5,546 moves; the batch module shrinks from 24 MB,
    which Python took 8 s to compile, to 1.4 MB)."""

    def __init__(self, writer: _Writer, network: Network) -> None:
        self.writer = writer
        self.network = network
        self.every = [
            ((1 << len(moves)) - 1) << network.does_base[r] for r, moves in enumerate(network.moves)
        ]
        """Per role, the input bits of all its moves."""

    def any_of(self, moves: Sequence[tuple[int, int]]) -> str:
        """The states playing one of ``moves`` (``(role, move index)``, in role order)."""
        chosen_of: dict[int, int] = {}
        for r, j in moves:
            chosen_of[r] = chosen_of.get(r, 0) | self.network.does_bit(r, j)
        bit = self.writer.bit
        terms = []
        for r, chosen in chosen_of.items():
            every = self.every[r]
            if 2 * chosen.bit_count() <= every.bit_count():
                terms += [bit(i) for i in bit_positions(chosen)]
            elif chosen == every:
                terms.append(self.writer.any_of(every))
            else:
                left = _chain("|", [bit(i) for i in bit_positions(every & ~chosen)])
                terms.append(f"({self.writer.any_of(every)} & ~({left}))")
        return _chain("|", terms)


def _moves_by_fluent(masks: list[list[int]]) -> dict[int, list[tuple[int, int]]]:
    """Per fluent index, the moves ``(role, move index)`` whose mask (one per move and
    role, a bit per fluent) holds it, in role and move order."""
    found: dict[int, list[tuple[int, int]]] = {}
    for r, role_masks in enumerate(masks):
        for j, mask in enumerate(role_masks):
            for k in bit_positions(mask):
                found.setdefault(k, []).append((r, j))
    return found


@dataclass
class BatchStats:
    """What a batch run produced."""

    transitions: int = 0
    finished: int = 0
    stuck: int = 0
    goal_sums: list[int] = field(default_factory=list)


class BatchRunner:
    """Advance ``size`` random playouts at once; see the module docstring."""

    def __init__(self, plan: Plan, size: int) -> None:
        if size < 1 or size % 8:
            raise ValueError("the batch size must be a positive multiple of 8")
        network = plan.network
        self.size = size
        self.all = (1 << size) - 1
        self.nbytes = size // 8
        self.move_counts = [len(m) for m in network.moves]
        namespace: dict[str, object] = {}
        self.source = generate_batch(plan)
        exec(compile(self.source, "<compiled game, batched>", "exec"), namespace)
        self._state_part: Callable = namespace["state_part"]  # type: ignore[assignment]
        self._next_part: Callable = namespace["next_part"]  # type: ignore[assignment]
        self.initial = [
            self.all if network.init_mask >> k & 1 else 0 for k in range(len(network.fluents))
        ]
        self.goal_values = []
        for role_goals in network.goals:
            values = []
            for value, _ in role_goals:
                values.append(int(value) if isinstance(value, str) and value.isdigit() else 0)
            self.goal_values.append(values)
        self.state = list(self.initial)
        self.stats = BatchStats(goal_sums=[0] * len(network.roles))

    def pack(self, states: list[int]) -> list[int]:
        """Compact states (at most ``size``; slot ``i`` holds state ``i``) as bit slices."""
        slices = [0] * len(self.initial)
        for i, state in enumerate(states):
            while state:
                low = state & -state
                slices[low.bit_length() - 1] |= 1 << i
                state ^= low
        return slices

    def unpack(self, slices: list[int]) -> list[int]:
        """The compact state of every slot."""
        states = [0] * self.size
        for k, column in enumerate(slices):
            while column:
                low = column & -column
                states[low.bit_length() - 1] |= 1 << k
                column ^= low
        return states

    def evaluate(self, slices: list[int]) -> tuple[int, tuple, tuple]:
        """Terminal slice, legal slices per role and move, goal slices per role and value."""
        return self._state_part(slices, self.all)

    def advance(self, slices: list[int], moves: list[int]) -> list[int]:
        """The next states, given one slice per move (role by role) of who plays it."""
        return self._next_part(slices, moves, self.all)

    def _slices_to_matrix(self, slices: list[int]) -> np.ndarray:
        raw = b"".join(s.to_bytes(self.nbytes, "little") for s in slices)
        matrix = np.frombuffer(raw, dtype=np.uint8).reshape(len(slices), self.nbytes)
        return np.unpackbits(matrix, axis=1, bitorder="little")

    def _matrix_to_slices(self, matrix: np.ndarray) -> list[int]:
        packed = np.packbits(matrix, axis=1, bitorder="little")
        return [int.from_bytes(row.tobytes(), "little") for row in packed]

    def _choose(self, legal: list[int], rng: np.random.Generator) -> tuple[list[int], int]:
        """One random legal move per state, as one slice per move; and the slice of
        the states without any legal move.

        States with exactly one legal move are settled with bit operations; NumPy
        picks among the moves of the others.
        """
        ones = twos = 0
        for where in legal:
            twos |= ones & where
            ones |= where
        single = ones & ~twos
        chosen = [where & single for where in legal]
        if twos:
            rows = [j for j, where in enumerate(legal) if where & twos]
            states = np.flatnonzero(self._slices_to_matrix([twos])[0])
            matrix = self._slices_to_matrix([legal[j] for j in rows])[:, states]
            state_at, row_at = np.nonzero(matrix.T)
            counts = np.bincount(state_at, minlength=len(states))
            starts = np.cumsum(counts) - counts
            picks = starts + (rng.random(len(states)) * counts).astype(np.int64)
            onehot = np.zeros((len(rows), self.size), dtype=np.uint8)
            onehot[row_at[picks], states] = 1
            for j, where in zip(rows, self._matrix_to_slices(onehot), strict=True):
                chosen[j] |= where
        return chosen, self.all & ~ones

    def run(self, steps: int, seed: int) -> int:
        """Advance every state ``steps`` times; returns the number of transitions."""
        rng = np.random.default_rng(seed)
        full = self.all
        state = self.state
        stats = self.stats
        total = 0
        for _ in range(steps):
            terminal, legal, goals = self._state_part(state, full)
            moves: list[int] = []
            stuck = 0
            for role_legal in legal:
                slices, empty = self._choose(role_legal, rng)
                moves += slices
                stuck |= empty
            stuck &= ~terminal
            done = terminal | stuck
            if terminal:
                stats.finished += terminal.bit_count()
                for r, role_goals in enumerate(goals):
                    for value, where in zip(self.goal_values[r], role_goals, strict=True):
                        stats.goal_sums[r] += value * (where & terminal).bit_count()
            if stuck:
                stats.stuck += stuck.bit_count()
            advanced = full & ~done
            total += advanced.bit_count()
            state = self._next_part(state, moves, full)
            if done:
                keep = full & ~done
                state = [(s & keep) | (i & done) for s, i in zip(state, self.initial, strict=True)]
        self.state = state
        stats.transitions += total
        return total
