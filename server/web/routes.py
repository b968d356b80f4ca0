"""The REST API: one handler per route, pydantic bodies and answers, one route table.

The table (:data:`ROUTES`) also produces the OpenAPI document at ``/openapi.json``.
"""

from __future__ import annotations

import socket
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from pydantic import BaseModel, ValidationError

from server.catalog import GameRejected, upload_game, with_lint_report
from server.errors import Forbidden, InvalidInput, Missing
from server.games.repository import GameFetchError, fetch_game
from server.match import PlayerAddress
from server.runner import MatchRequest, queue_match, rebuild_record
from server.store import MatchStatus
from server.store.bot_tokens import add_outbound_player

from . import models
from .auth import Actor, authenticate
from .errors import MAX_BODY, ErrorAnswer, error_middleware, error_response, validation_response
from .json_body import parse_json_object
from .query import MAX_QUERY_NUMBER, whole_number
from .site import add_site
from .tournament_routes import tournament_routes

if TYPE_CHECKING:
    from .service import Service

SERVICE = web.AppKey("service", object)
Body = TypeVar("Body", bound=BaseModel)
Handler = Callable[["Api", web.Request], Awaitable[web.StreamResponse]]


@dataclass(frozen=True)
class Route:
    """One route of the API and what the OpenAPI document says of it."""

    method: str
    path: str
    handler: Handler
    summary: str
    body: type[BaseModel] | None = None
    answer: type[BaseModel] | None = None
    list_answer: bool = False
    write: bool = False
    status: int = 200
    query: type[BaseModel] | None = None


def answer(model: BaseModel | list[Any], status: int = 200) -> web.Response:
    if isinstance(model, list):
        data: Any = [item.model_dump(mode="json") for item in model]
    else:
        data = model.model_dump(mode="json")
    return web.json_response(data, status=status)


async def read_body(request: web.Request, model: type[Body]) -> Body:
    """The request body as ``model``; 400 naming the field when it does not fit."""
    data = parse_json_object(await request.read())
    try:
        return model.model_validate(data)
    except ValidationError as error:
        raise _FieldError(error) from error


class _FieldError(Exception):
    def __init__(self, error: ValidationError) -> None:
        self.error = error


class Api:
    """The handlers, bound to one service."""

    def __init__(self, service: Service) -> None:
        self.service = service
        self.store = service.store

    async def actor(self, request: web.Request) -> Actor:
        return await authenticate(request, self.store, self.service.admin_hash)

    def refuse_own_url(self, request: web.Request, url: str) -> None:
        """A player URL that points at this service would make it play against itself."""
        address = PlayerAddress.parse(url)
        own_ports = {self.service.settings.port, request.url.port}
        own_hosts = {
            "localhost",
            "127.0.0.1",
            "::1",
            "0.0.0.0",
            "::",
            self.service.settings.host,
            socket.gethostname(),
            request.url.host,
        }
        if address.port in own_ports and address.host.lower() in {h for h in own_hosts if h}:
            raise InvalidInput("the URL points at this service itself", field="url")

    # -- players -----------------------------------------------------------------------

    async def list_players(self, request: web.Request) -> web.Response:
        players = await self.store.list_players()
        checks = await bot_routes.check_fields(self, [player.name for player in players])
        return answer(
            [
                models.PlayerAnswer(**player.model_dump(), **checks[player.name])
                for player in players
            ]
        )

    async def create_player(self, request: web.Request) -> web.Response:
        actor = await self.actor(request)
        body = await read_body(request, models.PlayerCreate)
        if (body.url is None) != (body.connection == "outbound"):
            why = "an outbound bot has no URL" if body.url else "give the URL the player listens on"
            raise InvalidInput(why, field="url")
        if body.url is not None:
            self.refuse_own_url(request, body.url)
        owner_token = None
        if actor.admin:
            owner = body.owner
            if owner is not None and not await self.store.owner_exists(owner):
                owner_token = await self.store.create_owner(owner)
        else:
            if body.owner is not None and body.owner != actor.owner:
                raise Forbidden("an owner registers players for itself only", field="owner")
            owner = actor.owner
        token = None
        if body.url is None:
            player, token = await add_outbound_player(
                self.store,
                body.name,
                owner=owner,
                contact=body.contact,
                notes=body.notes,
                max_matches=body.max_matches,
            )
        else:
            player = await self.store.add_player(
                body.name,
                body.url,
                owner=owner,
                contact=body.contact,
                notes=body.notes,
                max_matches=body.max_matches,
                keep_alive=body.keep_alive,
            )
        await self.store.add_audit(
            actor.name,
            "player.create",
            player.name,
            {"url": body.url, "connection": body.connection},
        )
        await bot_routes.check_new_player(self, player, "registered")
        checks = await bot_routes.check_fields(self, [player.name])
        return answer(
            models.PlayerAnswer(
                **player.model_dump(), owner_token=owner_token, token=token, **checks[player.name]
            ),
            status=201,
        )

    async def get_player(self, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        player = await self.store.get_player(name)
        pings = await self.store.ping_history(name)
        checks = await bot_routes.check_fields(self, [name])
        return answer(models.PlayerDetail(**player.model_dump(), pings=pings, **checks[name]))

    async def update_player(self, request: web.Request) -> web.Response:
        actor = await self.actor(request)
        name = request.match_info["name"]
        player = await self.store.get_player(name)
        if not actor.may_manage(player.owner):
            raise Forbidden(f"the player {name} belongs to another owner")
        body = await read_body(request, models.PlayerUpdate)
        if body.url is not None:
            self.refuse_own_url(request, body.url)
        changes = body.model_dump(exclude_unset=True)
        if changes.get("suspended") is True and not changes.get("suspended_reason"):
            changes["suspended_reason"] = f"suspended by {actor.name}"
        audit = dict(changes)
        player, token, moved = await bot_routes.change_connection(self, player, changes)
        player = await self.store.update_player(name, changes)
        await self.store.add_audit(actor.name, "player.update", name, audit)
        if moved:
            await bot_routes.check_new_player(self, player, "url changed")
        checks = await bot_routes.check_fields(self, [name])
        return answer(models.PlayerAnswer(**player.model_dump(), token=token, **checks[name]))

    async def delete_player(self, request: web.Request) -> web.Response:
        actor = await self.actor(request)
        name = request.match_info["name"]
        player = await self.store.get_player(name)
        if not actor.may_manage(player.owner):
            raise Forbidden(f"the player {name} belongs to another owner")
        await self.store.delete_player(name)
        await self.store.add_audit(actor.name, "player.delete", name)
        return web.Response(status=204)

    # -- games -------------------------------------------------------------------------

    async def list_games(self, request: web.Request) -> web.Response:
        return answer([models.GameSummary.of(game) for game in await self.store.list_games()])

    async def create_game(self, request: web.Request) -> web.Response:
        actor = await self.actor(request)
        body = await read_body(request, models.GameCreate)
        if (body.rules is None) == (body.url is None):
            raise InvalidInput(
                "give either rules (GDL text) or url (a repository game)", field="rules"
            )
        if body.rules is not None and body.name is None:
            raise InvalidInput("a game uploaded as rules needs a name", field="name")
        name, rules, title, source = body.name, body.rules, body.title, "upload"
        if body.url is not None:
            try:
                fetched = await fetch_game(body.url)
            except GameFetchError as error:
                raise InvalidInput(str(error), field="url") from error
            name, rules = name or fetched.name, fetched.rules_text
            title, source = title or fetched.title or "", fetched.source_url
        assert name is not None and rules is not None
        try:
            game = await upload_game(
                self.store,
                self.service.executor,
                name=name,
                rules=rules,
                title=title,
                source=source,
            )
        except GameRejected as error:
            return error_response(
                400,
                error.message,
                "rules",
                [problem.model_dump() for problem in error.report.problems],
            )
        await self.store.add_audit(actor.name, "game.upload", f"{game.name}/{game.version}")
        return answer(models.GameDetail(**game.model_dump()), status=201)

    async def get_game(self, request: web.Request) -> web.Response:
        version_text = request.query.get("version")
        version = None
        if version_text is not None:
            version = whole_number(version_text, most=MAX_QUERY_NUMBER)
            if version is None:
                raise InvalidInput(
                    f"version is a whole number from 0 to {MAX_QUERY_NUMBER}", field="version"
                )
        game = await self.store.get_game(request.match_info["name"], version)
        game = await with_lint_report(self.store, self.service.executor, game)
        return answer(models.GameDetail(**game.model_dump()))

    # -- matches -----------------------------------------------------------------------

    async def list_matches(self, request: web.Request) -> web.Response:
        try:
            filters = models.MatchFilters.model_validate(dict(request.query))
        except ValidationError as error:
            raise _FieldError(error) from error
        matches = await self.store.list_matches(
            game=filters.game,
            player=filters.player,
            tournament=filters.tournament,
            status=filters.status,
            limit=filters.limit,
            offset=filters.offset,
        )
        return answer([models.match_answer(match) for match in matches])

    async def create_match(self, request: web.Request) -> web.Response:
        actor = await self.actor(request)
        body = await read_body(request, models.MatchCreate)
        match = await queue_match(
            self.store,
            MatchRequest(
                game=body.game,
                players=body.players,
                start_clock=body.startclock,
                play_clock=body.playclock,
                policy=body.policy,
                step_limit=body.step_limit,
                seed=body.seed,
                scramble=body.scramble,
                tournament=body.tournament,
            ),
            audit_actor=actor.name,
        )
        self.service.runner.wake()
        return answer(models.match_answer(match), status=201)

    async def get_match(self, request: web.Request) -> web.Response:
        match = await self.store.get_match(request.match_info["id"])
        return answer(models.match_answer(match))

    async def match_log(self, request: web.Request) -> web.Response:
        """The ggp.org JSON: signed once the match ended, rebuilt from the rows while it runs."""
        match_id = request.match_info["id"]
        match = await self.store.get_match(match_id)
        signed = await self.store.signed_record(match_id)
        if signed is not None:
            return web.Response(text=signed, content_type="application/json")
        header = await self.store.header(match_id)
        if header is None:
            raise Missing(f"the match {match_id} has no log yet ({match.status.value})")
        record = rebuild_record(header, await self.store.steps(match_id))
        return web.json_response(record)

    async def abort_match(self, request: web.Request) -> web.Response:
        actor = await self.actor(request)
        match_id = request.match_info["id"]
        match = await self.store.get_match(match_id)
        if not actor.admin:
            owned = {
                player.name
                for player in await self.store.list_players()
                if player.owner == actor.owner
            }
            if not owned.intersection(name for name in match.players if name):
                raise Forbidden("only the administrator or an owner of a player may abort")
        match = await self.service.runner.abort(match_id)
        await self.store.add_audit(actor.name, "match.abort", match_id)
        if match.tournament_id is not None and self.service.tournaments is not None:
            self.service.tournaments.wake()  # a queued match aborted: its tournament replays it
        return answer(models.match_answer(match))

    # -- service -----------------------------------------------------------------------

    async def health(self, request: web.Request) -> web.Response:
        database = await self.store.ping()
        runner = self.service.runner.alive
        registry = self.service.registry.alive
        driver = self.service.tournaments
        tournaments = driver is not None and driver.alive
        health = models.Health(
            ok=database and runner and registry and tournaments,
            database=database,
            runner=runner,
            registry=registry,
            tournaments=tournaments,
        )
        return answer(health, status=200 if health.ok else 503)

    async def metrics(self, request: web.Request) -> web.Response:
        counts = await self.store.count_matches()
        self.service.metrics.queued.set(counts[MatchStatus.QUEUED])
        body = generate_latest(self.service.metrics.registry)
        response = web.Response(body=body)
        response.content_type = CONTENT_TYPE_LATEST.split(";")[0]
        return response

    async def openapi(self, request: web.Request) -> web.Response:
        from .openapi import openapi_document

        return web.json_response(openapi_document(ROUTES))


ROUTES: tuple[Route, ...] = (
    Route(
        "GET",
        "/api/players",
        Api.list_players,
        "List the players",
        answer=models.PlayerAnswer,
        list_answer=True,
    ),
    Route(
        "POST",
        "/api/players",
        Api.create_player,
        "Register a player",
        models.PlayerCreate,
        models.PlayerAnswer,
        write=True,
        status=201,
    ),
    Route(
        "GET",
        "/api/players/{name}",
        Api.get_player,
        "A player and its pings",
        answer=models.PlayerDetail,
    ),
    Route(
        "PATCH",
        "/api/players/{name}",
        Api.update_player,
        "Change or reinstate a player",
        models.PlayerUpdate,
        models.PlayerAnswer,
        write=True,
    ),
    Route(
        "DELETE",
        "/api/players/{name}",
        Api.delete_player,
        "Remove a player",
        write=True,
        status=204,
    ),
    Route(
        "GET",
        "/api/games",
        Api.list_games,
        "List the games (latest versions)",
        answer=models.GameSummary,
        list_answer=True,
    ),
    Route(
        "POST",
        "/api/games",
        Api.create_game,
        "Upload a game (checked by the lint)",
        models.GameCreate,
        models.GameDetail,
        write=True,
        status=201,
    ),
    Route(
        "GET",
        "/api/games/{name}",
        Api.get_game,
        "A game's rules and lint report (?version=N)",
        answer=models.GameDetail,
    ),
    Route(
        "GET",
        "/api/matches",
        Api.list_matches,
        "List matches (filters: game, player, tournament, status)",
        answer=models.MatchAnswer,
        list_answer=True,
        query=models.MatchFilters,
    ),
    Route(
        "POST",
        "/api/matches",
        Api.create_match,
        "Queue a match",
        models.MatchCreate,
        models.MatchAnswer,
        write=True,
        status=201,
    ),
    Route("GET", "/api/matches/{id}", Api.get_match, "A match", answer=models.MatchAnswer),
    Route(
        "GET",
        "/api/matches/{id}/log",
        Api.match_log,
        "The match log (ggp.org JSON, signed when ended)",
    ),
    Route(
        "POST",
        "/api/matches/{id}/abort",
        Api.abort_match,
        "Abort a queued or running match",
        answer=models.MatchAnswer,
        write=True,
    ),
    Route(
        "GET",
        "/api/health",
        Api.health,
        "Database reachable; runner, player pings and tournament driver running",
        answer=models.Health,
    ),
    Route("GET", "/metrics", Api.metrics, "Prometheus metrics"),
    Route("GET", "/openapi.json", Api.openapi, "This document"),
    *tournament_routes(),
)


from . import bot_routes  # noqa: E402 - its handlers use the table's types

ROUTES += bot_routes.BOT_ROUTES


@web.middleware
async def field_errors(request: web.Request, handler: Any) -> web.StreamResponse:
    """Validation errors of bodies and queries as 400s naming the field."""
    try:
        response: web.StreamResponse = await handler(request)
        return response
    except _FieldError as failure:
        return validation_response(failure.error)


def build_app(service: Service) -> web.Application:
    """The aiohttp application of ``service``."""
    app = web.Application(
        client_max_size=service.settings.max_body_bytes,
        middlewares=[error_middleware, field_errors],
    )
    app[MAX_BODY] = service.settings.max_body_bytes
    app[SERVICE] = service
    api = Api(service)
    for route in ROUTES:

        def bind(handler: Handler) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
            async def bound(request: web.Request) -> web.StreamResponse:
                return await handler(api, request)

            return bound

        app.router.add_route(route.method, route.path, bind(route.handler))
    add_site(app, service)
    return app


__all__ = ["ROUTES", "ErrorAnswer", "Route", "build_app"]
