"""The size of the generated next-state code, predicted from the ground program.

:func:`server.gdl.compiled.codegen.next_body_chars` counts the characters of the
next-state rule bodies a plan leaves to code, but only once the network is built and
planned, which takes longer than grounding on the programs it refuses. This module
counts much the same from the ground rules right after does-grouping, before any name
is decoded: the bodies of the ``next`` atoms, less those the plan turns into tables
(the fluent itself, one role's moves, or the fluent unless some moves are played,
moves tested through atoms defined by moves alone), bodies on atoms without rules
folded, bodies that differ in one required input merged as the plan merges them, and
the bodies that copy their own fluent under the same other literals counted once (the
plan writes them as one mask operation; those that move a fluent to another cannot be
told before the fluents are sorted, so they count one by one: the prediction is then
over the plan's count, 4.8 times on alexChess, 400 times on mineClearingSmall).
The bit a literal tests is not known before the fluents are sorted by name, so each
counts the characters of the middle fluent or move as written (a placeholder when the
number is wide, :func:`server.gdl.compiled.code_limits.number_chars`).

A prediction, not a bound: 1.03 to 1.05 times the plan's count on kalaha5x2x3 and
kalaha6x2x4 (0.67 and 1.9 million characters), over it where fluents move (above), and
under it where the plan expands moves tested through atoms into many bodies (once 0.06
to 0.2 times on colonelBlottoVariant and four_way_battle, the latter then refused by
the plan's count).
"""

from __future__ import annotations

from collections.abc import Collection

from .code_limits import (
    MAX_MOVE_GATE_BODIES,
    MAX_NEXT_BODY_CHARS,
    CodeCaps,
    number_chars,
    predicted_too_large,
)
from .grounder import GroundProgram

MAX_PREDICTED_NEXT_CHARS = MAX_NEXT_BODY_CHARS
"""The prediction past which a program is refused (the plan's own count,
:data:`server.gdl.compiled.code_limits.MAX_NEXT_BODY_CHARS`, has the same cap). On the
corpus the games that compile count at most 0.55 million (smallest_4player, then the
checkers games at a 10 s budget 0.46 and colonelBlotto 0.28), the games refused count
0.77 million (alexChess) to 11 million (pancakes88 at a 10 s budget)."""


Grouped = dict[tuple[int, int, tuple[int, ...]], list[int]]
"""Does-grouped bodies: per head, role and other literals, the ``does`` atoms merged."""

Body = tuple[tuple[int, ...], bool]
"""The literals of a body and whether it also tests one of a role's moves (grouped)."""


class _MoveAtoms:
    """The bodies of the derived atoms that next-state bodies read, and which of them
    are defined by moves alone (through other such atoms too)."""

    def __init__(
        self,
        atoms: set[int],
        program: GroundProgram,
        does: Collection[int],
        singles: list[tuple[int, tuple[int, ...]]],
        grouped: Grouped,
    ) -> None:
        self.does = does
        self.fluents = program.choices - set(does)
        self.singles = singles
        self.grouped = grouped
        self.bodies: dict[int, list[Body]] = {}
        """The bodies of the atoms read (none: an atom without rules, never true)."""
        self.known: dict[int, bool] = {}
        frontier = atoms
        while frontier:  # one pass over the program per level of atoms on atoms
            self._read(frontier)
            frontier = {
                literal
                for atom in frontier
                if self._may_be_moves(atom)
                for literals, _ in self.bodies[atom]
                for literal in literals
                if literal not in does and literal not in self.bodies
            }

    def _read(self, atoms: set[int]) -> None:
        """Read the bodies of ``atoms`` (one pass over the program)."""
        bodies = self.bodies
        for atom in atoms:
            bodies[atom] = []
        for head, literals in self.singles:
            if head in atoms:
                bodies[head].append((literals, False))
        for head, _, rest in self.grouped:
            if head in atoms:
                bodies[head].append((rest, True))

    def _may_be_moves(self, atom: int) -> bool:
        """Whether the bodies of ``atom`` have the shape of one defined by moves: a
        few, with positive literals on no fluent."""
        bodies = self.bodies[atom]
        if not 0 < len(bodies) <= MAX_MOVE_GATE_BODIES:
            return False
        fluents = self.fluents
        for literals, _ in bodies:
            for literal in literals:
                if literal < 0 or literal in fluents:
                    return False
        return True

    def defined(self, atom: int) -> bool:
        """Whether a derived atom read has a rule."""
        return bool(self.bodies[atom])

    def moves_only(self, atom: int) -> bool:
        """Whether every body of ``atom`` tests only moves, or atoms that do."""
        found = self.known.get(atom)
        if found is not None:
            return found
        if atom not in self.bodies:
            return False
        self.known[atom] = False  # a cycle is not inlined
        does = self.does
        found = self._may_be_moves(atom) and all(
            literal in does or self.moves_only(literal)
            for literals, _ in self.bodies[atom]
            for literal in literals
        )
        self.known[atom] = found
        return found

    def one_move(self, atom: int) -> bool:
        """Whether every body of ``atom`` is one move (its negation is then a test
        that none of those moves is played)."""
        return self.moves_only(atom) and all(
            not literals if grouped else len(literals) == 1 and literals[0] in self.does
            for literals, grouped in self.bodies[atom]
        )


def predicted_next_chars(
    program: GroundProgram,
    does: Collection[int],
    ignored: Collection[int],
    singles: list[tuple[int, tuple[int, ...]]],
    grouped: Grouped,
) -> int:
    """The characters of the next-state rule bodies left to code, predicted from the
    ground program after does-grouping: ``does`` the ``does`` atoms of the roles,
    ``ignored`` those of other players (never played), ``singles`` the bodies not
    grouped, ``grouped`` the (head, role, other literals) of the grouped."""
    choices = program.choices
    own = {
        atom: fluent
        for atom, fluent in program.opened_by.items()
        if fluent not in does and fluent not in ignored
    }
    """Each ``next`` atom and the ``true`` atom of its fluent."""
    fluents = len(choices) - len(does) - len(ignored)
    moves = len(does)
    fluent_chars = number_chars(fluents / 2) + 5
    move_chars = number_chars(fluents + moves / 2) + 5
    head_chars = number_chars(fluents / 2) + 11

    next_bodies: list[tuple[int, tuple[int, ...], int]] = [
        (head, literals, 0) for head, literals in singles if head in own
    ]
    for (head, _, rest), members in grouped.items():
        if head in own:
            next_bodies.append((head, rest, len(members)))
    read = {
        abs(literal)
        for _, literals, _ in next_bodies
        for literal in literals
        if abs(literal) not in choices
    }
    atoms = _MoveAtoms(read, program, does, singles, grouped)
    never = {atom for atom in read if not atoms.defined(atom)}
    """Atoms without rules: never true."""
    on_moves = {atom for atom in read if atom not in never and atoms.moves_only(atom)}
    """Atoms defined by moves alone: the plan writes the moves in their place."""
    off_moves = {atom for atom in on_moves if atoms.one_move(atom)}
    """Atoms whose negation is a test that none of some moves is played."""
    total = 0.0
    merged: set[tuple[int, bool, frozenset[int]]] = set()
    copies: set[tuple[bool, frozenset[int]]] = set()
    for head, literals, moves_tested in next_bodies:
        fluent = own[head]
        in_table = True
        required = 1 if moves_tested == 1 else 0
        chars = head_chars + (move_chars if moves_tested else 0.0)
        dropped: list[int] = []
        for literal in literals:
            if literal > 0:
                if literal in choices:
                    if literal in does:
                        chars += move_chars
                    elif literal in ignored:
                        break
                    else:
                        chars += fluent_chars
                        in_table = in_table and literal == fluent
                    required += 1
                    single = literal
                    continue
                if literal in never:
                    break
                in_table = in_table and literal in on_moves
            else:
                atom = -literal
                if atom in ignored or atom in never:  # always holds
                    dropped.append(literal)
                    continue
                if atom in choices:
                    if atom in does:
                        chars += move_chars
                    else:
                        chars += fluent_chars
                        in_table = False
                    continue
                in_table = in_table and atom in off_moves
            chars += len(str(abs(literal))) + 4
        else:
            if in_table:
                continue
            if required == 1:
                # one required input bit: merged with the bodies alike but for that bit
                dropped.append(single if moves_tested != 1 else 0)
                key = (head, moves_tested > 1, frozenset(literals).difference(dropped))
                if key in merged:
                    continue
                merged.add(key)
            if fluent in literals:
                # the fluent copied: one action for all copied under the same literals
                copy = (moves_tested > 1, frozenset(literals).difference((fluent, *dropped)))
                if copy in copies:
                    continue
                copies.add(copy)
            total += chars
    return int(total)


def check_predicted_next_chars(
    program: GroundProgram,
    does: Collection[int],
    ignored: Collection[int],
    singles: list[tuple[int, tuple[int, ...]]],
    grouped: Grouped,
    caps: CodeCaps | None = None,
) -> None:
    """Raise :class:`GroundingTooLarge` when the prediction passes
    :data:`MAX_PREDICTED_NEXT_CHARS`, or the cap of ``caps`` when given."""
    predicted = predicted_next_chars(program, does, ignored, singles, grouped)
    if caps is None:
        caps = CodeCaps(max_next_body_chars=MAX_PREDICTED_NEXT_CHARS)
    if predicted > caps.max_next_body_chars:
        raise predicted_too_large(caps.max_source)
