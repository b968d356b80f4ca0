"""The page handlers: HTML pages, their JSON and the live event streams (each match's,
and the home page's of every match starting and ending)."""

from __future__ import annotations

import asyncio
import json
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, get_args

from aiohttp import ClientError, ClientSession, ClientTimeout, web
from pydantic import ValidationError

from server.errors import Clash, InvalidInput, Missing
from server.games import game_text, is_bundled
from server.gdl import Game
from server.records import MatchRecord
from server.runner import MatchRequest, queue_match
from server.store import MatchRow, MatchStatus, RatingRow, TournamentStore
from server.store.page_reads import (
    game_results,
    match_counts,
    match_summaries,
    player_seats,
    rating_line,
    step_errors,
)
from server.store.player_checks import list_checks
from server.tournament.spec import Format

from ..json_body import parse_json
from ..query import whole_number
from .charts import line_chart
from .figures import game_figures, results_by_role
from .frames import Drawings, draw, engine_and_speed, step_frame
from .hub import EVERY_MATCH
from .human import Seat, Seats
from .render import Pages
from .tournament_pages import Results, tournament_context, tournament_list

if TYPE_CHECKING:
    from server.web.service import Service

STATIC = Path(str(resources.files(__package__) / "static"))
PAGE_SIZE = 25
ERROR_MATCHES = 20
"""A player page lists the errors of the player's latest matches, this many."""
FIGURE_MATCHES = 1000
"""A game page's figures are over its latest finished matches, this many."""
FORMATS = get_args(Format)
KEEPALIVE_SECONDS = 5.0
MAX_LOG_BYTES = 20_000_000


class Site:
    """The pages of one service."""

    def __init__(self, service: Service) -> None:
        self.service = service
        self.store = service.store
        self.drawings = Drawings()
        self.pages = Pages()
        self.seats = Seats()
        self.initial_drawings: dict[str, dict[str, Any]] = {}
        self.results = Results()
        """Results of ended tournament matches, for the tournament pages."""

    # -- pages -------------------------------------------------------------------------

    def html(self, template: str, **context: Any) -> web.Response:
        return web.Response(text=self.pages.render(template, **context), content_type="text/html")

    async def home(self, request: web.Request) -> web.Response:
        page = _page(request)
        running, queued, recent, players, tournaments = await asyncio.gather(
            match_summaries(self.store, status=MatchStatus.RUNNING, limit=50),
            match_summaries(self.store, status=MatchStatus.QUEUED, limit=10),
            match_summaries(
                self.store,
                status=MatchStatus.FINISHED,
                limit=PAGE_SIZE + 1,
                offset=page * PAGE_SIZE,
            ),
            self.store.list_players(),
            tournament_list(self, ["running", "paused"]),
        )
        return self.html(
            "home.html",
            running=running,
            queued=queued,
            recent=recent[:PAGE_SIZE],
            page=page,
            more=len(recent) > PAGE_SIZE,
            players=players,
            tournaments=tournaments,
        )

    async def matches_page(self, request: web.Request) -> web.Response:
        page = _page(request)
        status = _status(request)
        found = await match_summaries(
            self.store, status=status, limit=PAGE_SIZE + 1, offset=page * PAGE_SIZE
        )
        return self.html(
            "matches.html",
            matches=found[:PAGE_SIZE],
            page=page,
            more=len(found) > PAGE_SIZE,
            status=status.value if status else "",
            statuses=[s.value for s in MatchStatus],
        )

    async def match_page(self, request: web.Request) -> web.Response:
        match = await self.store.get_match(request.match_info["id"])
        return self.html("match.html", match=match)

    async def replay_page(self, request: web.Request) -> web.Response:
        return self.html("replay.html")

    async def players_page(self, request: web.Request) -> web.Response:
        players = await self.store.list_players()
        ratings = {row.player: row for row in await self._tournaments().ratings("*")}
        ranked = sorted(
            players,
            key=lambda p: (p.name not in ratings, -_ordinal(ratings.get(p.name)), p.name),
        )
        return self.html("players.html", players=ranked, ratings=ratings)

    async def player_page(self, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        player = await self.store.get_player(name)
        tournaments = self._tournaments()
        pings, matches, games, seated, ratings, history = await asyncio.gather(
            self.store.ping_history(name, limit=20),
            match_summaries(self.store, player=name, limit=PAGE_SIZE),
            self.store.list_games(),
            player_seats(self.store, name),
            tournaments.player_ratings(name),
            rating_line(self.store, name, "*"),
        )
        table = results_by_role(seated, {game.name: game.roles for game in games})
        seats = {
            m.id: [i for i, p in enumerate(m.players) if p == name] for m in matches[:ERROR_MATCHES]
        }
        errors = [
            (match_id, step, seat, errors[seat], times[seat] if seat < len(times) else None)
            for match_id, step, errors, times in await step_errors(self.store, list(seats))
            for seat in seats[match_id]
            if seat < len(errors) and errors[seat]
        ]
        order = {m.id: i for i, m in enumerate(matches)}
        errors.sort(key=lambda e: (order[e[0]], -e[1]))
        chart = line_chart(
            history, label=f"{name}'s rating (mu - 3 sigma, every game) after each rated match"
        )
        return self.html(
            "player.html",
            player=player,
            pings=pings,
            table=table,
            errors=errors[:100],
            error_matches=len(seats),
            matches=matches[:PAGE_SIZE],
            ratings=ratings,
            chart=chart,
            rated=len(history),
            checks=await list_checks(self.store, name, limit=10),
        )

    async def games_page(self, request: web.Request) -> web.Response:
        games = await self.store.list_games()
        counts = await match_counts(self.store, "game_name")
        return self.html("games.html", games=games, counts=counts)

    async def game_page(self, request: web.Request) -> web.Response:
        game = await self.store.get_game(request.match_info["name"])
        first = self.initial_drawings.get(game.rules_hash)
        if first is None:
            grids = await self.drawings.grids(game.rules_text)
            try:
                loaded = await asyncio.to_thread(Game.from_text, game.rules_text)
                drawing = draw(loaded.initial_state().to_ggp(), grids)
                measured = {} if game.lint_report else engine_and_speed(loaded)
            except Exception:  # rules the engine refuses are shown without a picture
                drawing, measured = {"boards": [], "facts": []}, {}
            first = self.initial_drawings[game.rules_hash] = {"drawing": drawing, **measured}
        results, recent = await asyncio.gather(
            game_results(self.store, game.name, limit=FIGURE_MATCHES),
            match_summaries(self.store, game=game.name, limit=10),
        )
        figures = game_figures(results, game.roles)
        return self.html(
            "game.html",
            game=game,
            drawing=json.dumps(first["drawing"]),
            lint=game.lint_report or {},
            measured=first,
            figures=figures,
            figure_limit=FIGURE_MATCHES,
            recent=recent,
        )

    async def tournaments_page(self, request: web.Request) -> web.Response:
        return self.html("tournaments.html", tournaments=await tournament_list(self))

    async def tournament_page(self, request: web.Request) -> web.Response:
        context = await tournament_context(self, request.match_info["id"], _page(request))
        return self.html("tournament.html", **context)

    def _tournaments(self) -> TournamentStore:
        if self.service.tournaments is None:
            raise RuntimeError("the service is not started")
        return self.service.tournaments.tournaments

    async def admin_page(self, request: web.Request) -> web.Response:
        games = await self.store.list_games()
        players = [p for p in await self.store.list_players() if not p.name.startswith("human-")]
        return self.html(
            "admin.html",
            games=games,
            players=players,
            tournaments=await tournament_list(self),
            formats=FORMATS,
        )

    # -- a person against a bot --------------------------------------------------------

    async def play_form(self, request: web.Request) -> web.Response:
        games = await self.store.list_games()
        players = [p for p in await self.store.list_players() if not p.name.startswith("human-")]
        return self.html("play_form.html", games=games, players=players)

    async def play_create(self, request: web.Request) -> web.StreamResponse:
        form = await request.post()
        game = await self.store.get_game(str(form.get("game", "")))
        role = str(form.get("role", ""))
        opponent = str(form.get("opponent", "")) or None
        if role not in game.roles:
            raise InvalidInput(f"{game.name} has the roles {', '.join(game.roles)}", field="role")
        if opponent is not None:
            await self.store.get_player(opponent)  # 404 for an unknown player
        clock = str(form.get("playclock", "20"))
        chosen = whole_number(clock, most=300)
        play_clock = chosen if chosen is not None and chosen >= 5 else 20
        seat = self.seats.new(role)
        if seat is None:
            await self._free_ended_seats()
            seat = self.seats.new(role)
        if seat is None:
            raise InvalidInput("too many people are playing; try again later")
        await self.store.add_player(
            seat.player_name,
            f"http://{request.host}/human/{seat.id}",
            notes="a person playing in the browser",
        )
        players = [seat.player_name if name == role else opponent for name in game.roles]
        match = await queue_match(
            self.store,
            MatchRequest(game=game.name, players=players, start_clock=10, play_clock=play_clock),
        )
        seat.match_id = match.id
        self.service.runner.wake()
        raise web.HTTPSeeOther(f"/play/{seat.id}")

    async def _free_ended_seats(self) -> None:
        """Forget the seats whose match has ended, so that others may sit."""
        for seat in list(self.seats.seats.values()):
            if seat.match_id is None:
                continue
            match = await self.store.get_match(seat.match_id)
            if match.status in (MatchStatus.FINISHED, MatchStatus.ABORTED):
                self.seats.seats.pop(seat.id, None)

    def seat(self, request: web.Request) -> Seat:
        seat = self.seats.get(request.match_info["seat"])
        if seat is None or seat.match_id is None:
            raise Missing("no such seat (the service may have restarted)")
        return seat

    async def play_page(self, request: web.Request) -> web.Response:
        seat = self.seat(request)
        assert seat.match_id is not None
        match = await self.store.get_match(seat.match_id)
        return self.html("play.html", match=match, seat=seat)

    async def play_turn(self, request: web.Request) -> web.Response:
        seat = self.seat(request)
        return web.json_response({"role": seat.role, "turn": seat.human.turn})

    async def play_move(self, request: web.Request) -> web.Response:
        seat = self.seat(request)
        data = parse_json(await request.read(), field="move")
        if not isinstance(data, dict) or "move" not in data:
            raise InvalidInput('send {"move": "..."}', field="move")
        move = str(data["move"])
        if not seat.human.choose(move):
            raise Clash("that move is not awaited now (not your turn, or not legal)")
        return web.json_response({"ok": True})

    async def human_endpoint(self, request: web.Request) -> web.StreamResponse:
        """The GGP side of a seat: the match manager talks to it like any player."""
        seat = self.seats.get(request.match_info["seat"])
        if seat is None:
            raise Missing("no such seat")
        return await seat.agent.handle(request)

    # -- data --------------------------------------------------------------------------

    async def live_events(self, request: web.Request) -> web.StreamResponse:
        """Server-sent events of the home page: ``running`` (the matches running now),
        then ``started`` and ``ended`` as matches start and end."""
        subscription = self.service.live.subscribe(EVERY_MATCH)
        response = _event_stream()
        await response.prepare(request)
        try:
            await response.write(b"retry: 2000\n\n")
            running = await match_summaries(self.store, status=MatchStatus.RUNNING, limit=50)
            await _send(response, "running", {"matches": [_card(m) for m in running]})
            while not subscription.behind:
                try:
                    async with asyncio.timeout(KEEPALIVE_SECONDS):
                        payload = await subscription.queue.get()
                except TimeoutError:
                    await response.write(b": keepalive\n\n")
                    continue
                if payload["kind"] == "shutdown":
                    return response
                if payload["kind"] == "started":
                    try:
                        match = await self.store.get_match(payload["id"])
                    except Missing:
                        continue
                    await _send(response, "started", _card(match))
                else:
                    await _send(response, "ended", payload)
        except ConnectionResetError:
            pass  # the viewer left
        finally:
            self.service.live.unsubscribe(subscription)
        return response

    async def match_events(self, request: web.Request) -> web.StreamResponse:
        """Server-sent events: ``info``, every stored step, then live steps and ``end``."""
        match_id = request.match_info["id"]
        match = await self.store.get_match(match_id)
        game = await self.store.get_game(match.game_name, match.game_version)
        subscription = self.service.live.subscribe(match_id)
        response = _event_stream()
        await response.prepare(request)
        try:
            await response.write(b"retry: 1000\n\n")
            await _send(response, "info", _info(match, game.roles))
            grids = await self.drawings.grids(game.rules_text)
            last = -1
            for row in await self.store.steps(match_id):
                drawing = self.drawings.drawing(match_id, row.step, row.state, grids)
                await _send(response, "step", step_frame(row, drawing))
                last = row.step
            match = await self.store.get_match(match_id)
            if match.status in (MatchStatus.FINISHED, MatchStatus.ABORTED):
                await _send(response, "end", _end(match))
                return response
            while not subscription.behind:
                try:
                    async with asyncio.timeout(KEEPALIVE_SECONDS):
                        payload = await subscription.queue.get()
                except TimeoutError:
                    match = await self.store.get_match(match_id)
                    if match.status in (MatchStatus.FINISHED, MatchStatus.ABORTED):
                        await _send(response, "end", _end(match))
                        return response
                    await response.write(b": keepalive\n\n")
                    continue
                if payload["kind"] == "step" and payload["step"] > last:
                    drawing = self.drawings.drawing(
                        match_id, payload["step"], payload["state"], grids
                    )
                    await _send(response, "step", step_frame(payload, drawing))
                    last = payload["step"]
                elif payload["kind"] == "shutdown":
                    return response
                elif payload["kind"] == "end":
                    await _send(
                        response,
                        "end",
                        {
                            "status": "finished",
                            "reason": payload["reason"],
                            "goals": payload["goals"],
                        },
                    )
                    return response
        except ConnectionResetError:
            pass  # the viewer left
        finally:
            self.service.live.unsubscribe(subscription)
        return response

    async def replay_frames(self, request: web.Request) -> web.Response:
        """A ggp.org log (uploaded as JSON, or fetched from ``url``) as frames for the pages."""
        data = parse_json(await request.read(), field="log", what="the log")
        if isinstance(data, dict) and set(data) == {"url"}:
            data = await _fetch_log(str(data["url"]))
        if isinstance(data, dict) and "data" in data and "states" not in data:
            data = data["data"]  # an archive line {"url": ..., "data": ...}
        if not isinstance(data, dict):
            raise InvalidInput("a match log is a JSON object", field="log")
        try:
            record = MatchRecord.model_validate(data)
        except ValidationError as error:
            raise InvalidInput(
                f"this is not a ggp.org match log: {error.errors()[0]['msg']}"
            ) from error
        rules = record.game_rulesheet
        if rules is None and record.game_name and is_bundled(record.game_name):
            rules = game_text(record.game_name)
        grids = await self.drawings.grids(rules, record.states)
        frames = []
        for index, state in enumerate(record.states):
            frames.append(
                {
                    "step": index,
                    "moves": record.moves[index - 1] if 0 < index <= len(record.moves) else None,
                    "errors": _at(record.errors, index) or [],
                    "times": _at(record.response_times, index) or [],
                    "board": self.drawings.drawing(f"log:{record.match_id}", index, state, grids),
                }
            )
        roles = record.game_role_names or [
            f"role {n + 1}" for n in range(len((record.moves or [[]])[0]))
        ]
        return web.json_response(
            {
                "info": {
                    "id": record.match_id,
                    "game": record.game_name or record.game_meta_url or "",
                    "roles": roles,
                    "players": record.player_names_from_host or [],
                    "playclock": record.play_clock,
                },
                "frames": frames,
                "end": {
                    "status": "finished" if record.is_completed else "aborted",
                    "reason": str(record.end_reason or ""),
                    "goals": record.goal_values,
                },
            }
        )


def _at(values: list[Any] | None, index: int) -> Any:
    return values[index] if values is not None and index < len(values) else None


def _ordinal(rating: RatingRow | None) -> float:
    return rating.mu - 3 * rating.sigma if rating is not None else 0.0


def _status(request: web.Request) -> MatchStatus | None:
    text = request.query.get("status", "")
    try:
        return MatchStatus(text) if text else None
    except ValueError as error:
        raise InvalidInput(
            f"status is one of {', '.join(s.value for s in MatchStatus)}", field="status"
        ) from error


def _card(match: MatchRow) -> dict[str, Any]:
    """A running match as the home page lists it."""
    return {"id": match.id, "game": match.game_name, "players": _names(match.players)}


def _names(players: list[str | None]) -> list[str]:
    return [name or "random" for name in players]


def _page(request: web.Request) -> int:
    text = request.query.get("page", "0")
    return whole_number(text, most=99_999) or 0


def _info(match: Any, roles: list[str]) -> dict[str, Any]:
    return {
        "id": match.id,
        "game": match.game_name,
        "roles": roles,
        "players": [name or "random" for name in match.players],
        "status": match.status.value,
        "playclock": match.play_clock,
        "startclock": match.start_clock,
    }


def _end(match: Any) -> dict[str, Any]:
    return {"status": match.status.value, "reason": match.end_reason, "goals": match.goals}


def _event_stream() -> web.StreamResponse:
    return web.StreamResponse(
        headers={
            "Content-Type": "text/event-stream",
            "Cache-Control": "no-cache",
            "X-Accel-Buffering": "no",
        }
    )


async def _send(response: web.StreamResponse, event: str, data: dict[str, Any]) -> None:
    text = json.dumps(data, separators=(",", ":"))
    await response.write(f"event: {event}\ndata: {text}\n\n".encode())


async def _fetch_log(url: str) -> Any:
    if not url.startswith(("http://", "https://")):
        raise InvalidInput("the log's URL must start with http:// or https://", field="url")
    try:
        async with (
            ClientSession(timeout=ClientTimeout(total=10)) as session,
            session.get(url) as reply,
        ):
            if reply.status != 200:
                raise InvalidInput(f"the log's URL answered {reply.status}", field="url")
            body = await reply.content.read(MAX_LOG_BYTES + 1)
    except (ClientError, TimeoutError, ValueError) as error:
        raise InvalidInput(f"the log could not be fetched: {error}", field="url") from error
    if len(body) > MAX_LOG_BYTES:
        raise InvalidInput("the log is too large", field="url")
    return parse_json(body, field="url", what="the log at that URL")


def add_site(app: web.Application, service: Service) -> None:
    """Add the pages, their data and the static files to ``app``."""
    site = Site(service)
    app.router.add_get("/", site.home)
    app.router.add_get("/live/events", site.live_events)
    app.router.add_get("/matches", site.matches_page)
    app.router.add_get("/matches/{id}", site.match_page)
    app.router.add_get("/matches/{id}/events", site.match_events)
    app.router.add_get("/replay", site.replay_page)
    app.router.add_post("/replay/frames", site.replay_frames)
    app.router.add_get("/players", site.players_page)
    app.router.add_get("/players/{name}", site.player_page)
    app.router.add_get("/games", site.games_page)
    app.router.add_get("/games/{name}", site.game_page)
    app.router.add_get("/tournaments", site.tournaments_page)
    app.router.add_get("/tournaments/{id}", site.tournament_page)
    app.router.add_get("/admin", site.admin_page)
    app.router.add_get("/play", site.play_form)
    app.router.add_post("/play", site.play_create)
    app.router.add_get("/play/{seat}", site.play_page)
    app.router.add_get("/play/{seat}/turn", site.play_turn)
    app.router.add_post("/play/{seat}/move", site.play_move)
    app.router.add_route("*", "/human/{seat}", site.human_endpoint)
    app.router.add_static("/static/", STATIC)

    async def end_streams(_app: web.Application) -> None:
        service.live.close_streams()

    app.on_shutdown.append(end_streams)
