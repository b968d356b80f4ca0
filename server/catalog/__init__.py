"""The game catalog: the bundled games and uploaded GDL, checked by the lint, versioned in the store.

>>> await seed_bundled_games(store)                                     # doctest: +SKIP
>>> game = await upload_game(store, executor, name="mine", rules=text)  # doctest: +SKIP
"""

from __future__ import annotations

import asyncio
import re
from concurrent.futures import Executor

from server.errors import InvalidInput
from server.games import game_text, list_games
from server.games.lint import LintReport, lint_game
from server.store import GameRecord, Store

GAME_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_\-]{0,99}$")
"""What a game's name may look like (it appears in URLs and match ids)."""

MAX_RULES_BYTES = 1_000_000
"""The largest rules text accepted."""


class GameRejected(InvalidInput):
    """Uploaded rules that do not pass the lint; ``report`` says why."""

    def __init__(self, report: LintReport) -> None:
        errors = [problem for problem in report.problems if problem.severity == "error"]
        first = errors[0] if errors else None
        where = ""
        if first is not None and first.line is not None:
            where = f" at line {first.line}, column {first.column}"
        message = first.message if first is not None else "the rules are not usable"
        super().__init__(f"the rules do not pass the check{where}: {message}", field="rules")
        self.report = report


async def seed_bundled_games(store: Store) -> list[GameRecord]:
    """Keep every bundled game in the store (a new version only when its rules changed)."""
    seeded = []
    for info in list_games():
        seeded.append(
            await store.add_game_version(
                info.name,
                game_text(info.name),
                roles=info.roles,
                title=info.title,
                source="bundled",
                start_clock=info.start_clock,
                play_clock=info.play_clock,
            )
        )
    return seeded


async def upload_game(
    store: Store,
    executor: Executor | None,
    *,
    name: str,
    rules: str,
    title: str = "",
    source: str = "upload",
    playouts: int = 10,
) -> GameRecord:
    """Lint the rules off the event loop, then keep them as the game's next version.

    Raises :class:`GameRejected` (field ``rules``) when the lint finds an error.
    """
    if not GAME_NAME.match(name):
        raise InvalidInput(
            "a game name is a letter, then letters, digits, '_' or '-' (at most 100)",
            field="name",
        )
    if len(rules.encode("utf-8")) > MAX_RULES_BYTES:
        raise InvalidInput(f"the rules are over {MAX_RULES_BYTES} bytes", field="rules")
    loop = asyncio.get_running_loop()
    report = await loop.run_in_executor(executor, _lint, rules, playouts)
    if not report.ok:
        raise GameRejected(report)
    return await store.add_game_version(
        name,
        rules,
        roles=report.roles,
        title=title,
        lint_report=report.model_dump(mode="json"),
        source=source,
    )


def _lint(rules: str, playouts: int) -> LintReport:
    return lint_game(rules, playouts=playouts, time_budget=10.0)
