"""The one storage interface: players, owners, games, matches, steps and the audit trail.

>>> store = Store("sqlite:///ggp.db")          # doctest: +SKIP
>>> await store.open(upgrade=True)             # doctest: +SKIP
>>> await store.add_player("random", "http://127.0.0.1:9147/")  # doctest: +SKIP

SQLAlchemy Core over its async engine (aiosqlite or psycopg 3); every method returns
pydantic records.  On SQLite, writes go through one lock (SQLite has one writer).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import secrets
import time
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from typing import Any, Literal

from sqlalchemy import bindparam, event, func, insert, select, update
from sqlalchemy.exc import DisconnectionError, IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine

from . import migrate
from .errors import Conflict, NotFound, SchemaOutOfDate, StoreClosed, StoreError
from .json_text import dump_json
from .pg_batch import GROUP_COMMIT_SQL, group_commit_documents
from .pg_queue import QUEUE_MATCH, queue_parameters
from .records import (
    GameRecord,
    GameVersion,
    MatchRow,
    MatchStatus,
    PingRecord,
    PlayerRecord,
    StepRow,
)
from .tables import (
    audit,
    games,
    match_players,
    match_steps,
    matches,
    owners,
    player_pings,
    players,
)
from .urls import async_url

PLAYER_FIELDS = (
    "url",
    "owner",
    "contact",
    "notes",
    "max_matches",
    "keep_alive",
    "suspended",
    "suspended_reason",
)
"""Player fields a caller may change."""


def now_ms() -> int:
    """Epoch milliseconds."""
    return time.time_ns() // 1_000_000


def hash_token(token: str) -> str:
    """How a bearer token is kept: its SHA-256, never the token itself."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def rules_hash(text: str) -> str:
    """The SHA-256 of a game's rules text."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA busy_timeout=10000")
    cursor.close()


IDLE_PING_SECONDS = 1.0
"""A pooled connection idle for longer is tested before use (a busy one is not)."""


def _ping_idle_connections(engine: Any) -> None:
    """Test a pooled connection before use when it has been idle for a while.

    SQLAlchemy's ``pool_pre_ping`` costs a round trip on every checkout, about one per
    transaction; a connection handed back a moment ago is alive, so only one idle for over
    :data:`IDLE_PING_SECONDS` (long enough for a database restart to have closed it) is
    pinged.  A dead one is replaced by a fresh connection before the caller sees it.
    """
    pool = engine.pool
    dialect = engine.dialect

    @event.listens_for(pool, "connect")
    def fresh(_dbapi_connection: Any, record: Any) -> None:
        record.info["idle_since"] = None

    @event.listens_for(pool, "checkin")
    def returned(_dbapi_connection: Any, record: Any) -> None:
        record.info["idle_since"] = time.monotonic()

    @event.listens_for(pool, "checkout")
    def check(dbapi_connection: Any, record: Any, _proxy: Any) -> None:
        since = record.info.get("idle_since")
        if since is None or time.monotonic() - since < IDLE_PING_SECONDS:
            return
        try:
            dialect.do_ping(dbapi_connection)
        except Exception as error:
            raise DisconnectionError(f"an idle connection is gone: {error}") from error


def _autocommit_engine(driver_url: str) -> AsyncEngine:
    """PostgreSQL connections for reads, each statement on its own, outside any transaction.

    Under READ COMMITTED each statement sees its own snapshot either way, and BEGIN and
    ROLLBACK would cost two more round trips.  The connections are in autocommit from the
    start and handed back as they are: an engine derived with ``execution_options``
    switches a shared connection into autocommit and back on every checkout, which cost
    about 0.1 ms of CPU time per read.
    """
    engine = create_async_engine(
        driver_url,
        json_serializer=dump_json,
        isolation_level="AUTOCOMMIT",
        pool_reset_on_return=None,  # no transaction is ever left open to roll back
        pool_size=5,
        max_overflow=10,
    )
    _ping_idle_connections(engine.sync_engine)
    return engine


# Statements a hosted match runs every time, built once: SQLAlchemy then skips building
# them and their cache keys (some 0.2 ms of CPU time for the INSERT of a match) per call.
_INSERT_AUDIT = insert(audit)
_INSERT_MATCH = insert(matches)
_INSERT_MATCH_PLAYERS = insert(match_players)
_SELECT_MATCH = select(matches).where(matches.c.id == bindparam("match_id"))
_LATEST_GAME = (
    select(games.c.name, games.c.version, games.c.roles)
    .where(games.c.name == bindparam("game_name"))
    .order_by(games.c.version.desc())
    .limit(1)
)
_REGISTERED = select(players.c.name).where(players.c.name.in_(bindparam("names", expanding=True)))
_END_MATCH = (
    update(matches)
    .where(
        matches.c.id == bindparam("match_id"),
        matches.c.status.in_(bindparam("only_if", expanding=True)),
    )
    .values(
        status=bindparam("new_status"),
        finished_at=bindparam("new_finished_at"),
        end_reason=bindparam("new_end_reason"),
        end_message=bindparam("new_end_message"),
        goals=bindparam("new_goals", type_=matches.c.goals.type),
        signed_record=bindparam("new_signed_record"),
    )
)
_SET_HEADER = (
    update(matches).where(matches.c.id == bindparam("match")).values(header=bindparam("h"))
)
_INSERT_STEPS = insert(match_steps)


def _settle(
    batch: list[tuple[dict[str, Any], asyncio.Future[None]]], error: Exception | None
) -> None:
    """Finish the futures of a written (``error`` None) or failed batch."""
    for _, future in batch:
        if future.done():
            continue
        if error is None:
            future.set_result(None)
        else:
            future.set_exception(error)


class Store:
    """An open database of the service; call :meth:`open` first and :meth:`close` at the end."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.driver_url = async_url(url)
        self.is_sqlite = self.driver_url.startswith("sqlite")
        self._engine: AsyncEngine | None = None
        self._read_engine: AsyncEngine | None = None
        self._write_lock = asyncio.Lock() if self.is_sqlite else None
        self._pending_steps: list[tuple[dict[str, Any], asyncio.Future[None]]] = []
        self._pending_headers: list[tuple[dict[str, Any], asyncio.Future[None]]] = []
        self._pending_notices: list[tuple[dict[str, Any], asyncio.Future[None]]] = []
        self._step_writer: asyncio.Task[None] | None = None

    # -- life cycle ------------------------------------------------------------------

    async def open(self, *, upgrade: bool = False) -> None:
        """Connect; with ``upgrade`` bring the schema to the latest revision, else require it.

        Raises :class:`SchemaOutOfDate` when the schema is behind and ``upgrade`` is false.
        """
        if self._engine is not None:
            return
        options: dict[str, Any] = {"json_serializer": dump_json}
        if self.is_sqlite:
            # one thread per connection; a fixed pool, as an overflow connection would be
            # opened (a thread started, the pragmas run) and closed again under load
            options.update(pool_size=4, max_overflow=0)
        else:
            options.update(pool_size=10, max_overflow=20)
        engine = create_async_engine(self.driver_url, **options)
        if self.is_sqlite:
            event.listen(engine.sync_engine, "connect", _sqlite_pragmas)
            # SQLite begins no transaction for a read
            self._read_engine = engine
        else:
            _ping_idle_connections(engine.sync_engine)
            self._read_engine = _autocommit_engine(self.driver_url)
        self._engine = engine
        try:
            if upgrade:
                await self.upgrade()
            else:
                current, head = await self.revision()
                if current != head:
                    raise SchemaOutOfDate(
                        f"the database is at schema revision {current or 'none'}, not {head}; "
                        "run `ggp db upgrade`"
                    )
        except BaseException:
            await self.close()
            raise

    async def close(self) -> None:
        """Release every connection; the store can be opened again."""
        if self._engine is not None:
            engine, self._engine = self._engine, None
            reads, self._read_engine = self._read_engine, None
            await engine.dispose()
            if reads is not None and reads is not engine:
                await reads.dispose()

    @property
    def engine(self) -> AsyncEngine:
        if self._engine is None:
            raise StoreClosed("the store is not open")
        return self._engine

    @property
    def read_engine(self) -> AsyncEngine:
        """The engine reads use: on PostgreSQL, connections in autocommit of their own."""
        if self._read_engine is None:
            raise StoreClosed("the store is not open")
        return self._read_engine

    async def upgrade(self) -> None:
        """Apply every migration the database lacks."""
        async with self._writing() as connection:
            await connection.run_sync(migrate.upgrade)

    async def revision(self) -> tuple[str | None, str]:
        """(the database's schema revision, the latest one)."""
        async with self.engine.connect() as connection:
            current = await connection.run_sync(migrate.current_revision)
        return current, migrate.head_revision()

    async def ping(self) -> bool:
        """True when the database answers a trivial query."""
        try:
            async with self.engine.connect() as connection:
                await connection.execute(select(1))
        except Exception:
            return False
        return True

    @contextlib.asynccontextmanager
    async def _writing(self) -> AsyncIterator[AsyncConnection]:
        """One write transaction (serialised on SQLite)."""
        lock = self._write_lock or contextlib.nullcontext()
        async with lock, self.engine.begin() as connection:
            yield connection

    @contextlib.asynccontextmanager
    async def _writing_one(self) -> AsyncIterator[AsyncConnection]:
        """A connection for one write statement, atomic on its own: on PostgreSQL in
        autocommit (no BEGIN, no COMMIT: two round trips less), on SQLite a transaction."""
        if self.is_sqlite:
            async with self._writing() as connection:
                yield connection
        else:
            async with self.read_engine.connect() as connection:
                yield connection

    @contextlib.asynccontextmanager
    async def _reading(self) -> AsyncIterator[AsyncConnection]:
        """One connection for reads (on PostgreSQL in autocommit: no BEGIN, no ROLLBACK)."""
        async with self.read_engine.connect() as connection:
            yield connection

    # -- audit -----------------------------------------------------------------------

    async def add_audit(
        self, actor: str, action: str, target: str, detail: Mapping[str, Any] | None = None
    ) -> None:
        """Keep a line of the audit trail: who did what to which thing."""
        async with self._writing() as connection:
            await connection.execute(
                insert(audit).values(
                    at=now_ms(),
                    actor=actor,
                    action=action,
                    target=target,
                    detail=dict(detail) if detail else None,
                )
            )

    async def audit_trail(self, limit: int = 100) -> list[dict[str, Any]]:
        """The latest lines of the audit trail, newest first."""
        async with self._reading() as connection:
            rows = await connection.execute(select(audit).order_by(audit.c.id.desc()).limit(limit))
            return [dict(row._mapping) for row in rows]

    # -- owners ----------------------------------------------------------------------

    async def create_owner(self, name: str) -> str:
        """Register an owner; returns its new bearer token (kept only as a hash)."""
        token = secrets.token_urlsafe(24)
        try:
            async with self._writing() as connection:
                await connection.execute(
                    insert(owners).values(
                        name=name, token_hash=hash_token(token), created_at=now_ms()
                    )
                )
        except IntegrityError as error:
            raise Conflict(f"the owner {name!r} exists already") from error
        return token

    async def owner_exists(self, name: str) -> bool:
        async with self._reading() as connection:
            found = await connection.scalar(select(owners.c.name).where(owners.c.name == name))
        return found is not None

    async def owner_for_token(self, token: str) -> str | None:
        """The owner whose token this is, or ``None``."""
        async with self._reading() as connection:
            return await connection.scalar(
                select(owners.c.name).where(owners.c.token_hash == hash_token(token))
            )

    # -- players ---------------------------------------------------------------------

    async def add_player(
        self,
        name: str,
        url: str,
        *,
        owner: str | None = None,
        contact: str = "",
        notes: str = "",
        max_matches: int = 1,
        keep_alive: bool | Literal["auto"] = "auto",
    ) -> PlayerRecord:
        """Register a player; :class:`Conflict` when the name is taken."""
        try:
            async with self._writing() as connection:
                await connection.execute(
                    insert(players).values(
                        name=name,
                        url=url,
                        owner=owner,
                        contact=contact,
                        notes=notes,
                        status="unknown",
                        failures=0,
                        suspended=False,
                        max_matches=max_matches,
                        keep_alive=None if keep_alive == "auto" else keep_alive,
                        created_at=now_ms(),
                    )
                )
        except IntegrityError as error:
            raise Conflict(f"a player named {name!r} exists already") from error
        return await self.get_player(name)

    async def get_player(self, name: str) -> PlayerRecord:
        async with self._reading() as connection:
            row = (await connection.execute(select(players).where(players.c.name == name))).first()
        if row is None:
            raise NotFound(f"no player named {name!r}")
        return PlayerRecord.model_validate(dict(row._mapping))

    async def list_players(self) -> list[PlayerRecord]:
        async with self._reading() as connection:
            rows = await connection.execute(select(players).order_by(players.c.name))
            return [PlayerRecord.model_validate(dict(row._mapping)) for row in rows]

    async def players_in_running_matches(self) -> set[str]:
        """The names of the players seated in a match that is running now."""
        query = (
            select(match_players.c.player)
            .distinct()
            .join(matches, matches.c.id == match_players.c.match_id)
            .where(matches.c.status == MatchStatus.RUNNING.value)
            .where(match_players.c.player.is_not(None))
        )
        async with self._reading() as connection:
            return {str(name) for name in (await connection.scalars(query)).all()}

    async def update_player(self, name: str, changes: Mapping[str, Any]) -> PlayerRecord:
        """Change some of :data:`PLAYER_FIELDS`; :class:`NotFound` for an unknown player."""
        values = {key: value for key, value in changes.items() if key in PLAYER_FIELDS}
        if values.get("keep_alive") == "auto":
            values["keep_alive"] = None
        if values.get("suspended") is False:
            values.update(suspended_reason=None, failures=0)
        if values:
            async with self._writing() as connection:
                result = await connection.execute(
                    update(players).where(players.c.name == name).values(**values)
                )
            if result.rowcount == 0:
                raise NotFound(f"no player named {name!r}")
        return await self.get_player(name)

    async def delete_player(self, name: str) -> None:
        """Forget a player and its ping history (its past matches keep its name)."""
        async with self._writing() as connection:
            await connection.execute(player_pings.delete().where(player_pings.c.player == name))
            result = await connection.execute(players.delete().where(players.c.name == name))
        if result.rowcount == 0:
            raise NotFound(f"no player named {name!r}")

    async def record_ping(
        self,
        name: str,
        *,
        status: str,
        latency_ms: int | None,
        message: str,
        reply: str | None,
        suspend_after: int,
        keeps_connections: bool | None = None,
    ) -> PlayerRecord:
        """Keep one ping in the history and the player's status; suspend after too many failures.

        ``keeps_connections`` (when known) is whether its HTTP server kept the ping's
        connection open."""
        at = now_ms()
        failed = status == "unreachable"
        async with self._writing() as connection:
            failures = await connection.scalar(
                select(players.c.failures).where(players.c.name == name)
            )
            if failures is None:
                raise NotFound(f"no player named {name!r}")
            failures = failures + 1 if failed else 0
            values: dict[str, Any] = {
                "status": status,
                "last_ping_at": at,
                "latency_ms": latency_ms,
                "failures": failures,
            }
            if reply is not None:
                values["last_reply"] = reply
            if keeps_connections is not None:
                values["keeps_connections"] = keeps_connections
            if failed and suspend_after > 0 and failures >= suspend_after:
                values.update(
                    suspended=True,
                    suspended_reason=f"{failures} failed pings in a row; last: {message}",
                )
            await connection.execute(update(players).where(players.c.name == name).values(values))
            await connection.execute(
                insert(player_pings).values(
                    player=name, at=at, status=status, latency_ms=latency_ms, message=message
                )
            )
        return await self.get_player(name)

    async def ping_history(self, name: str, limit: int = 50) -> list[PingRecord]:
        """The player's latest pings, newest first."""
        async with self._reading() as connection:
            rows = await connection.execute(
                select(player_pings)
                .where(player_pings.c.player == name)
                .order_by(player_pings.c.id.desc())
                .limit(limit)
            )
            return [PingRecord.model_validate(dict(row._mapping)) for row in rows]

    # -- games -----------------------------------------------------------------------

    async def add_game_version(
        self,
        name: str,
        rules_text: str,
        *,
        roles: Sequence[str],
        title: str = "",
        lint_report: Mapping[str, Any] | None = None,
        source: str = "upload",
        start_clock: int | None = None,
        play_clock: int | None = None,
    ) -> GameRecord:
        """Keep the rules as the game's next version; the same rules again keep their version."""
        digest = rules_hash(rules_text)
        async with self._writing() as connection:
            latest = (
                await connection.execute(
                    select(games.c.version, games.c.rules_hash)
                    .where(games.c.name == name)
                    .order_by(games.c.version.desc())
                    .limit(1)
                )
            ).first()
            if latest is not None and latest.rules_hash == digest:
                version = latest.version
            else:
                version = 1 if latest is None else latest.version + 1
                await connection.execute(
                    insert(games).values(
                        name=name,
                        version=version,
                        title=title,
                        rules_text=rules_text,
                        rules_hash=digest,
                        roles=list(roles),
                        lint_report=dict(lint_report) if lint_report is not None else None,
                        source=source,
                        start_clock=start_clock,
                        play_clock=play_clock,
                        created_at=now_ms(),
                    )
                )
        return await self.get_game(name, version)

    async def get_game(self, name: str, version: int | None = None) -> GameRecord:
        """A version of a game (the latest by default); :class:`NotFound` otherwise."""
        query = select(games).where(games.c.name == name)
        if version is None:
            query = query.order_by(games.c.version.desc()).limit(1)
        else:
            query = query.where(games.c.version == version)
        async with self._reading() as connection:
            row = (await connection.execute(query)).first()
        if row is None:
            suffix = "" if version is None else f" version {version}"
            raise NotFound(f"no game named {name!r}{suffix}")
        return GameRecord.model_validate(dict(row._mapping))

    async def set_lint_report(
        self, name: str, version: int, lint_report: Mapping[str, Any]
    ) -> GameRecord:
        """Keep the lint report of a game version kept without one (a bundled game's)."""
        async with self._writing() as connection:
            await connection.execute(
                update(games)
                .where(games.c.name == name, games.c.version == version)
                .values(lint_report=dict(lint_report))
            )
        return await self.get_game(name, version)

    async def list_games(self) -> list[GameRecord]:
        """The latest version of every game, by name."""
        latest = (
            select(games.c.name, func.max(games.c.version).label("version"))
            .group_by(games.c.name)
            .subquery()
        )
        query = (
            select(games)
            .join(latest, (games.c.name == latest.c.name) & (games.c.version == latest.c.version))
            .order_by(games.c.name)
        )
        async with self._reading() as connection:
            rows = await connection.execute(query)
            return [GameRecord.model_validate(dict(row._mapping)) for row in rows]

    # -- matches ---------------------------------------------------------------------

    async def match_inputs(
        self, game_name: str, player_names: Iterable[str]
    ) -> tuple[GameVersion | None, set[str]]:
        """What queueing a match checks, in one read: the latest version of the game
        (``None`` when there is none) and which of the players are registered."""
        names = set(player_names)
        async with self._reading() as connection:
            row = (await connection.execute(_LATEST_GAME, {"game_name": game_name})).first()
            known: set[str] = set()
            if names:
                found = await connection.scalars(_REGISTERED, {"names": sorted(names)})
                known.update(found.all())
        game = None if row is None else GameVersion(row.name, row.version, list(row.roles))
        return game, known

    async def queue_match(
        self,
        match_id: str,
        *,
        game_name: str,
        game_version: int,
        players: Sequence[str | None],
        start_clock: int,
        play_clock: int,
        policy: str,
        config: Mapping[str, Any],
        tournament_id: str | None = None,
        requeued_from: str | None = None,
        schedule_key: str | None = None,
        audit_actor: str | None = None,
    ) -> MatchRow:
        """Record a new match as queued; it is kept from this moment on.  With
        ``audit_actor``, the audit trail's ``match.queue`` line is written with it.

        :class:`Conflict` when the id, or the tournament's schedule key, is taken.
        """
        values: dict[str, Any] = {
            "id": match_id,
            "game_name": game_name,
            "game_version": game_version,
            "status": MatchStatus.QUEUED.value,
            "players": list(players),
            "start_clock": start_clock,
            "play_clock": play_clock,
            "policy": policy,
            "config": dict(config),
            "tournament_id": tournament_id,
            "schedule_key": schedule_key,
            "requeued_from": requeued_from,
            "queued_at": now_ms(),
        }
        try:
            if not self.is_sqlite:  # one statement, see :mod:`.pg_queue`
                async with self._writing_one() as connection:
                    await connection.execute(
                        QUEUE_MATCH,
                        queue_parameters(values, players, audit_actor),
                    )
            else:
                await self._queue_in_transaction(values, players, audit_actor)
        except IntegrityError as error:
            if schedule_key is not None:
                raise Conflict(
                    f"a match with the id {match_id!r} or the schedule key {schedule_key!r} "
                    f"of {tournament_id!r} exists already"
                ) from error
            raise Conflict(f"a match with the id {match_id!r} exists already") from error
        return MatchRow.model_validate(
            {
                **values,
                "started_at": None,
                "finished_at": None,
                "end_reason": None,
                "end_message": None,
                "goals": None,
            }
        )

    async def _queue_in_transaction(
        self, values: dict[str, Any], players: Sequence[str | None], audit_actor: str | None
    ) -> None:
        """:meth:`queue_match`'s writes as one transaction (SQLite)."""
        async with self._writing() as connection:
            if audit_actor is not None:
                await connection.execute(
                    _INSERT_AUDIT,
                    {
                        "at": values["queued_at"],
                        "actor": audit_actor,
                        "action": "match.queue",
                        "target": values["id"],
                        "detail": None,
                    },
                )
            # the row is what was written: nothing to read back (no RETURNING)
            await connection.execute(_INSERT_MATCH, values)
            await connection.execute(
                _INSERT_MATCH_PLAYERS,
                [
                    {"match_id": values["id"], "seat": seat, "player": player}
                    for seat, player in enumerate(players)
                ],
            )

    async def get_match(self, match_id: str) -> MatchRow:
        async with self._reading() as connection:
            row = (await connection.execute(_SELECT_MATCH, {"match_id": match_id})).first()
        if row is None:
            raise NotFound(f"no match with the id {match_id!r}")
        return MatchRow.model_validate(dict(row._mapping))

    async def list_matches(
        self,
        *,
        game: str | None = None,
        player: str | None = None,
        tournament: str | None = None,
        status: MatchStatus | None = None,
        limit: int = 100,
        offset: int = 0,
        oldest_first: bool = False,
    ) -> list[MatchRow]:
        """Matches, newest first (or oldest first), filtered by any of the arguments."""
        query = select(matches)
        if game is not None:
            query = query.where(matches.c.game_name == game)
        if tournament is not None:
            query = query.where(matches.c.tournament_id == tournament)
        if status is not None:
            query = query.where(matches.c.status == status.value)
        if player is not None:
            seated = select(match_players.c.match_id).where(match_players.c.player == player)
            query = query.where(matches.c.id.in_(seated))
        order = matches.c.queued_at.asc() if oldest_first else matches.c.queued_at.desc()
        query = query.order_by(order, matches.c.id).limit(limit).offset(offset)
        async with self._reading() as connection:
            rows = await connection.execute(query)
            return [MatchRow.model_validate(dict(row._mapping)) for row in rows]

    async def count_matches(self) -> dict[MatchStatus, int]:
        """How many matches are in each status."""
        async with self._reading() as connection:
            rows = await connection.execute(
                select(matches.c.status, func.count()).group_by(matches.c.status)
            )
            counts = {MatchStatus(status): count for status, count in rows}
        return {status: counts.get(status, 0) for status in MatchStatus}

    async def claim_match(self, match_id: str) -> bool:
        """Move a queued match to running; false when it was not queued any more."""
        async with self._writing() as connection:
            result = await connection.execute(
                update(matches)
                .where(matches.c.id == match_id, matches.c.status == MatchStatus.QUEUED.value)
                .values(status=MatchStatus.RUNNING.value, started_at=now_ms())
            )
        return result.rowcount == 1

    async def claim_matches(self, match_ids: Sequence[str]) -> list[str]:
        """Move queued matches to running in one transaction; the ids that were queued."""
        if not match_ids:
            return []
        async with self._writing() as connection:
            result = await connection.execute(
                update(matches)
                .where(
                    matches.c.id.in_(list(match_ids)),
                    matches.c.status == MatchStatus.QUEUED.value,
                )
                .values(status=MatchStatus.RUNNING.value, started_at=now_ms())
                .returning(matches.c.id)
            )
            claimed = set(result.scalars())
        return [match_id for match_id in match_ids if match_id in claimed]

    async def save_header(self, match_id: str, header: Mapping[str, Any]) -> None:
        """Keep the match record's fields other than the per-step lists.

        Written with the steps of concurrent matches, in one transaction (see
        :meth:`add_step_row`).
        """
        await self._join_commit(self._pending_headers, {"match": match_id, "h": dict(header)})

    async def add_step(self, match_id: str, step: StepRow) -> None:
        """Keep one phase of a match: one row, whatever the step number."""
        await self.add_step_row(match_id, step.model_dump())

    async def add_step_row(self, match_id: str, row: Mapping[str, Any]) -> None:
        """Keep one phase of a match given as the fields of :class:`StepRow`.

        Returns once the row is committed.  Rows (and headers) of concurrent matches
        share one transaction (group commit): a step costs one row, not one transaction.
        """
        await self._join_commit(self._pending_steps, {"match_id": match_id, **row})

    def notify_later(self, channel: str, payload: str) -> asyncio.Future[None]:
        """Send a PostgreSQL notification with the next group commit (see :meth:`add_step_row`).

        It is delivered once that transaction commits, so a notice sent after a row was
        stored never arrives before the row; notices of concurrent matches share one
        statement.  The future is done once it is committed.
        """
        if self.is_sqlite:
            raise StoreError("notifications need PostgreSQL")
        return self._join_commit(self._pending_notices, {"channel": channel, "payload": payload})

    async def notify(self, channel: str, payload: str) -> None:
        """:meth:`notify_later`, returning once the notice is committed."""
        await self.notify_later(channel, payload)

    def _join_commit(
        self, pending: list[tuple[dict[str, Any], asyncio.Future[None]]], row: dict[str, Any]
    ) -> asyncio.Future[None]:
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        pending.append((row, future))
        if self._step_writer is None or self._step_writer.done():
            self._step_writer = asyncio.create_task(self._write_steps())
        return future

    async def _write_steps(self) -> None:
        while self._pending_steps or self._pending_headers or self._pending_notices:
            headers, self._pending_headers = self._pending_headers, []
            steps, self._pending_steps = self._pending_steps, []
            notices, self._pending_notices = self._pending_notices, []
            rows = headers + steps
            try:
                await self._write_batch(headers, steps, notices)
            except Exception as error:
                if not (rows and notices):
                    _settle(rows + notices, error)
                    continue
                # a notice must never cost the rows: write them again on their own
                _settle(notices, error)
                try:
                    await self._write_batch(headers, steps, [])
                except Exception as rows_error:
                    _settle(rows, rows_error)
                else:
                    _settle(rows, None)
            else:
                _settle(rows + notices, None)

    async def _write_batch(
        self,
        headers: list[tuple[dict[str, Any], asyncio.Future[None]]],
        steps: list[tuple[dict[str, Any], asyncio.Future[None]]],
        notices: list[tuple[dict[str, Any], asyncio.Future[None]]],
    ) -> None:
        """One transaction: the headers, the step rows, then the notices about them (on
        PostgreSQL one statement, see :mod:`.pg_batch`)."""
        if not self.is_sqlite:
            documents = group_commit_documents(
                [row for row, _ in headers], [row for row, _ in steps], [row for row, _ in notices]
            )
            async with self._writing_one() as connection:
                driver = (await connection.get_raw_connection()).driver_connection
                assert driver is not None
                try:
                    async with driver.cursor() as cursor:
                        await cursor.execute(GROUP_COMMIT_SQL, documents)
                except Exception:
                    if driver.closed or driver.broken:
                        await connection.invalidate()  # the pool must not lend it again
                    raise
            return
        async with self._writing() as connection:  # SQLite: no notices (see notify_later)
            if headers:
                await connection.execute(_SET_HEADER, [row for row, _ in headers])
            if steps:
                await connection.execute(_INSERT_STEPS, [row for row, _ in steps])

    async def steps(self, match_id: str) -> list[StepRow]:
        async with self._reading() as connection:
            rows = await connection.execute(
                select(match_steps)
                .where(match_steps.c.match_id == match_id)
                .order_by(match_steps.c.step)
            )
            return [StepRow.model_validate(dict(row._mapping)) for row in rows]

    async def header(self, match_id: str) -> dict[str, Any] | None:
        async with self._reading() as connection:
            return await connection.scalar(select(matches.c.header).where(matches.c.id == match_id))

    async def signed_record(self, match_id: str) -> str | None:
        """The signed ggp.org JSON of an ended match, exactly as served."""
        async with self._reading() as connection:
            return await connection.scalar(
                select(matches.c.signed_record).where(matches.c.id == match_id)
            )

    async def end_match(
        self,
        match_id: str,
        *,
        status: MatchStatus,
        end_reason: str,
        end_message: str | None = None,
        goals: Sequence[int] | None = None,
        signed_record: str | None = None,
        only_if: Sequence[MatchStatus] = (MatchStatus.QUEUED, MatchStatus.RUNNING),
        finished_at: int | None = None,
    ) -> bool:
        """Mark a match finished or aborted (at `finished_at`, default now); never touches
        a match that already ended."""
        async with self._writing_one() as connection:
            result = await connection.execute(
                _END_MATCH,
                {
                    "match_id": match_id,
                    "only_if": [state.value for state in only_if],
                    "new_status": status.value,
                    "new_finished_at": now_ms() if finished_at is None else finished_at,
                    "new_end_reason": end_reason,
                    "new_end_message": end_message,
                    "new_goals": list(goals) if goals is not None else None,
                    "new_signed_record": signed_record,
                },
            )
        return result.rowcount == 1

    async def import_match(
        self,
        match_id: str,
        *,
        game_name: str,
        game_version: int,
        players: Sequence[str | None],
        start_clock: int,
        play_clock: int,
        status: MatchStatus,
        end_reason: str,
        goals: Sequence[int] | None,
        started_at: int | None,
        log_text: str,
        source: str,
        header: Mapping[str, Any] | None = None,
        steps: Sequence[Mapping[str, Any]] = (),
    ) -> MatchRow:
        """Keep an ended match from an archive, its log exactly as given, with its
        header and one row per step (the fields of :class:`StepRow`) as for a match run
        here."""
        try:
            async with self._writing() as connection:
                await connection.execute(
                    insert(matches).values(
                        id=match_id,
                        game_name=game_name,
                        game_version=game_version,
                        status=status.value,
                        players=list(players),
                        start_clock=start_clock,
                        play_clock=play_clock,
                        policy="",
                        config={"imported_from": source},
                        queued_at=started_at or now_ms(),
                        started_at=started_at,
                        finished_at=now_ms(),
                        end_reason=end_reason,
                        goals=list(goals) if goals is not None else None,
                        header=dict(header) if header is not None else None,
                        signed_record=log_text,
                    )
                )
                if steps:
                    await connection.execute(
                        insert(match_steps), [{"match_id": match_id, **step} for step in steps]
                    )
                if players:
                    await connection.execute(
                        insert(match_players),
                        [
                            {"match_id": match_id, "seat": seat, "player": player}
                            for seat, player in enumerate(players)
                        ],
                    )
        except IntegrityError as error:
            raise Conflict(f"a match with the id {match_id!r} exists already") from error
        return await self.get_match(match_id)
