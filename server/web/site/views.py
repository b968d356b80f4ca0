"""The page handlers: HTML pages, their JSON and the live event stream of a match."""

from __future__ import annotations

import asyncio
import json
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aiohttp import ClientError, ClientSession, ClientTimeout, web
from pydantic import ValidationError

from server.errors import Clash, InvalidInput, Missing
from server.games import game_text, is_bundled
from server.gdl import Game
from server.records import MatchRecord
from server.runner import MatchRequest, queue_match
from server.store import MatchStatus
from server.store.player_checks import list_checks

from .frames import Drawings, draw, step_frame
from .human import Seat, Seats
from .render import Pages

if TYPE_CHECKING:
    from server.web.service import Service

STATIC = Path(str(resources.files(__package__) / "static"))
PAGE_SIZE = 25
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

    # -- pages -------------------------------------------------------------------------

    def html(self, template: str, **context: Any) -> web.Response:
        return web.Response(text=self.pages.render(template, **context), content_type="text/html")

    async def home(self, request: web.Request) -> web.Response:
        page = _page(request)
        running = await self.store.list_matches(status=MatchStatus.RUNNING, limit=50)
        queued = await self.store.list_matches(status=MatchStatus.QUEUED, limit=10)
        recent = await self.store.list_matches(
            status=MatchStatus.FINISHED, limit=PAGE_SIZE + 1, offset=page * PAGE_SIZE
        )
        players = await self.store.list_players()
        return self.html(
            "home.html",
            running=running,
            queued=queued,
            recent=recent[:PAGE_SIZE],
            page=page,
            more=len(recent) > PAGE_SIZE,
            players=players,
        )

    async def match_page(self, request: web.Request) -> web.Response:
        match = await self.store.get_match(request.match_info["id"])
        return self.html("match.html", match=match)

    async def replay_page(self, request: web.Request) -> web.Response:
        return self.html("replay.html")

    async def player_page(self, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        player = await self.store.get_player(name)
        pings = await self.store.ping_history(name, limit=20)
        matches = await self.store.list_matches(player=name, limit=200)
        results: dict[tuple[str, str], list[int]] = {}
        errors: list[tuple[str, int, str]] = []
        for match in matches:
            if match.goals is None:
                continue
            for index, seated in enumerate(match.players):
                if seated == name and index < len(match.goals):
                    results.setdefault((match.game_name, f"role {index + 1}"), []).append(
                        match.goals[index]
                    )
        for match in matches[:20]:
            for row in await self.store.steps(match.id):
                for index, seated in enumerate(match.players):
                    if seated == name and index < len(row.errors) and row.errors[index]:
                        errors.append((match.id, row.step, row.errors[index]))
        table = [
            (game, role, len(goals), sum(goals) / len(goals), sum(g == 100 for g in goals))
            for (game, role), goals in sorted(results.items())
        ]
        return self.html(
            "player.html",
            player=player,
            pings=pings,
            table=table,
            errors=errors[:50],
            matches=matches[:PAGE_SIZE],
            checks=await list_checks(self.store, name, limit=10),
        )

    async def game_page(self, request: web.Request) -> web.Response:
        game = await self.store.get_game(request.match_info["name"])
        drawing = self.initial_drawings.get(game.rules_hash)
        if drawing is None:
            grids = await self.drawings.grids(game.rules_text)
            try:
                loaded = await asyncio.to_thread(Game.from_text, game.rules_text)
                drawing = draw(loaded.initial_state().to_ggp(), grids)
            except Exception:  # rules the engine refuses are shown without a picture
                drawing = {"boards": [], "facts": []}
            self.initial_drawings[game.rules_hash] = drawing
        return self.html(
            "game.html",
            game=game,
            drawing=json.dumps(drawing),
            lint=game.lint_report or {},
        )

    async def admin_page(self, request: web.Request) -> web.Response:
        games = await self.store.list_games()
        return self.html("admin.html", games=games)

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
        play_clock = int(clock) if clock.isdigit() and 5 <= int(clock) <= 300 else 20
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
        try:
            move = str((await request.json())["move"])
        except (ValueError, KeyError, TypeError) as error:
            raise InvalidInput('send {"move": "..."}', field="move") from error
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

    async def match_events(self, request: web.Request) -> web.StreamResponse:
        """Server-sent events: ``info``, every stored step, then live steps and ``end``."""
        match_id = request.match_info["id"]
        match = await self.store.get_match(match_id)
        game = await self.store.get_game(match.game_name, match.game_version)
        subscription = self.service.live.subscribe(match_id)
        response = web.StreamResponse(
            headers={
                "Content-Type": "text/event-stream",
                "Cache-Control": "no-cache",
                "X-Accel-Buffering": "no",
            }
        )
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
        body = await request.read()
        try:
            data = json.loads(body or b"null")
        except (ValueError, UnicodeDecodeError) as error:
            raise InvalidInput("the log is not JSON", field="log") from error
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


def _page(request: web.Request) -> int:
    text = request.query.get("page", "0")
    return int(text) if text.isdigit() and int(text) < 100_000 else 0


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
    try:
        return json.loads(body)
    except (ValueError, UnicodeDecodeError) as error:
        raise InvalidInput("the log at that URL is not JSON", field="url") from error


def add_site(app: web.Application, service: Service) -> None:
    """Add the pages, their data and the static files to ``app``."""
    site = Site(service)
    app.router.add_get("/", site.home)
    app.router.add_get("/matches/{id}", site.match_page)
    app.router.add_get("/matches/{id}/events", site.match_events)
    app.router.add_get("/replay", site.replay_page)
    app.router.add_post("/replay/frames", site.replay_frames)
    app.router.add_get("/players/{name}", site.player_page)
    app.router.add_get("/games/{name}", site.game_page)
    app.router.add_get("/admin", site.admin_page)
    app.router.add_get("/play", site.play_form)
    app.router.add_post("/play", site.play_create)
    app.router.add_get("/play/{seat}", site.play_page)
    app.router.add_get("/play/{seat}/turn", site.play_turn)
    app.router.add_post("/play/{seat}/move", site.play_move)
    app.router.add_route("*", "/human/{seat}", site.human_endpoint)
    app.router.add_static("/static/", STATIC)
