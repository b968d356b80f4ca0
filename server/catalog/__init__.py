"""The game catalog: the bundled games and uploaded GDL, checked by the lint, versioned in the store.

>>> await seed_bundled_games(store)                                     # doctest: +SKIP
>>> game = await upload_game(store, executor, name="mine", rules=text)  # doctest: +SKIP
>>> game = await with_lint_report(store, executor, game)                # doctest: +SKIP

An upload is linted before it is kept.  A bundled game is kept at once and linted,
in the same worker, the first time its report is asked for; the report is then
kept with it like an upload's.
"""

from __future__ import annotations

import asyncio
import re
import weakref
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


_linting: weakref.WeakKeyDictionary[Store, dict[tuple[str, int], asyncio.Future[GameRecord]]] = (
    weakref.WeakKeyDictionary()
)
"""Lints of kept games in progress, per store: one per game version however many ask."""


async def with_lint_report(
    store: Store, executor: Executor | None, game: GameRecord, *, playouts: int = 10
) -> GameRecord:
    """``game`` with its lint report: a game kept without one (a bundled game) is
    linted off the event loop now, once, and the report kept."""
    if game.lint_report is not None:
        return game
    key = (game.name, game.version)
    in_progress = _linting.setdefault(store, {})
    running = in_progress.get(key)
    if running is None:
        running = in_progress[key] = asyncio.ensure_future(
            _lint_and_keep(store, executor, game, playouts)
        )
        running.add_done_callback(lambda _: in_progress.pop(key, None))
    return await asyncio.shield(running)


async def lint_kept_games(store: Store, executor: Executor | None) -> list[GameRecord]:
    """Lint every latest game version kept without a report (the bundled games)."""
    return [await with_lint_report(store, executor, game) for game in await store.list_games()]


async def _lint_and_keep(
    store: Store, executor: Executor | None, game: GameRecord, playouts: int
) -> GameRecord:
    loop = asyncio.get_running_loop()
    report = await loop.run_in_executor(executor, _lint, game.rules_text, playouts)
    return await store.set_lint_report(game.name, game.version, report.model_dump(mode="json"))


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
