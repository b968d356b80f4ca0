"""Generate straight-line Python from a :class:`Network`.

The state is an ``int`` whose bit ``k`` is fluent ``k``; during ``next`` the input
``X`` is the state with the bits of the joint move added. Each derived atom becomes
a local variable computed in dependency order, or, when it is used only once, an
expression inlined where it is used (so ``and``/``or`` short-circuit over it). A
recursive component becomes a loop that runs until no atom changes.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from .network import Body, Network, Output

Ref = Callable[[int], str]
"""Gives the expression that reads an atom."""

MAX_INLINE_DEPTH = 30
"""Deeper expressions are stored in variables (CPython limits nesting)."""


class Emitter:
    """Writes code that computes atoms of one network."""

    def __init__(self, network: Network) -> None:
        self.network = network
        self.position: dict[int, int] = {}
        self.component: dict[int, list[int]] = {}
        for index, component in enumerate(network.order):
            for atom in component:
                self.position[atom] = index
                self.component[atom] = component

    def compute(
        self, roots: list[int], var: str, available: set[int], root_uses: Counter
    ) -> tuple[list[str], dict[int, str], set[int]]:
        """Lines computing ``roots``; returns the lines, an expression for each root and
        the atoms left in variables (available to later blocks)."""
        rules = self.network.rules
        needed: set[int] = set()
        stack = [root for root in roots if root not in available]
        while stack:
            atom = stack.pop()
            if atom in needed or atom in available:
                continue
            needed.add(atom)
            for body in rules[atom]:
                stack.extend(a for a in body.pos + body.neg if a not in needed)
        uses: Counter = Counter(root_uses)
        for atom in needed:
            for body in rules[atom]:
                for a in body.pos + body.neg:
                    uses[a] += 1
        exprs: dict[int, str] = {}
        depth: dict[int, int] = {}
        assigned = set(available)
        lines: list[str] = []

        def ref(atom: int) -> str:
            if atom in exprs:
                return "(" + exprs[atom] + ")"
            return f"a{atom}"

        def body_depth(bodies: list[Body]) -> int:
            return 1 + max(
                (depth.get(a, 0) for body in bodies for a in body.pos + body.neg), default=0
            )

        done: set[int] = set()
        for atom in sorted(needed, key=self.position.__getitem__):
            if atom in done:
                continue
            if atom in self.network.recursive:
                members = [a for a in self.component[atom] if a in needed]
                lines.extend(self._fixpoint(members, var, ref))
                assigned.update(members)
                done.update(members)
                continue
            done.add(atom)
            expr = self.atom_expr(rules[atom], var, ref)
            level = body_depth(rules[atom])
            if uses[atom] == 1 and level < MAX_INLINE_DEPTH:
                exprs[atom] = expr
                depth[atom] = level
            else:
                lines.append(f"a{atom} = {expr}")
                assigned.add(atom)
        return lines, {root: ref(root) for root in roots}, assigned

    def atom_expr(self, bodies: list[Body], var: str, ref: Ref) -> str:
        if not bodies:
            return "False"
        return " or ".join(self.body_expr(body, var, ref) for body in bodies)

    @staticmethod
    def body_expr(body: Body, var: str, ref: Ref) -> str:
        parts = []
        mask = body.pos_in | body.neg_in
        if mask:
            if not body.neg_in and mask & (mask - 1) == 0:
                parts.append(f"{var} & {mask}")
            elif not body.pos_in:
                parts.append(f"not {var} & {mask}")
            else:
                parts.append(f"{var} & {mask} == {body.pos_in}")
        parts.extend(f"{var} & {any_mask}" for any_mask in body.any_of)
        parts.extend(ref(a) for a in body.pos)
        parts.extend("not " + ref(a) for a in body.neg)
        return " and ".join(parts) if parts else "True"

    def _fixpoint(self, members: list[int], var: str, ref: Ref) -> list[str]:
        rules = self.network.rules
        lines = [" = ".join(f"a{a}" for a in members) + " = False", "while True:"]
        lines.append("    _changed = False")
        for atom in members:
            expr = self.atom_expr(rules[atom], var, ref)
            lines.append(f"    if not a{atom} and ({expr}):")
            lines.append(f"        a{atom} = True")
            lines.append("        _changed = True")
        lines.append("    if not _changed:")
        lines.append("        break")
        return lines


def _atoms(values: list[Output]) -> list[int]:
    return [v for v in values if not isinstance(v, bool)]


def _indent(lines: list[str], level: int) -> list[str]:
    pad = "    " * level
    return [pad + line for line in lines]


def generate(network: Network) -> str:
    """The source of a module defining terminal, legal, legal_<r>, goals, next, playout."""
    emitter = Emitter(network)
    out: list[str] = []
    roles = range(len(network.roles))

    def function(name: str, args: str, body: list[str]) -> None:
        out.append(f"def {name}({args}):")
        out.extend(_indent(body, 1))
        out.append("")

    # terminal
    lines, exprs, _ = emitter.compute(
        _atoms([network.terminal]), "s", set(), Counter(_atoms([network.terminal]))
    )
    function("terminal", "s", lines + [f"return bool({_output(network.terminal, exprs)})"])

    # legal (all roles, and one role at a time)
    def legal_lines(
        role_list: list[int], var: str, available: set[int]
    ) -> tuple[list[str], set[int]]:
        outputs = [v for r in role_list for _, v in network.legal[r]]
        lines, exprs, assigned = emitter.compute(
            _atoms(outputs), var, available, Counter(_atoms(outputs))
        )
        for r in role_list:
            lines.append(f"L{r} = []")
            for j, value in network.legal[r]:
                if value is True:
                    lines.append(f"L{r}.append({j})")
                else:
                    lines.append(f"if {exprs[value]}:")
                    lines.append(f"    L{r}.append({j})")
        return lines, assigned

    lines, _ = legal_lines(list(roles), "s", set())
    function("legal", "s", lines + ["return (" + "".join(f"L{r}, " for r in roles) + ")"])
    for r in roles:
        lines, _ = legal_lines([r], "s", set())
        function(f"legal_{r}", "s", lines + [f"return L{r}"])

    # goals: indices into network.goals[r]
    outputs = [v for r in roles for _, v in network.goals[r]]
    lines, exprs, _ = emitter.compute(_atoms(outputs), "s", set(), Counter(_atoms(outputs)))
    for r in roles:
        lines.append(f"G{r} = []")
        for k, (_, value) in enumerate(network.goals[r]):
            if value is True:
                lines.append(f"G{r}.append({k})")
            else:
                lines.append(f"if {exprs[value]}:")
                lines.append(f"    G{r}.append({k})")
    function("goals", "s", lines + ["return (" + "".join(f"G{r}, " for r in roles) + ")"])

    # next
    def next_lines(var: str, available: set[int]) -> list[str]:
        outputs = [v for _, v in network.next]
        lines, exprs, assigned = emitter.compute(
            _atoms(outputs), var, available, Counter(_atoms(outputs))
        )
        constant = sum(1 << k for k, value in network.next if value is True)
        lines.append(f"n = {constant}")
        for k, value in network.next:
            if value is not True:
                lines.append(f"if {exprs[value]}:")
                lines.append(f"    n |= {1 << k}")
        return lines

    function("next", "X", next_lines("X", set()) + ["return n"])

    # playout: the whole loop in one function, nothing recomputed within a step
    body = ["steps = 0", "while steps < limit:"]
    t_lines, t_exprs, t_assigned = emitter.compute(
        _atoms([network.terminal]), "s", set(), Counter(_atoms([network.terminal]))
    )
    body += _indent(t_lines, 1)
    body.append(f"    if {_output(network.terminal, t_exprs)}:")
    body.append("        return s, steps, True")
    l_lines, l_assigned = legal_lines(list(roles), "s", t_assigned)
    body += _indent(l_lines, 1)
    body.append("    if " + " or ".join(f"not L{r}" for r in roles) + ":")
    body.append("        return s, steps, False")
    picks = " | ".join(f"D{r}[L{r}[int(rnd() * len(L{r}))]]" for r in roles)
    body.append(f"    X = s | {picks}")
    body += _indent(next_lines("X", l_assigned), 1)
    body += ["    s = n", "    steps += 1", "return s, steps, False"]
    function("playout", "s, rnd, limit", body)
    return "\n".join(out)


def _output(value: Output, exprs: dict[int, str]) -> str:
    if isinstance(value, bool):
        return str(value)
    return exprs[value]


def compile_network(network: Network) -> dict[str, object]:
    """Generate, compile and run the module; returns its namespace."""
    source = generate(network)
    namespace: dict[str, object] = {
        f"D{r}": tuple(network.does_bit(r, j) for j in range(len(network.moves[r])))
        for r in range(len(network.roles))
    }
    namespace["__source__"] = source
    exec(compile(source, "<compiled game>", "exec"), namespace)
    return namespace
