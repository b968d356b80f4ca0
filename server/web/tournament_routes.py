"""The tournament and rating routes; composed into the service's route table.

Writing needs the admin token, and every action is kept in the audit trail with who
did it. The rules are in ``server.tournament``; the driver in ``server.league``.
"""

from __future__ import annotations

import re
import secrets
from typing import TYPE_CHECKING, Any

from aiohttp import web
from pydantic import BaseModel, ValidationError

from server.errors import Clash, InvalidInput
from server.league import TournamentDriver, match_result
from server.store import MatchStatus, NotFound, TournamentRow, TournamentStore, now_ms
from server.tournament import (
    PlayerFigures,
    Standing,
    TournamentSpec,
    TournamentSpecError,
    check_roles,
    parse_spec,
    player_figures,
    round_robin_schedule,
    standings,
)

from . import models
from . import tournament_models as tm
from .auth import require_admin
from .errors import error_response
from .json_body import parse_json_object

if TYPE_CHECKING:
    from .routes import Api, Route

FIGURES_MATCHES = 500
"""A player's figures are computed over its latest finished matches, at most this many."""


def _driver(api: Api) -> TournamentDriver:
    driver = api.service.tournaments
    if driver is None:
        raise RuntimeError("the service is not started")
    return driver


def _store(api: Api) -> TournamentStore:
    return _driver(api).tournaments


async def _json_object(request: web.Request, *, empty_ok: bool = False) -> dict[str, Any]:
    raw = await request.read()
    if not raw.strip() and empty_ok:
        return {}
    return parse_json_object(raw)


def _validated(model: type[BaseModel], data: dict[str, Any]) -> Any:
    try:
        return model.model_validate(data)
    except ValidationError as error:
        first = error.errors()[0]
        field = ".".join(str(part) for part in first["loc"]) or "body"
        raise InvalidInput(f"{field}: {first['msg']}", field=field) from error


def _spec_error(error: TournamentSpecError) -> web.Response:
    field, message = error.problems[0]
    details: list[dict[str, object]] = [{"field": f, "message": m} for f, m in error.problems]
    return error_response(400, f"{field}: {message}", field, details)


def _new_id(name: str) -> str:
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-.").lower()[:60] or "tournament"
    return f"{slug}-{secrets.token_hex(3)}"


async def _roles(api: Api, spec: TournamentSpec) -> dict[str, int]:
    counts = {}
    for index, game in enumerate(spec.all_games):
        try:
            record = await api.store.get_game(game)
        except NotFound as error:
            field = "game" if index == 0 else "games"
            raise InvalidInput(str(error), field=field) from error
        counts[game] = len(record.roles)
    return counts


async def create_tournament(api: Api, request: web.Request) -> web.Response:
    actor = await api.actor(request)
    require_admin(actor)
    data = await _json_object(request)
    start = data.pop("start", True)
    if not isinstance(start, bool):
        raise InvalidInput("start is true or false", field="start")
    try:
        spec = parse_spec(data)
        check_roles(spec, await _roles(api, spec))
    except TournamentSpecError as error:
        return _spec_error(error)
    for index, name in enumerate(spec.players):
        try:
            await api.store.get_player(name)
        except NotFound as error:
            raise InvalidInput(str(error), field=f"players.{index}") from error
    row = await _store(api).create(
        _new_id(spec.name),
        spec.model_dump(mode="json", exclude_none=True),
        status="running" if start else "created",
        created_by=actor.name,
    )
    await api.store.add_audit(actor.name, "tournament.create", row.id, {"name": spec.name})
    _driver(api).wake()
    return web.json_response(tm.TournamentAnswer.of(row).model_dump(mode="json"), status=201)


async def list_tournaments(api: Api, request: web.Request) -> web.Response:
    rows = await _store(api).find()
    return web.json_response([tm.TournamentAnswer.of(row).model_dump(mode="json") for row in rows])


async def _standings(api: Api, row: TournamentRow) -> tuple[list[Standing], dict[str, int]]:
    driver = _driver(api)
    spec = TournamentSpec.model_validate(row.spec)
    matches = await driver.tournaments.matches(row.id)
    results, active = await driver.results(row, matches)
    table = standings(spec, results, await driver.statuses(row, spec, matches))
    counts = {
        "running": sum(m.status is MatchStatus.RUNNING for m in active),
        "queued": sum(m.status is MatchStatus.QUEUED for m in active),
        "finished": sum(r.played for r in results if not r.aborted_by_server),
        "aborted": sum(r.aborted_by_server for r in results),
        "awarded": sum(not r.played and not r.aborted_by_server for r in results),
    }
    return table, counts


async def get_tournament(api: Api, request: web.Request) -> web.Response:
    row = await _store(api).get(request.match_info["id"])
    table, counts = await _standings(api, row)
    spec = TournamentSpec.model_validate(row.spec)
    total = None
    if spec.format == "round_robin":
        roles = len((await api.store.get_game(spec.game)).roles)
        total = len(round_robin_schedule(spec, roles))
    detail = tm.TournamentDetail(
        **tm.TournamentAnswer.of(row).model_dump(),
        progress=tm.Progress(total=total, **counts),
        leaders=[line.player for line in table[:3]],
    )
    return web.json_response(detail.model_dump(mode="json"))


async def tournament_standings(api: Api, request: web.Request) -> web.Response:
    row = await _store(api).get(request.match_info["id"])
    table, _ = await _standings(api, row)
    return web.json_response([line.model_dump(mode="json") for line in table])


async def tournament_matches(api: Api, request: web.Request) -> web.Response:
    row = await _store(api).get(request.match_info["id"])
    matches = await _store(api).matches(row.id)
    return web.json_response(
        [models.match_answer(match).model_dump(mode="json") for match in matches]
    )


async def _act(
    api: Api,
    request: web.Request,
    action: str,
    only_if: list[str],
    values: dict[str, Any],
    detail: dict[str, Any] | None = None,
) -> web.Response:
    actor = await api.actor(request)
    require_admin(actor)
    store = _store(api)
    row = await store.get(request.match_info["id"])
    if not await store.change(row.id, only_if=only_if, **values):
        raise Clash(f"cannot {action} the tournament {row.id}: it is {row.status}", field="status")
    await api.store.add_audit(actor.name, f"tournament.{action}", row.id, detail)
    _driver(api).wake()
    return web.json_response(
        tm.TournamentAnswer.of(await store.get(row.id)).model_dump(mode="json")
    )


async def start_tournament(api: Api, request: web.Request) -> web.Response:
    await _json_object(request, empty_ok=True)
    return await _act(
        api, request, "start", ["created"], {"status": "running", "started_at": now_ms()}
    )


async def pause_tournament(api: Api, request: web.Request) -> web.Response:
    await _json_object(request, empty_ok=True)
    return await _act(
        api,
        request,
        "pause",
        ["running"],
        {"status": "paused", "pause_reason": "paused by an operator"},
    )


async def resume_tournament(api: Api, request: web.Request) -> web.Response:
    body: tm.ResumeBody = _validated(tm.ResumeBody, await _json_object(request, empty_ok=True))
    row = await _store(api).get(request.match_info["id"])
    cleared = sorted(set(row.cleared) | set(body.clear))
    return await _act(
        api,
        request,
        "resume",
        ["paused"],
        {"status": "running", "pause_reason": None, "cleared": cleared},
        {"clear": body.clear} if body.clear else None,
    )


async def cancel_tournament(api: Api, request: web.Request) -> web.Response:
    await _json_object(request, empty_ok=True)
    response = await _act(
        api,
        request,
        "cancel",
        ["created", "running", "paused"],
        {"status": "cancelled", "finished_at": now_ms()},
    )
    for match in await _store(api).matches(request.match_info["id"]):
        if match.status in (MatchStatus.QUEUED, MatchStatus.RUNNING):
            await api.service.runner.abort(match.id)
    return response


async def replace_player(api: Api, request: web.Request) -> web.Response:
    actor = await api.actor(request)
    require_admin(actor)
    body: tm.ReplaceBody = _validated(tm.ReplaceBody, await _json_object(request))
    store = _store(api)
    row = await store.get(request.match_info["id"])
    spec = TournamentSpec.model_validate(row.spec)
    if body.player not in spec.players:
        raise InvalidInput(f"{body.player} does not play in {row.id}", field="player")
    if body.by in spec.players:
        raise InvalidInput(f"{body.by} plays in {row.id} already", field="by")
    try:
        await api.store.get_player(body.by)
    except NotFound as error:
        raise InvalidInput(str(error), field="by") from error
    players = [body.by if name == body.player else name for name in spec.players]
    new_spec = spec.model_copy(update={"players": players}).model_dump(
        mode="json", exclude_none=True
    )
    if row.status in ("finished", "cancelled"):
        raise Clash(f"the tournament {row.id} is {row.status}", field="status")
    await store.change(row.id, spec=new_spec)
    await api.store.add_audit(
        actor.name, "tournament.replace", row.id, {"player": body.player, "by": body.by}
    )
    _driver(api).wake()
    return web.json_response(
        tm.TournamentAnswer.of(await store.get(row.id)).model_dump(mode="json")
    )


def _rating(
    rank: int, player: str, game: str, mu: float, sigma: float, matches: int
) -> tm.RatingAnswer:
    return tm.RatingAnswer(
        rank=rank,
        player=player,
        game=game,
        mu=mu,
        sigma=sigma,
        ordinal=mu - 3 * sigma,
        matches=matches,
    )


async def list_ratings(api: Api, request: web.Request) -> web.Response:
    filters: tm.RatingFilters = _validated(tm.RatingFilters, dict(request.query))
    scope = filters.game or "*"
    rows = await _store(api).ratings(scope)
    return web.json_response(
        [
            _rating(rank, r.player, r.scope, r.mu, r.sigma, r.matches).model_dump(mode="json")
            for rank, r in enumerate(rows, start=1)
        ]
    )


async def player_ratings(api: Api, request: web.Request) -> web.Response:
    name = request.match_info["name"]
    filters: tm.RatingFilters = _validated(tm.RatingFilters, dict(request.query))
    store = _store(api)
    rows = await store.player_ratings(name)
    if filters.game is not None:
        rows = [r for r in rows if r.scope == filters.game]
    history = await store.player_history(name, filters.game)
    answer = tm.PlayerRatings(
        player=name,
        ratings=[_rating(0, r.player, r.scope, r.mu, r.sigma, r.matches) for r in rows],
        history=[
            tm.RatingPointAnswer(
                game=h.scope,
                match_id=h.match_id,
                finished_at=h.finished_at,
                mu=h.mu,
                sigma=h.sigma,
                ordinal=h.mu - 3 * h.sigma,
            )
            for h in history
        ],
    )
    return web.json_response(answer.model_dump(mode="json"))


async def player_figures_route(api: Api, request: web.Request) -> web.Response:
    """Per game and role: matches, average goal, win rate, error rates, response times."""
    name = request.match_info["name"]
    filters: tm.RatingFilters = _validated(tm.RatingFilters, dict(request.query))
    await api.store.get_player(name)
    matches = await api.store.list_matches(
        player=name, game=filters.game, status=MatchStatus.FINISHED, limit=FIGURES_MATCHES
    )
    results = []
    for match in matches:
        roles = (await api.store.get_game(match.game_name, match.game_version)).roles
        results.append(match_result(match, await api.store.steps(match.id), roles))
    figures = [f for f in player_figures(results) if f.player == name]
    return web.json_response([f.model_dump(mode="json") for f in figures])


def tournament_routes() -> tuple[Route, ...]:
    """The routes of this module, for the service's table."""
    from .routes import Route

    def action(name: str, handler: Any, summary: str, body: type[BaseModel] = tm.Action) -> Route:
        return Route(
            "POST",
            f"/api/tournaments/{{id}}/{name}",
            handler,
            summary,
            body,
            tm.TournamentAnswer,
            write=True,
        )

    return (
        Route(
            "GET",
            "/api/tournaments",
            list_tournaments,
            "List the tournaments",
            answer=tm.TournamentAnswer,
            list_answer=True,
        ),
        Route(
            "POST",
            "/api/tournaments",
            create_tournament,
            "Create (and by default start) a tournament from its spec",
            tm.TournamentCreate,
            tm.TournamentAnswer,
            write=True,
            status=201,
        ),
        Route(
            "GET",
            "/api/tournaments/{id}",
            get_tournament,
            "A tournament: spec, status, progress, leaders",
            answer=tm.TournamentDetail,
        ),
        Route(
            "GET",
            "/api/tournaments/{id}/standings",
            tournament_standings,
            "The standings, best first",
            answer=Standing,
            list_answer=True,
        ),
        Route(
            "GET",
            "/api/tournaments/{id}/matches",
            tournament_matches,
            "The tournament's matches, with their schedule keys",
            answer=models.MatchAnswer,
            list_answer=True,
        ),
        action("start", start_tournament, "Start a created tournament"),
        action("pause", pause_tournament, "Stop queueing the tournament's matches"),
        action("resume", resume_tournament, "Resume a paused tournament", tm.ResumeBody),
        action(
            "cancel",
            cancel_tournament,
            "Cancel a tournament (its queued and running matches are aborted)",
        ),
        action("replace", replace_player, "Replace a withdrawn player", tm.ReplaceBody),
        Route(
            "GET",
            "/api/ratings",
            list_ratings,
            "Ratings, best first (?game=NAME for one game)",
            answer=tm.RatingAnswer,
            list_answer=True,
            query=tm.RatingFilters,
        ),
        Route(
            "GET",
            "/api/players/{name}/ratings",
            player_ratings,
            "A player's ratings and their history (?game=NAME)",
            answer=tm.PlayerRatings,
            query=tm.RatingFilters,
        ),
        Route(
            "GET",
            "/api/players/{name}/figures",
            player_figures_route,
            "A player's figures per game and role over its latest finished matches (?game=NAME)",
            answer=PlayerFigures,
            list_answer=True,
            query=tm.RatingFilters,
        ),
    )
