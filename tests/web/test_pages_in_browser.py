"""The pages in a real browser (headless Chromium): a live match, its replay, a log replayed."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from aiohttp.test_utils import TestClient

from server.match.local_players import local_players

from .browser import SCREENSHOTS, launch_browser
from .harness import ADMIN_HEADERS, running_service, wait_for_status

SEED_GAMES = [
    "tictactoex9",
    "ticTacHeaven",
    "nineBoardTicTacToe",
    "nineBoardTicTacToePie",
    "double_tictactoe_dengji",
]


@pytest_asyncio.fixture
async def browser() -> AsyncIterator[Any]:
    async for launched in launch_browser():
        yield launched


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'pages.db'}"


async def register_two(client: TestClient, urls: tuple[str, str]) -> None:
    for name, url in zip(("rnd", "lgl"), urls, strict=True):
        response = await client.post(
            "/api/players", json={"name": name, "url": url}, headers=ADMIN_HEADERS
        )
        assert response.status == 201, await response.text()


async def queue(client: TestClient, game: str, step_limit: int | None = None) -> str:
    body: dict[str, Any] = {"game": game, "players": ["rnd", "lgl"], "startclock": 5}
    body["playclock"] = 1
    if step_limit is not None:
        body["step_limit"] = step_limit
    response = await client.post("/api/matches", json=body, headers=ADMIN_HEADERS)
    assert response.status == 201, await response.text()
    match_id: str = (await response.json())["id"]
    return match_id


# Records every step the board shows, from the first drawing on.
WATCH_STEPS = """
window.seenSteps = [];
new MutationObserver(() => {
  const board = document.getElementById('board');
  if (board && board.dataset.step !== undefined) {
    const step = Number(board.dataset.step);
    if (window.seenSteps[window.seenSteps.length - 1] !== step) window.seenSteps.push(step);
  }
}).observe(document, {subtree: true, attributes: true, attributeFilter: ['data-step']});
"""


def squares_of_state(state: str) -> dict[str, str]:
    """``place -> content`` of every 4-coordinate ``cell`` fluent of a tictactoex9 state."""
    found = re.findall(r"\( cell (\d) (\d) (\d) (\d) (\w+) \)", state)
    return {" ".join(place): ("" if mark == "b" else mark) for *place, mark in found}


async def drawn_squares(page: Any) -> dict[str, str]:
    result: dict[str, str] = await page.eval_on_selector_all(
        "#board td[data-place]",
        "cells => Object.fromEntries(cells.map(c => [c.dataset.place, c.dataset.content]))",
    )
    return result


async def test_a_live_match_draws_each_step_then_the_goals_then_replays_to_a_step(
    tmp_path: Path, sqlite_url: str, browser: Any
) -> None:
    async with (
        local_players(["random", "legal"], seed=5) as urls,
        running_service(tmp_path, sqlite_url) as (_, client),
    ):
        await register_two(client, urls)
        match_id = await queue(client, "tictactoex9")
        page = await browser.new_page(viewport={"width": 390, "height": 844})
        await page.add_init_script(WATCH_STEPS)
        await page.goto(str(client.make_url(f"/matches/{match_id}")))
        await page.wait_for_selector(".viewer[data-ended]", timeout=60_000)
        match = await wait_for_status(client, match_id, {"finished", "aborted"})
        log = await (await client.get(f"/api/matches/{match_id}/log")).json()
        seen = await page.evaluate("window.seenSteps")
        assert len(seen) >= 2 and seen[-1] == len(log["states"]) - 1, seen
        goals = await page.locator(".goal").all_inner_texts()
        assert [int(goal) for goal in goals] == match["goals"] == log["goalValues"]
        assert await drawn_squares(page) == squares_of_state(log["states"][-1])
        # replay: back to the start, then forward to step 5 and by the slider to step 9
        await page.click("#first")
        assert await drawn_squares(page) == squares_of_state(log["states"][0])
        for _ in range(5):
            await page.click("#next")
        assert await page.get_attribute("#board", "data-step") == "5"
        assert await drawn_squares(page) == squares_of_state(log["states"][5])
        await page.locator("#slider").fill("9")
        assert await drawn_squares(page) == squares_of_state(log["states"][9])
        assert await page.locator("#moves li").count() == len(log["moves"])
        await page.select_option("#speed", "150")
        await page.click("#play")
        await page.wait_for_function(
            f"document.getElementById('board').dataset.step === '{len(log['states']) - 1}'"
        )
        href = await page.get_attribute("#log-link", "href")
        assert href == f"/api/matches/{match_id}/log"
        # the same log, uploaded to the replay page and given there by URL
        path = tmp_path / "log.json"
        path.write_text(await (await client.get(href)).text(), encoding="utf-8")
        await page.goto(str(client.make_url("/replay")))
        await page.set_input_files("#log-file", str(path))
        await page.click("button[type=submit]")
        await page.wait_for_selector(".viewer[data-ended]")
        assert await drawn_squares(page) == squares_of_state(log["states"][0])
        await page.goto(str(client.make_url("/replay")))
        await page.fill("#log-url", str(client.make_url(href)))
        await page.click("button[type=submit]")
        await page.wait_for_selector(".viewer[data-ended]")
        await page.click("#last")
        assert await drawn_squares(page) == squares_of_state(log["states"][-1])
        await page.goto(str(client.make_url("/replay")))
        await page.fill("#log-url", str(client.make_url("/no-such-log")))
        await page.click("button[type=submit]")
        await page.wait_for_selector("#replay-error:not(:empty)")
        assert "404" in await page.inner_text("#replay-error")


async def test_every_seed_game_draws_on_its_match_page(
    tmp_path: Path, sqlite_url: str, browser: Any
) -> None:
    """Leaves a screenshot per game in ``screenshots/`` for a reviewer."""
    SCREENSHOTS.mkdir(exist_ok=True)
    async with (
        local_players(["random", "legal"], seed=9) as urls,
        running_service(tmp_path, sqlite_url) as (_, client),
    ):
        await register_two(client, urls)
        ids = {game: await queue(client, game, step_limit=30) for game in SEED_GAMES}
        page = await browser.new_page(viewport={"width": 1100, "height": 900})
        for game, match_id in ids.items():
            await wait_for_status(client, match_id, {"finished", "aborted"}, seconds=120)
            await page.goto(str(client.make_url(f"/matches/{match_id}")))
            await page.wait_for_selector(".viewer[data-ended]")
            assert await page.locator("#board table.grid").count() >= 1, game
            await page.screenshot(path=str(SCREENSHOTS / f"match-{game}.png"), full_page=True)
        await page.goto(str(client.make_url("/games/tictactoex9")))
        assert await page.locator("#board table.grid").count() == 9
        await page.goto(str(client.make_url("/")))
        assert await page.locator("text=Recent results").count() == 1
        await page.screenshot(path=str(SCREENSHOTS / "home.png"), full_page=True)
        await page.goto(str(client.make_url("/players/rnd")))
        assert await page.inner_text("#player-status") in {"available", "busy"}


async def test_a_person_plays_a_whole_match_against_the_random_player_by_clicking(
    tmp_path: Path, sqlite_url: str, browser: Any
) -> None:
    async with (
        local_players(["random", "legal"], seed=11) as urls,
        running_service(tmp_path, sqlite_url) as (_, client),
    ):
        await register_two(client, urls)
        page = await browser.new_page(viewport={"width": 390, "height": 844})
        await page.goto(str(client.make_url("/play")))
        await page.select_option("#play-game", "tictactoex9")
        await page.select_option("#play-role", "xplayer")
        await page.select_option("#play-opponent", "rnd")
        await page.click("#play-form button[type=submit]")
        await page.wait_for_url("**/play/*")
        clicks = 0
        while True:
            await page.wait_for_selector("#board td.clickable, .viewer[data-ended]", timeout=60_000)
            if await page.locator(".viewer[data-ended]").count():
                break
            assert "s left" in await page.inner_text("#countdown")
            step = await page.get_attribute("#board", "data-step")
            await page.locator("#board td.clickable").first.click()
            clicks += 1
            await page.wait_for_function(
                f"document.getElementById('board').dataset.step !== '{step}'"
                " || document.querySelector('.viewer[data-ended]')",
                timeout=60_000,
            )
        match_id = (await page.get_attribute("#log-link", "href") or "").split("/")[3]
        log = await (await client.get(f"/api/matches/{match_id}/log")).json()
        await page.screenshot(path=str(SCREENSHOTS / "play-tictactoex9.png"), full_page=True)
    assert log["isCompleted"] and log["endReason"] == "terminal"
    mine = [moves[0] for moves in log["moves"] if moves[0] != "noop"]
    assert len(mine) == clicks >= 3
    assert not any(errors[0] for errors in log["errors"]), (
        "every clicked move was legal and in time"
    )
    goals = await page.locator(".goal").all_inner_texts()
    assert [int(goal) for goal in goals] == log["goalValues"]


async def test_admin_pages_refuse_to_act_without_the_token(
    tmp_path: Path, sqlite_url: str, browser: Any
) -> None:
    async with running_service(tmp_path, sqlite_url) as (_, client):
        page = await browser.new_page()
        await page.goto(str(client.make_url("/admin")))
        await page.fill("#register-form input[name=name]", "intruder")
        await page.fill("#register-form input[name=url]", "http://127.0.0.1:9/")
        await page.click("#register-form button")
        await page.wait_for_selector("#admin-result[data-status]")
        assert await page.get_attribute("#admin-result", "data-status") == "401"
        assert "refused" in await page.inner_text("#admin-result")
        assert (await client.get("/api/players/intruder")).status == 404
        await page.fill("#upload-form input[name=name]", "mine")
        await page.fill("#upload-form textarea", "(role a)")
        await page.click("#upload-form button")
        await page.wait_for_function(
            "document.getElementById('admin-result').dataset.status === '401'"
        )
        await page.fill("#admin-token", "wrong token")
        await page.click("#register-form button")
        await page.wait_for_function(
            "document.getElementById('admin-result').dataset.status === '401'"
        )
        assert (await client.get("/api/players/intruder")).status == 404
        # with the token the same form acts
        await page.fill("#admin-token", ADMIN_HEADERS["Authorization"].split()[1])
        await page.evaluate("document.getElementById('admin-result').dataset.status = ''")
        await page.click("#register-form button")
        await page.wait_for_function(
            "document.getElementById('admin-result').dataset.status === '201'"
        )
        assert (await client.get("/api/players/intruder")).status == 200
        await page.fill("#suspend-form input[name=name]", "intruder")
        await page.click("#suspend-form button")
        await page.wait_for_function(
            "document.getElementById('admin-result').dataset.status === '200'"
        )
        assert (await (await client.get("/api/players/intruder")).json())["suspended"] is True


TOURNAMENT_GAME = "double_tictactoe_dengji"


async def run_tournaments(client: TestClient, specs: list[dict[str, Any]]) -> list[str]:
    """Create the tournaments (they run at once, side by side) and wait until all end."""
    ids = []
    for spec in specs:
        body = {"game": TOURNAMENT_GAME, "startclock": 3, "playclock": 1, "seed": 2, **spec}
        response = await client.post("/api/tournaments", json=body, headers=ADMIN_HEADERS)
        assert response.status == 201, await response.text()
        ids.append((await response.json())["id"])
    async with asyncio.timeout(300):
        for tournament_id in ids:
            while True:
                found = await (await client.get(f"/api/tournaments/{tournament_id}")).json()
                if found["status"] not in ("created", "running"):
                    break
                await asyncio.sleep(0.3)
            assert found["status"] == "finished", found
    return ids


async def column(page: Any, table: str, index: int) -> list[str]:
    texts: list[str] = await page.eval_on_selector_all(
        f"#{table} tbody tr", f"rows => rows.map(r => r.cells[{index}].textContent.trim())"
    )
    return texts


async def test_tournament_pages_show_standings_sort_them_and_draw_the_bracket(
    tmp_path: Path, sqlite_url: str, browser: Any
) -> None:
    SCREENSHOTS.mkdir(exist_ok=True)
    names = ["rnd", "lgl", "rnd2", "lgl2"]
    async with (
        local_players(["random", "legal", "random", "legal"], seed=21) as urls,
        running_service(tmp_path, sqlite_url, concurrency=6) as (_, client),
    ):
        for name, url in zip(names, urls, strict=True):
            response = await client.post(
                "/api/players", json={"name": name, "url": url}, headers=ADMIN_HEADERS
            )
            assert response.status == 201, await response.text()
        round_robin, elimination = await run_tournaments(
            client,
            [
                {"name": "Round robin", "format": "round_robin", "players": names[:3]},
                {"name": "Cup", "format": "single_elimination", "players": names},
            ],
        )
        table = await (await client.get(f"/api/tournaments/{round_robin}/standings")).json()
        cup = await (await client.get(f"/api/tournaments/{elimination}/standings")).json()
        page = await browser.new_page(viewport={"width": 1100, "height": 900})
        await page.goto(str(client.make_url(f"/tournaments/{round_robin}")))
        assert await column(page, "standings", 1) == [line["player"] for line in table]
        assert "6 / 6 done" in await page.inner_text("#progress")
        assert await page.locator("#crosstable tbody tr").count() == 3
        await page.screenshot(path=str(SCREENSHOTS / "tournament-round-robin.png"), full_page=True)
        # sorting: by wins (ascending, then descending), by player name
        await page.click("#standings th:text-is('Wins')")
        wins = [int(text) for text in await column(page, "standings", 4)]
        assert wins == sorted(wins)
        await page.click("#standings th:text-is('Wins')")
        wins = [int(text) for text in await column(page, "standings", 4)]
        assert wins == sorted(wins, reverse=True)
        assert await page.get_attribute("#standings th:text-is('Wins')", "aria-sort") == (
            "descending"
        )
        await page.click("#standings th:text-is('Player')")
        assert await column(page, "standings", 1) == sorted(names[:3])
        await page.click("#standings th:text-is('Rank')")
        await page.click("#standings th:text-is('Rank')")
        await page.click("#standings th:text-is('Rank')")
        assert await column(page, "standings", 1) == [line["player"] for line in table]
        # every match links to its page
        (first_match,) = await page.eval_on_selector(
            "#tournament-matches a", "a => [a.getAttribute('href')]"
        )
        assert first_match.startswith("/matches/")
        # the elimination: four players, two rounds, the champion marked in the final
        await page.goto(str(client.make_url(f"/tournaments/{elimination}")))
        assert await page.locator("#bracket .round").count() == 2
        assert await page.locator("#bracket .round").nth(0).locator(".tie").count() == 2
        final = page.locator("#bracket .round").nth(1)
        assert await final.locator("h3").inner_text() == "Final"
        assert await final.locator(".side.winner .name").inner_text() == cup[0]["player"]
        assert cup[0]["status"] == "winner"
        await page.screenshot(path=str(SCREENSHOTS / "tournament-elimination.png"), full_page=True)
        # on a phone the page does not overflow: wide tables and the bracket scroll inside
        phone = await browser.new_page(viewport={"width": 390, "height": 844})
        for path in (f"/tournaments/{elimination}", f"/tournaments/{round_robin}", "/players/rnd"):
            await phone.goto(str(client.make_url(path)))
            width = await phone.evaluate("document.documentElement.scrollWidth")
            assert width <= 390, (path, width)
        await phone.goto(str(client.make_url(f"/tournaments/{elimination}")))
        await phone.screenshot(path=str(SCREENSHOTS / "tournament-phone.png"), full_page=True)
        await phone.goto(str(client.make_url("/players/rnd")))
        assert await phone.locator("#rating-chart svg polyline").count() == 1
        await phone.screenshot(path=str(SCREENSHOTS / "player-phone.png"), full_page=True)
        await page.goto(str(client.make_url("/tournaments")))
        assert await page.locator("#tournaments tbody tr").count() == 2
        await page.goto(str(client.make_url(f"/games/{TOURNAMENT_GAME}")))
        assert await page.inner_text("#engine") in {"compiled", "interpreter"}
        assert "transitions per second" in await page.inner_text("#speed")
        assert await page.locator("#seats tbody tr").count() == 2
        await page.screenshot(path=str(SCREENSHOTS / "game.png"), full_page=True)


THREE_ROLES = """
(role a) (role b) (role c)
(init (step 0))
(<= (legal ?r noop) (role ?r))
(<= (next (step 1)) (true (step 0)))
(<= terminal (true (step 1)))
(<= (goal ?r 50) (role ?r))
"""


async def test_the_admin_page_creates_and_controls_a_tournament_showing_errors_by_the_fields(
    tmp_path: Path, sqlite_url: str, browser: Any
) -> None:
    async with (
        local_players(["random", "legal"], seed=31) as urls,
        running_service(tmp_path, sqlite_url) as (_, client),
    ):
        await register_two(client, urls)
        uploaded = await client.post(
            "/api/games", json={"name": "three", "rules": THREE_ROLES}, headers=ADMIN_HEADERS
        )
        assert uploaded.status == 201, await uploaded.text()
        page = await browser.new_page(viewport={"width": 1000, "height": 1200})
        await page.goto(str(client.make_url("/admin")))
        form = "#tournament-form"
        # checked in the page: nothing is sent
        await page.click(f"{form} button[type=submit]")
        assert await page.get_attribute(form, "data-checked") == "refused"
        assert "name" in await page.inner_text(f"{form} [data-error-for=name]")
        assert "two players" in await page.inner_text(f"{form} [data-error-for=players]")
        await page.fill(f"{form} input[name=name]", "Cup")
        await page.check(f"{form} input[name=players][value=rnd]")
        await page.check(f"{form} input[name=players][value=lgl]")
        await page.select_option(f"{form} select[name=format]", "swiss")
        await page.fill(f"{form} input[name=playclock]", "0")
        await page.click(f"{form} button[type=submit]")
        assert "rounds" in await page.inner_text(f"{form} [data-error-for=rounds]")
        assert "1 or more" in await page.inner_text(f"{form} [data-error-for=playclock]")
        assert await page.inner_text(f"{form} [data-error-for=name]") == ""
        assert (await (await client.get("/api/tournaments")).json()) == []
        # checked by the API: without the token, then a three-role game for a Swiss
        await page.fill(f"{form} input[name=playclock]", "1")
        await page.fill(f"{form} input[name=rounds]", "2")
        await page.click(f"{form} button[type=submit]")
        await page.wait_for_function("document.getElementById('admin-result').dataset.status")
        assert await page.get_attribute("#admin-result", "data-status") == "401"
        await page.fill("#admin-token", ADMIN_HEADERS["Authorization"].split()[1])
        await page.select_option(f"{form} select[name=game]", "three")
        await page.click(f"{form} button[type=submit]")
        await page.wait_for_function(
            "document.getElementById('admin-result').dataset.status === '400'"
        )
        assert "two-role" in await page.inner_text(f"{form} [data-error-for=format]")
        assert await page.get_attribute(f"{form} select[name=format]", "aria-invalid") == "true"
        await page.screenshot(path=str(SCREENSHOTS / "admin-errors.png"), full_page=True)
        # a valid spec, kept created; then started, paused, resumed and cancelled by buttons
        await page.select_option(f"{form} select[name=game]", TOURNAMENT_GAME)
        await page.select_option(f"{form} select[name=format]", "round_robin")
        await page.fill(f"{form} input[name=rounds]", "")
        await page.fill(f"{form} input[name=playclock]", "5")
        await page.uncheck(f"{form} input[name=start]")
        await page.click(f"{form} button[type=submit]")
        await page.wait_for_function(
            "document.getElementById('tournament-form').dataset.checked === 'created'"
        )
        tournament_id = await page.get_attribute(form, "data-created")
        assert await page.inner_text(f"{form} [data-error-for=format]") == ""
        created = await (await client.get(f"/api/tournaments/{tournament_id}")).json()
        assert created["status"] == "created" and created["spec"]["players"] == ["rnd", "lgl"]
        await page.goto(str(client.make_url("/admin")))
        await page.fill("#admin-token", ADMIN_HEADERS["Authorization"].split()[1])
        row = f"#tournament-controls tr[data-tournament='{tournament_id}']"
        assert await page.is_disabled(f"{row} button[data-action=pause]")
        for action, status in (
            ("start", "running"),
            ("pause", "paused"),
            ("resume", "running"),
            ("cancel", "cancelled"),
        ):
            await page.click(f"{row} button[data-action={action}]")
            await page.wait_for_function(
                f"document.querySelector(\"{row} .t-status\").textContent === '{status}'"
            )
            found = await (await client.get(f"/api/tournaments/{tournament_id}")).json()
            assert found["status"] == status, action
            home = await (await client.get("/")).text()
            in_progress = f'href="/tournaments/{tournament_id}"' in home
            assert in_progress == (status in ("running", "paused")), status
        assert await page.is_disabled(f"{row} button[data-action=resume]")
        await page.screenshot(path=str(SCREENSHOTS / "admin-tournaments.png"), full_page=True)


SEEN_RUNNING_SCRIPT = """() => {
    window.seenRunning = [];
    const note = (node) => {
        if (node.nodeType !== 1) return;
        if (node.matches('li[data-match]')) window.seenRunning.push(node.dataset.match);
        node.querySelectorAll('li[data-match]').forEach(
            (item) => window.seenRunning.push(item.dataset.match));
    };
    new MutationObserver((records) => records.forEach((record) =>
        record.addedNodes.forEach(note))
    ).observe(document.querySelector('#running'), {childList: true, subtree: true});
}"""
"""Records in ``window.seenRunning`` the match of every item ever put in the running list."""


async def test_the_home_page_shows_a_match_start_and_end_without_reloading(
    tmp_path: Path, sqlite_url: str, browser: Any
) -> None:
    async with (
        local_players(["random", "legal"], seed=41) as urls,
        running_service(tmp_path, sqlite_url) as (_, client),
    ):
        await register_two(client, urls)
        page = await browser.new_page(viewport={"width": 390, "height": 844})
        await page.goto(str(client.make_url("/")))
        await page.evaluate("window.notReloaded = true")
        assert await page.is_visible("#none-running")
        await page.wait_for_selector("#running[data-connected]", state="attached")  # streaming
        # every match the list ever showed (a fast match may come and go between two looks)
        await page.evaluate(SEEN_RUNNING_SCRIPT)
        match_id = await queue(client, "tictactoex9")
        await page.wait_for_function(
            f"window.seenRunning.includes('{match_id}')", timeout=30_000, polling=50
        )
        await page.wait_for_selector(f"#recent tr[data-match='{match_id}']", timeout=60_000)
        assert await page.locator(f"#running li[data-match='{match_id}']").count() == 0
        match = await wait_for_status(client, match_id, {"finished"})
        goals = await page.inner_text(f"#recent tr[data-match='{match_id}'] td:nth-child(4)")
        assert goals == ", ".join(str(goal) for goal in match["goals"])
        assert await page.evaluate("window.notReloaded") is True
