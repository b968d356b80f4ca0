"""Decoupled UCT over a transposition table, with MCTS-Solver back-ups.

Every node keeps, for each role, the visit count and the summed reward of each of
that role's legal moves; each role picks its own move by UCB1 on its own statistics
(decoupled UCT), so simultaneous moves and any number of roles need nothing special.
Nodes are shared by state (a transposition table), so a state reached by two move
orders is searched once.

The solver proves wins and losses exactly where the tree reaches terminal states: a
node where at most one role has a choice is solved when a move of that role leads to a
solved child worth the most that role can get, or when every move leads to a solved
child worth the least. Selection skips solved children in favour of their exact value,
so proven wins are taken and proven losses avoided. Outcomes in between (draws) are not
propagated: a proven draw would stop the search from finding the lines where a
fallible opponent goes wrong.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Hashable, Sequence
from typing import Any

from .model import Goals, Model

MAX_DEPTH = 400
"""Deeper descents (possible where states repeat) stop and play out from there."""

WIN = 1.0 - 1e-9
"""A reward at least this high is the best a role can get."""

LOSS = 1e-9
"""A reward at most this low is the worst a role can get."""


class Node:
    """One state in the tree."""

    __slots__ = (
        "key",
        "legal",
        "n",
        "visits",
        "totals",
        "children",
        "solved",
        "movers",
        "proven",
    )

    def __init__(self, key: Hashable, model: Model) -> None:
        self.key = key
        self.n = 0
        self.children: dict[tuple[int, ...], Node] = {}
        self.solved: Goals | None = None
        self.legal: tuple[Sequence[Any], ...] = ()
        self.visits: list[list[int]] = []
        self.totals: list[list[float]] = []
        self.movers: list[int] = []
        self.proven: dict[int, Goals] = {}
        """The exact value of each move of the one mover whose child is solved."""
        if model.terminal(key):
            self.solved = model.goals(key)
            return
        legal = model.legal(key)
        if not all(legal):  # a role without a legal move: the game cannot go on
            self.solved = model.goals(key)
            return
        self.legal = legal
        self.visits = [[0] * len(moves) for moves in legal]
        self.totals = [[0.0] * len(moves) for moves in legal]
        self.movers = [r for r, moves in enumerate(legal) if len(moves) > 1]

    @property
    def terminal(self) -> bool:
        return not self.legal


class Search:
    """A search tree for one match, kept from step to step."""

    def __init__(
        self,
        model: Model,
        rng: random.Random,
        *,
        exploration: float = 0.7,
        solver: bool = True,
        max_nodes: int = 500_000,
    ) -> None:
        self.model = model
        self.rng = rng
        self.exploration = exploration
        self.solver = solver
        self.max_nodes = max_nodes
        self.table: dict[Hashable, Node] = {}
        self.root: Node | None = None
        self.iterations = 0

    # -- the root --------------------------------------------------------------------

    def set_root(self, key: Hashable) -> Node:
        """Move the root to ``key``, keeping what was learnt below it and dropping the rest."""
        root = self.table.get(key)
        if root is None:
            root = self._node(key)
        if root is not self.root:
            self.root = root
            self._prune(root)
        return root

    def _prune(self, root: Node) -> None:
        """Keep only the nodes reachable from ``root``."""
        kept: dict[Hashable, Node] = {root.key: root}
        stack = [root]
        while stack:
            for child in stack.pop().children.values():
                if child.key not in kept:
                    kept[child.key] = child
                    stack.append(child)
        self.table = kept

    def _node(self, key: Hashable) -> Node:
        node = Node(key, self.model)
        self.table[key] = node
        return node

    # -- searching -------------------------------------------------------------------

    @property
    def finished(self) -> bool:
        """True when the root's value is proven, so more search cannot change the move."""
        return self.root is not None and self.root.solved is not None

    def run(self, *, iterations: int | None = None, stop_at: float = math.inf) -> int:
        """Search from the root for ``iterations`` or until ``stop_at`` (monotonic)."""
        assert self.root is not None, "set_root first"
        done = 0
        while (iterations is None or done < iterations) and time.monotonic() < stop_at:
            if self.finished and iterations is None:
                break  # nothing left to learn at the root
            if self.iterate(stop_at):
                done += 1
        return done

    def iterate(self, stop_at: float = math.inf) -> bool:
        """One selection, expansion, playout and back-up; False if cut off by ``stop_at``."""
        root = self.root
        assert root is not None
        node = root
        path: list[tuple[Node, tuple[int, ...]]] = []
        reward: Goals | None
        leaf: Node | None = node
        while True:
            if node.solved is not None:
                reward = node.solved
                break
            if len(path) >= MAX_DEPTH:
                reward = self.model.playout(node.key, self.rng, stop_at)
                break
            joint = self._select(node)
            path.append((node, joint))
            child = node.children.get(joint)
            if child is None:
                key = self.model.next(node.key, [node.legal[r][j] for r, j in enumerate(joint)])
                child = self.table.get(key)
                if child is None:
                    if len(self.table) >= self.max_nodes:  # full: play out without storing
                        reward = self._leaf_value(key, stop_at)
                        leaf = None
                        break
                    child = self._node(key)
                node.children[joint] = child
            if child.n == 0:
                child.n = 1
                leaf = child
                reward = child.solved or self.model.playout(child.key, self.rng, stop_at)
                break
            node = child
            leaf = node
        if reward is None:
            return False
        self._back_up(path, leaf, reward)
        self.iterations += 1
        return True

    def _leaf_value(self, key: Hashable, stop_at: float) -> Goals | None:
        if self.model.terminal(key):
            return self.model.goals(key)
        return self.model.playout(key, self.rng, stop_at)

    def _select(self, node: Node) -> tuple[int, ...]:
        joint = [0] * len(node.legal)
        c_log = self.exploration * math.sqrt(math.log(node.n + 1))
        proven = node.proven
        for r in node.movers:
            visits = node.visits[r]
            if 0 in visits:  # try every move once, in random order
                fresh = [j for j, count in enumerate(visits) if count == 0 and j not in proven]
                if fresh:
                    joint[r] = self.rng.choice(fresh)
                    continue
            totals = node.totals[r]
            best = -math.inf
            choice = 0
            for j, count in enumerate(visits):
                if proven and j in proven:
                    value = proven[j][r]
                    if value >= WIN:
                        choice = j
                        break
                else:
                    value = totals[j] / count + c_log / math.sqrt(count)
                if value > best:
                    best, choice = value, j
            joint[r] = choice
        return tuple(joint)

    def _back_up(
        self, path: list[tuple[Node, tuple[int, ...]]], leaf: Node | None, reward: Goals
    ) -> None:
        child = leaf
        for node, joint in reversed(path):
            node.n += 1
            for r in node.movers:
                j = joint[r]
                node.visits[r][j] += 1
                node.totals[r][j] += reward[r]
            if self.solver and node.solved is None:
                if child is not None and child.solved is not None and len(node.movers) == 1:
                    node.proven[joint[node.movers[0]]] = child.solved
                node.solved = self._proven(node)
            child = node

    def _proven(self, node: Node) -> Goals | None:
        """The exact value of a node whose children settle it, else None."""
        if len(node.movers) > 1:
            return None
        if not node.movers:
            child = node.children.get((0,) * len(node.legal))
            return None if child is None else child.solved
        mover = node.movers[0]
        proven = node.proven
        best: Goals | None = None
        for value in proven.values():
            if best is None or value[mover] > best[mover]:
                best = value
        if best is None:
            return None
        if best[mover] >= WIN:
            return best
        if len(proven) == len(node.legal[mover]) and best[mover] <= LOSS:
            return best
        return None  # a proven draw is left to the averages, which see the opponent's slips

    # -- answers ---------------------------------------------------------------------

    def best_move(self, role: int) -> Any:
        """The role's move at the root: a proven best, else the most visited."""
        root = self.root
        assert root is not None
        moves = root.legal[role]
        if len(moves) == 1:
            return moves[0]
        proven = self._proven_values(root, role)
        if proven:
            top = max(proven.values())
            if top >= WIN or len(proven) == len(moves):
                tied = [j for j in proven if proven[j] == top]
                return moves[max(tied, key=lambda j: root.visits[role][j])]
        visits = root.visits[role]
        totals = root.totals[role]

        def score(j: int) -> tuple[bool, int, float]:
            lost = j in proven and proven[j] <= LOSS
            return (not lost, visits[j], totals[j] / max(visits[j], 1))

        return moves[max(range(len(moves)), key=score)]

    def _proven_values(self, root: Node, role: int) -> dict[int, float]:
        """The exact value for ``role`` of each of its moves whose child is solved."""
        if root.movers != [role]:
            return {}
        return {j: value[role] for j, value in root.proven.items()}

    def move_stats(self, role: int) -> list[tuple[Any, int, float]]:
        """Each root move of ``role`` with its visits and mean reward (for logs and tests)."""
        root = self.root
        assert root is not None and root.legal
        return [
            (move, root.visits[role][j], root.totals[role][j] / max(root.visits[role][j], 1))
            for j, move in enumerate(root.legal[role])
        ]
