"""The ground game as an optimised propositional network.

Inputs are bits: fluent ``k`` of the state is bit ``k``; move ``j`` of role ``r`` is
bit ``does_base[r] + j``. Every other atom is computed from rule bodies
(:class:`Body`) that test input bits with masks and other atoms by number.

Optimisations applied here, on the ground program clingo returns:

- constant folding: atoms proved true or impossible are removed from every body and
  rules that can never fire are dropped, repeatedly until nothing changes;
- dead-code removal: only atoms that ``legal``, ``goal``, ``terminal`` or ``next``
  need are kept;
- does-grouping: rule bodies that differ only in the move of one role merge into one
  set-membership test (one mask: "this role plays one of these moves").
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from itertools import chain
from typing import NamedTuple

from ..graphs import strongly_connected_components
from ..terms import RawTerm, sort_key
from .code_limits import CodeCaps
from .errors import CompileError, check_deadline
from .estimate import check_estimate, estimated_us
from .ground_size import check_predicted_next_chars
from .grounder import GroundProgram

TRUE_KEY = ("true", 1, True)
DOES_KEY = ("does", 2, True)
NEXT_KEY = ("next", 1, True)
LEGAL_KEY = ("legal", 2, True)
GOAL_KEY = ("goal", 2, True)
TERMINAL_KEY = ("terminal", 0, False)
INIT_KEY = ("init", 1, True)
ROLE_KEY = ("role", 1, True)


class Body(NamedTuple):
    """A conjunction: input bits that must be on/off, masks of which at least one
    bit must be on, and atoms that must be true/false."""

    pos_in: int = 0
    neg_in: int = 0
    any_of: tuple[int, ...] = ()
    pos: tuple[int, ...] = ()
    neg: tuple[int, ...] = ()

    def is_empty(self) -> bool:
        return not (self.pos_in or self.neg_in or self.any_of or self.pos or self.neg)


Output = object
"""An output is an atom number (an ``int``), or a constant (``True`` or ``False``) when
folding decided it: typed ``object``, as compiled code would take a ``bool`` typed
``int | bool`` for the number 0 or 1 (see :func:`output_atom`)."""


def output_atom(value: Output) -> int | None:
    """The atom number of an output, None for a constant."""
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return value


@dataclass
class Network:
    """The optimised ground network of one game."""

    roles: list[str]
    fluents: list[RawTerm]
    moves: list[list[RawTerm]]
    does_base: list[int]
    init_mask: int
    rules: dict[int, list[Body]]
    order: list[list[int]]
    recursive: set[int]
    does_dependent: set[int]
    legal: list[list[tuple[int, Output]]]
    goals: list[list[tuple[RawTerm, Output]]]
    terminal: Output
    next: list[tuple[int, Output]]
    stats: dict[str, int] = field(default_factory=dict)

    @property
    def n_inputs(self) -> int:
        return self.does_base[-1] + len(self.moves[-1]) if self.moves else len(self.fluents)

    def does_bit(self, role: int, move: int) -> int:
        return 1 << (self.does_base[role] + move)


def build_network(
    program: GroundProgram,
    roles: list[str],
    deadline: float = float("inf"),
    work_budget: float = float("inf"),
    caps: CodeCaps | None = None,
) -> Network:
    """Turn clingo's ground program into an optimised network, or raise CompileError.

    Raises :class:`NetworkOverBudget` while reading the program as soon as the
    estimated cost of compiling it (:func:`estimated_us`) passes ``work_budget``, and
    :class:`GroundingTooLarge` before the names of its atoms are decoded when the code
    of its next-state rules is predicted too large
    (:func:`server.gdl.compiled.ground_size.predicted_next_chars`).
    """
    role_index = {role: index for index, role in enumerate(roles)}
    roles_of_moves = program.does_roles()
    does_role = {
        atom: role_index[role]
        for atom, role in roles_of_moves.items()
        if isinstance(role, str) and role in role_index
    }
    # counted before the names are decoded, which takes longer on a wide program
    grouping = _group_bodies(program, does_role, deadline, work_budget)
    estimate = grouping.estimate
    check_predicted_next_chars(
        program,
        does_role.keys(),
        roles_of_moves.keys() - does_role.keys(),
        grouping.singles,
        grouping.grouped,
        caps,
    )
    program.read_names(deadline)
    names = program.names
    fluent_atoms: dict[RawTerm, int] = {}
    does_atoms: dict[tuple[RawTerm, RawTerm], int] = {}
    for atom, (key, args) in names.items():
        if key == TRUE_KEY:
            if atom not in program.choices:
                raise CompileError("a rule derives 'true'")
            fluent_atoms[args[0]] = atom
        elif key == DOES_KEY:
            if atom not in program.choices:
                raise CompileError("a rule derives 'does'")
            does_atoms[(args[0], args[1])] = atom
    if any(key == INIT_KEY for key, _ in names.values()):
        raise CompileError("'init' depends on something other than static facts")

    fluents = sorted(fluent_atoms, key=sort_key)
    moves: list[list[RawTerm]] = [[] for _ in roles]
    for role, move in does_atoms:
        if role in role_index:
            moves[role_index[role]].append(move)
    for role_moves in moves:
        role_moves.sort(key=sort_key)
    does_base = []
    offset = len(fluents)
    for role_moves in moves:
        does_base.append(offset)
        offset += len(role_moves)

    input_bit: dict[int, int] = {}
    for index, fluent in enumerate(fluents):
        input_bit[fluent_atoms[fluent]] = 1 << index
    for r, role_moves in enumerate(moves):
        for j, move in enumerate(role_moves):
            input_bit[does_atoms[(roles[r], move)]] = 1 << (does_base[r] + j)
    ignored_inputs = {atom for atom in does_atoms.values() if atom not in input_bit}

    raw_rules: dict[int, list[Body]] = defaultdict(list)
    for count, (head, literals) in enumerate(grouping.singles):
        if not count & 1023:
            check_deadline(deadline, "reading the ground program")
        if head in input_bit or head in ignored_inputs:
            raise CompileError("a rule derives 'true' or 'does'")
        parsed = _body(literals, input_bit, ignored_inputs)
        raw_rules[head]
        if parsed is not None:
            raw_rules[head].append(parsed)
    for (head, _, rest), members in grouping.grouped.items():
        if head in input_bit or head in ignored_inputs:
            raise CompileError("a rule derives 'true' or 'does'")
        parsed = _body(rest, input_bit, ignored_inputs)
        raw_rules[head]
        if parsed is None:
            continue
        mask = 0
        for atom in members:
            mask |= input_bit[atom]
        if mask & (mask - 1) == 0:
            parsed = parsed._replace(pos_in=parsed.pos_in | mask)
        else:
            parsed = parsed._replace(any_of=(mask,))
        if not parsed.pos_in & parsed.neg_in:
            raw_rules[head].append(parsed)

    check_deadline(deadline, "reading the ground program")
    values = _fold_constants(raw_rules, deadline)
    rules = {atom: bodies for atom, bodies in raw_rules.items() if atom not in values}

    def output(atom: int) -> Output:
        return values.get(atom, atom) if atom in raw_rules else False

    init_mask = 0
    fluent_index = {fluent: index for index, fluent in enumerate(fluents)}
    legal: list[list[tuple[int, Output]]] = [[] for _ in roles]
    goals: list[list[tuple[RawTerm, Output]]] = [[] for _ in roles]
    terminal: Output = False
    nexts: list[tuple[int, Output]] = []
    move_index = [{move: j for j, move in enumerate(role_moves)} for role_moves in moves]

    def add(key: tuple, args: tuple, value: Output) -> None:
        nonlocal init_mask, terminal
        if value is False:
            return
        if key == LEGAL_KEY and args[0] in role_index:
            r = role_index[args[0]]
            legal[r].append((move_index[r][args[1]], value))
        elif key == GOAL_KEY and args[0] in role_index:
            goals[role_index[args[0]]].append((args[1], value))
        elif key == TERMINAL_KEY:
            terminal = value
        elif key == NEXT_KEY:
            nexts.append((fluent_index[args[0]], value))
        elif key == INIT_KEY:
            if args[0] in fluent_index:
                init_mask |= 1 << fluent_index[args[0]]

    for key, args in program.facts:
        add(key, args, True)
    for atom, (key, args) in names.items():
        if key not in (TRUE_KEY, DOES_KEY):
            add(key, args, output(atom))
    # Compiled by mypyc, ``output`` and this function's variables hold each other, so what
    # they hold waits for the cyclic collector: emptied now that ``output`` is done with
    # it, ``raw_rules`` lets the bodies the network does not keep go by reference counting.
    raw_rules.clear()
    for role_legal in legal:
        role_legal.sort(key=lambda item: item[0])
    for role_goals in goals:
        role_goals.sort(key=lambda item: sort_key(item[0]))
    nexts.sort(key=lambda item: item[0])

    outputs = [value for role_legal in legal for _, value in role_legal]
    outputs += [value for role_goals in goals for _, value in role_goals]
    outputs += [terminal] + [value for _, value in nexts]
    needed = _needed(rules, [atom for atom in map(output_atom, outputs) if atom is not None])
    grouped_rules: dict[int, list[Body]] = {}
    for count, atom in enumerate(needed):
        # grouping is slow on wide states (masks of thousands of bits): watch the clock
        if not count & 63:
            check_deadline(deadline, "optimising the ground network")
        grouped_rules[atom] = _group_does(rules[atom], moves, does_base)
    rules = grouped_rules
    check_deadline(deadline, "optimising the ground network")
    order, recursive = _components(rules)

    does_mask = ((1 << sum(len(m) for m in moves)) - 1) << len(fluents)
    does_dependent: set[int] = set()
    for count, component in enumerate(order):
        if not count & 255:
            check_deadline(deadline, "optimising the ground network")
        for atom in component:
            for body in rules[atom]:
                if (body.pos_in | body.neg_in) & does_mask or any(
                    mask & does_mask for mask in body.any_of
                ):
                    does_dependent.add(atom)
                elif any(a in does_dependent for a in body.pos + body.neg):
                    does_dependent.add(atom)
        if recursive & set(component) and does_dependent & set(component):
            does_dependent.update(component)
    state_outputs = [value for role_legal in legal for _, value in role_legal]
    state_outputs += [value for role_goals in goals for _, value in role_goals] + [terminal]
    if any(value in does_dependent for value in state_outputs if not isinstance(value, bool)):
        raise CompileError("'legal', 'goal' or 'terminal' depends on 'does'")

    return Network(
        roles=roles,
        fluents=fluents,
        moves=moves,
        does_base=does_base,
        init_mask=init_mask,
        rules=rules,
        order=order,
        recursive=recursive,
        does_dependent=does_dependent,
        legal=legal,
        goals=goals,
        terminal=terminal,
        next=nexts,
        stats={
            "ground_rules": len(program.rules),
            "atoms": len(rules),
            "bodies": sum(len(bodies) for bodies in rules.values()),
            "fluents": len(fluents),
            "moves": sum(len(m) for m in moves),
            "estimated_us": estimate,
        },
    )


class _Grouping(NamedTuple):
    """The rule bodies after does-grouping, by atom numbers, and the cost estimate."""

    singles: list[tuple[int, tuple[int, ...]]]
    """The bodies not grouped, in the order of the program, each once (clingo emits
    some ground rules more than once, their literals in another order: a fifth to three
    quarters of the rules of crissrace and chineseCheckers4)."""
    grouped: dict[tuple[int, int, tuple[int, ...]], list[int]]
    """Per head, role and other literals: the ``does`` atoms of the merged bodies."""
    estimate: int


def _group_bodies(
    program: GroundProgram, does_role: dict[int, int], deadline: float, work_budget: float
) -> _Grouping:
    """Group the bodies that differ only in one role's move (``does_role``: the role
    index of each ``does`` atom), leave out repeated bodies and count the estimate, raising
    :class:`NetworkOverBudget` as soon as it passes ``work_budget``."""
    fixed_us = estimated_us(len(program.rules), len(program.choices), 0, 0)
    bodies = body_literals = 0
    singles: list[tuple[int, tuple[int, ...]]] = []
    grouped: dict[tuple[int, int, tuple[int, ...]], list[int]] = {}
    seen: set[tuple[int, ...]] = set()
    dead = underivable_literals(program)
    for count, (head, literals) in enumerate(program.rules):
        if not count & 1023:
            check_deadline(deadline, "reading the ground program")
            check_estimate(fixed_us + estimated_us(0, 0, bodies, body_literals), work_budget)
        if dead and not dead.isdisjoint(literals):
            if any(literal > 0 for literal in literals if literal in dead):
                continue  # the body can never hold
            literals = tuple(literal for literal in literals if literal not in dead)
        moves_in_body = [lit for lit in literals if lit in does_role]
        if len(moves_in_body) == 1 and len(literals) > 1:
            move = moves_in_body[0]
            rest = tuple(sorted(lit for lit in literals if lit != move))
            group = (head, does_role[move], rest)
            members = grouped.get(group)
            if members is None:
                grouped[group] = [move]
                bodies += 1
                body_literals += len(literals)
            else:
                members.append(move)
            continue
        if len(literals) > 1:
            key = (head, *sorted(literals))
            if key in seen:  # the same body again, its literals in another order
                continue
            seen.add(key)
        elif (head, *literals) in seen:
            continue
        else:
            seen.add((head, *literals))
        bodies += 1
        body_literals += len(literals)
        singles.append((head, literals))
    estimate = fixed_us + estimated_us(0, 0, bodies, body_literals)
    check_estimate(estimate, work_budget)
    return _Grouping(singles, grouped, estimate)


def underivable_literals(program: GroundProgram) -> set[int]:
    """The body literals on atoms that no rule derives and that are no input: such an
    atom is false, so its positive literal never holds and its negative one always does.

    Clingo emits them when an atom entered the grounder's domain but every instance of
    its rules was dropped: checkers' frame rule reads ``not single_jump_capture`` for
    each cell and move, most of which no jump can make, and those literals (856,000 in
    checkers-cylinder-mustjump) kept the bodies of different moves apart, so that
    does-grouping merged none of them."""
    derivable = {head for head, _ in program.rules}
    derivable.update(program.choices)
    literals = set(chain.from_iterable(body for _, body in program.rules))
    return {literal for literal in literals if abs(literal) not in derivable}


def _body(literals: tuple[int, ...], input_bit: dict[int, int], ignored: set[int]) -> Body | None:
    """A clingo rule body as a :class:`Body`; None when it can never hold."""
    pos_in = neg_in = 0
    pos: list[int] = []
    neg: list[int] = []
    for literal in literals:
        atom = abs(literal)
        bit = input_bit.get(atom)
        if bit is not None:
            if literal > 0:
                pos_in |= bit
            else:
                neg_in |= bit
        elif atom in ignored:
            if literal > 0:
                return None
        elif literal > 0:
            pos.append(atom)
        else:
            neg.append(atom)
    if pos_in & neg_in:
        return None
    return Body(pos_in, neg_in, (), tuple(sorted(set(pos))), tuple(sorted(set(neg))))


def _fold_constants(rules: dict[int, list[Body]], deadline: float) -> dict[int, bool]:
    """Decide every atom whose value does not depend on the inputs; simplify bodies."""
    values: dict[int, bool] = {}
    users: dict[int, set[int]] = defaultdict(set)
    for head, bodies in rules.items():
        for body in bodies:
            for atom in body.pos + body.neg:
                users[atom].add(head)
    pending = set(rules)
    for atom in list(users):
        if atom not in rules:
            values[atom] = False
    steps = 0
    while pending:
        steps += 1
        if steps & 4095 == 0:
            check_deadline(deadline, "constant folding")
        head = pending.pop()
        if head in values:
            continue
        simplified: list[Body] = []
        decided: bool | None = None
        for body in rules[head]:
            if any(values.get(a) is False for a in body.pos) or any(
                values.get(a) is True for a in body.neg
            ):
                continue
            if any(a in values for a in body.pos + body.neg):
                body = Body(
                    body.pos_in,
                    body.neg_in,
                    body.any_of,
                    tuple(a for a in body.pos if a not in values),
                    tuple(a for a in body.neg if a not in values),
                )
            if body.is_empty():
                decided = True
                break
            simplified.append(body)
        if decided is None and not simplified:
            decided = False
        if decided is None:
            rules[head] = simplified
            continue
        values[head] = decided
        pending.update(user for user in users[head] if user not in values)
    return values


def _needed(rules: dict[int, list[Body]], roots: list[int]) -> list[int]:
    """Every atom the roots depend on."""
    seen: set[int] = set()
    stack = [root for root in roots if root in rules]
    while stack:
        atom = stack.pop()
        if atom in seen:
            continue
        seen.add(atom)
        for body in rules[atom]:
            stack.extend(a for a in body.pos + body.neg if a not in seen)
    return sorted(seen)


def _group_does(bodies: list[Body], moves: list[list[RawTerm]], does_base: list[int]) -> list[Body]:
    """Merge bodies that differ only in the move of one role into one membership test."""
    bodies = list(dict.fromkeys(bodies))
    for r, role_moves in enumerate(moves):
        role_mask = ((1 << len(role_moves)) - 1) << does_base[r]
        groups: dict[Body, int] = {}
        rest: list[Body] = []
        for body in bodies:
            own = body.pos_in & role_mask
            if own and own & (own - 1) == 0 and not body.neg_in & role_mask:
                key = Body(body.pos_in & ~own, body.neg_in, body.any_of, body.pos, body.neg)
                groups[key] = groups.get(key, 0) | own
            else:
                rest.append(body)
        merged = []
        for key, mask in groups.items():
            if mask & (mask - 1) == 0:
                merged.append(Body(key.pos_in | mask, key.neg_in, key.any_of, key.pos, key.neg))
            else:
                any_of = tuple(sorted((*key.any_of, mask)))
                merged.append(Body(key.pos_in, key.neg_in, any_of, key.pos, key.neg))
        bodies = merged + rest
    return bodies


def _components(rules: dict[int, list[Body]]) -> tuple[list[list[int]], set[int]]:
    """Strongly connected components, dependencies first; checks stratification."""

    def successors(atom: int) -> list[int]:
        return sorted({a for body in rules[atom] for a in body.pos + body.neg if a in rules})

    order = [sorted(group) for group in strongly_connected_components(sorted(rules), successors)]

    recursive: set[int] = set()
    for component in order:
        members = set(component)
        cyclic = len(component) > 1 or any(
            component[0] in body.pos + body.neg for body in rules[component[0]]
        )
        if not cyclic:
            continue
        for atom in component:
            for body in rules[atom]:
                if members.intersection(body.neg):
                    raise CompileError("the rules are not stratified (recursion through 'not')")
        recursive |= members
    return order, recursive
