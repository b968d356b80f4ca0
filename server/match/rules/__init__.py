"""The rules of a match, run in a worker process with a CPU-time and memory budget.

>>> session = await RulesSession.open(rules_text, "auto", RulesBudget())  # doctest: +SKIP
>>> position = await session.initial()                  # doctest: +SKIP
>>> position = await session.step(position, joint)      # doctest: +SKIP
>>> await session.close()                               # doctest: +SKIP

The event loop never runs the rules itself: a slow or exploding game costs its own
worker's CPU and memory, never another match's deadlines.

- :mod:`.worker`: the process side (budgets enforced there);
- :mod:`.process`: a template process per game and the workers forked from it;
- :mod:`.pool`: a template and a few workers per game, shared by the matches of a loop;
- :mod:`.session`: one match's lease of a worker, one round trip per step.
"""

from .budget import RulesBudget
from .errors import RulesFailure, RulesLimitError, RulesWorkerDied
from .pool import RulesPool, default_pool
from .session import Position, RulesSession

__all__ = [
    "Position",
    "RulesBudget",
    "RulesFailure",
    "RulesLimitError",
    "RulesPool",
    "RulesSession",
    "RulesWorkerDied",
    "default_pool",
]
