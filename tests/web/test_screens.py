"""Every state of the dealer display and the supervisor panel at 1280x800, in headless Chromium
against the whole stack (software shoe, controller, web server): what the dealer and the
supervisor see in each, asserted, and a screenshot of each saved for people to look at
(``SHOE_WEB_SCREENSHOTS``, see conftest.py).

The prompts, remedies and levels are the table's (another part of the product words them): the
tests check that the page shows whatever the table's view says, never a copy of the wording.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from shoe_controller.cards import new_shoe
from shoe_controller.table.irregularities import Irregularity

from .rig import PIN, SUPERVISOR, WebTable, web_table

CARDS = new_shoe(1, 3)  # burn 2; round 1: 4 cards (natural tie); round 2: 6 cards; round 3: 4

expect.set_options(timeout=10_000)


def shot(page: Page, folder: Path, name: str) -> None:
    page.screenshot(path=str(folder / f"{name}.png"))


def shows_the_view(page: Page, table: WebTable) -> None:
    """The page shows the table's own prompt, level and exit lock (whatever their words)."""
    view = table.controller.view
    expect(page.get_by_test_id("prompt")).to_have_attribute("data-text", view.prompt)
    expect(page.get_by_test_id("prompt")).to_have_class(
        re.compile(rf"\blevel-{view.level.value}\b"))
    badge = page.get_by_test_id("exit")
    expect(badge).to_have_attribute("data-locked", "true" if view.exit_locked else "false")
    expect(page.get_by_test_id("exit-word")).to_have_text(
        "Locked" if view.exit_locked else "Open")
    fits(page, "prompt")


def fits(page: Page, testid: str) -> None:
    """The element's text is not clipped: it fits its box."""
    overflow = page.get_by_test_id(testid).evaluate(
        "(n) => [n.scrollWidth - n.clientWidth, n.scrollHeight - n.clientHeight]")
    assert overflow[0] <= 1 and overflow[1] <= 1, f"{testid} overflows by {overflow}"


def burn(table: WebTable) -> None:
    table.wait(lambda: table.controller.view.due == "burn", "the shoe to be loaded")
    while table.controller.view.due == "burn":
        table.pull()


def to_first_card(table: WebTable) -> None:
    burn(table)
    table.wait(lambda: table.controller.view.due == "player", "betting to close")


def unlock(page: Page) -> None:
    page.get_by_test_id("open-panel").click()
    page.get_by_test_id("sup-id").fill(SUPERVISOR)
    page.get_by_test_id("sup-pin").fill(PIN)
    page.get_by_test_id("unlock").click()
    expect(page.get_by_test_id("actions")).to_be_visible()


def test_idle_betting_dealing_result_extra_card_and_the_panel(
        tmp_path: Path, page: Page, artifacts: Path) -> None:
    with web_table(tmp_path, CARDS, start_shoe=False) as table:
        table.hold_betting()
        page.goto(table.url)
        # No shoe connected: the table's prompt, the exit locked, and a chip saying so.
        table.wait(lambda: page.get_by_test_id("prompt").get_attribute("data-text")
                   == table.controller.view.prompt, "the idle prompt")
        shows_the_view(page, table)
        expect(page.get_by_test_id("exit")).to_have_class("exit-badge locked")
        expect(page.get_by_test_id("exit")).to_contain_text("Exit Locked")
        expect(page.get_by_test_id("chip-link")).to_be_visible()
        shot(page, artifacts, "01-idle-no-shoe")

        table.start_shoe()
        burn(table)
        expect(page.get_by_test_id("chip-link")).to_be_hidden()
        table.wait(lambda: table.controller.view.state.endswith("betting_open"), "betting")
        shows_the_view(page, table)
        shot(page, artifacts, "02-betting-open")

        table.close_betting()
        table.wait(lambda: table.controller.view.due == "player", "betting to close")
        shows_the_view(page, table)
        expect(page.get_by_test_id("exit")).to_have_class("exit-badge open")
        expect(page.get_by_test_id("exit")).to_contain_text("Exit Open")
        # One card: a partial total, said to be so (a first card's 9 is not a natural).
        first = table.pull()
        total = page.get_by_test_id("player-total")
        expect(page.get_by_test_id("player-total-note")).to_have_text("so far")
        expect(page.get_by_test_id("player-hand")).to_have_class(re.compile(r"\bpartial\b"))
        expect(total).to_have_css("opacity", "1")
        partial_size = float(total.evaluate("(n) => getComputedStyle(n).fontSize")[:-2])
        expect(page.get_by_test_id("player-cards")).to_have_attribute("data-cards",
                                                                       first.card.code)
        card = page.get_by_test_id("player-cards").locator(".card").first
        box = card.bounding_box()
        assert box is not None and box["width"] >= 100 and box["height"] >= 140, box
        shows_the_view(page, table)
        shot(page, artifacts, "03-dealing-partial")

        while not table.controller.view.state.endswith("result_shown"):
            table.pull()
        # Round 1 of this shoe is a natural tie: each natural hand says NATURAL, totals final.
        banner = page.get_by_test_id("result-banner")
        expect(banner).to_be_visible()
        expect(banner).to_contain_text(re.compile(r"^Tie \d+\sto\s\d+ natural$"))
        for name in ("player", "banker"):
            expect(page.get_by_test_id(f"{name}-total-note")).to_have_text("Natural")
            expect(page.get_by_test_id(f"{name}-hand")).not_to_have_class(
                re.compile(r"\bpartial\b"))
        final_size = float(total.evaluate("(n) => getComputedStyle(n).fontSize")[:-2])
        assert final_size > partial_size
        shows_the_view(page, table)
        fits(page, "result-banner")
        shot(page, artifacts, "04-result-natural")

        # Confirmed, betting open for round 2: the last result stays, labelled and not dimmed.
        # (Held open: round 1's close_betting left the table's timer at 0.05 s, and a page
        # checked after betting closed on its own compared a view that had moved on.)
        table.hold_betting()
        table.press_button()
        table.wait(lambda: table.controller.view.state.endswith("betting_open"), "betting")
        expect(banner).to_have_class(re.compile(r"\blast\b"))
        expect(banner).to_contain_text("Round 1 result")
        expect(banner).to_have_css("opacity", "1")
        expect(banner).not_to_contain_text("Last:")
        expect(page.get_by_test_id("player-cards")).to_have_attribute("data-cards", "")
        shows_the_view(page, table)
        shot(page, artifacts, "05-betting-open-last-result")

        table.close_betting()
        table.wait(lambda: table.controller.view.due == "player", "betting to close")
        while not table.controller.view.state.endswith("result_shown"):
            table.pull()
        expect(page.get_by_test_id("player-cards").locator(".card")).to_have_count(3)
        shows_the_view(page, table)
        fits(page, "result-banner")
        shot(page, artifacts, "06-result-third-cards")

        # The card stop fails open: an extra card.
        table.leak_card()
        table.wait(lambda: table.controller.view.alarm == "latched", "the extra card to latch")
        expect(page.get_by_test_id("error")).to_be_visible()
        expect(page.get_by_test_id("error-remedy")).to_have_text(
            table.controller.view.latched[0]["remedy"])
        shows_the_view(page, table)
        expect(page.get_by_test_id("exit")).to_have_class("exit-badge locked")
        shot(page, artifacts, "07-alarm-extra-card")

        page.get_by_test_id("open-panel").click()
        expect(page.get_by_test_id("login")).to_be_visible()
        expect(page.get_by_test_id("actions")).to_be_hidden()
        shot(page, artifacts, "08-panel-locked")
        page.get_by_test_id("sup-id").fill(SUPERVISOR)
        page.get_by_test_id("sup-pin").fill(PIN)
        page.get_by_test_id("unlock").click()
        expect(page.get_by_test_id("actions")).to_be_visible()
        shot(page, artifacts, "09-panel-unlocked")
        page.get_by_test_id("act-clear").click()
        message = page.get_by_test_id("panel-message")
        expect(message.locator(".headline")).to_have_text("DONE: Clear error")
        expect(message).to_contain_text("Journalled as done by alice.")
        expect(message).to_have_attribute("data-kind", "good")
        log = page.get_by_test_id("sup-log")
        expect(log).to_contain_text(f"alice: Cleared: {Irregularity.EXTRA_CARD.prompt}")
        expect(log).not_to_contain_text("irregularity_cleared")
        expect(page.get_by_test_id("error")).to_be_hidden()
        shot(page, artifacts, "10-panel-done")


def test_misread_card_and_a_refused_clear(tmp_path: Path, page: Page, artifacts: Path) -> None:
    with web_table(tmp_path, CARDS, misread_at=(3,)) as table:
        page.goto(table.url)
        to_first_card(table)
        out = table.pull()  # card 3: its face is not read
        table.wait(lambda: table.controller.view.alarm == "latched", "the misread to latch")
        expect(page.get_by_test_id("error")).to_be_visible()
        shows_the_view(page, table)
        shot(page, artifacts, "11-alarm-misread")

        unlock(page)
        page.get_by_test_id("act-clear").click()
        message = page.get_by_test_id("panel-message")
        expect(message.locator(".headline")).to_have_text("REFUSED: Clear error")
        expect(message.locator(".why")).to_have_text(
            "The table refused it: cannot clear yet: Player's 1st card (card 3 out of the "
            "shoe) was not read: enter it, or void the round")
        expect(message).to_have_attribute("data-kind", "bad")
        expect(message).to_have_css("color", "rgb(255, 107, 107)")
        log = page.get_by_test_id("sup-log")
        expect(log).to_contain_text(
            "alice: Clear refused: Player's 1st card (card 3 out of the shoe) was not read: "
            "enter it, or void the round")
        expect(log).not_to_contain_text("clear_refused")
        shot(page, artifacts, "12-panel-refused")

        page.get_by_test_id("card-code").fill(out.card.code)
        page.get_by_test_id("act-enter").click()
        expect(message.locator(".headline")).to_have_text("DONE: Enter card")
        expect(log.locator("li").first).to_have_text(
            f"alice: Cleared: {Irregularity.MISREAD.prompt} (card entered by hand: "
            f"{out.card.code})")
        expect(page.get_by_test_id("error")).to_be_hidden()


@pytest.mark.parametrize("alarm", ["lid-open", "device-fault", "link-lost"])
def test_alarm_screens(alarm: str, tmp_path: Path, page: Page, artifacts: Path) -> None:
    with web_table(tmp_path, CARDS) as table:
        page.goto(table.url)
        to_first_card(table)
        table.pull()
        now = __import__("time").monotonic()
        if alarm == "lid-open":
            table.sim.open_lid(now)
        elif alarm == "device-fault":
            table.sim.jam(now)
        else:
            table.unplug_shoe()
        table.wait(lambda: table.controller.view.alarm == "latched", f"{alarm} to latch",
                   timeout=15)
        expect(page.get_by_test_id("error")).to_be_visible()
        expect(page.get_by_test_id("error-remedy")).to_have_text(
            table.controller.view.latched[0]["remedy"])
        shows_the_view(page, table)
        expect(page.get_by_test_id("exit")).to_have_class("exit-badge locked")
        if alarm == "lid-open":
            expect(page.get_by_test_id("chip-lid")).to_be_visible()
        if alarm == "link-lost":
            expect(page.get_by_test_id("chip-link")).to_be_visible()
        shot(page, artifacts, f"13-alarm-{alarm}")
        if alarm == "link-lost":
            # Then the display itself loses the controller: the whole screen says so.
            table.web.close()
            offline = page.get_by_test_id("offline")
            expect(offline).to_be_visible()
            expect(offline).to_contain_text("Display disconnected")
            expect(offline).to_contain_text("do not deal from it")
            box = offline.bounding_box()
            assert box is not None and box["width"] == 1280 and box["height"] == 800
            shot(page, artifacts, "16-display-disconnected")


def test_shoe_finished(tmp_path: Path, page: Page, artifacts: Path) -> None:
    """The controller stops after the shoe (as the demo does); the web server stays up and the
    page shows the finished shoe, live (not disconnected)."""
    with web_table(tmp_path, CARDS, auto_pull=True, betting_seconds=0, shoes=1) as table:
        table.wait(lambda: not table.thread.is_alive(), "the shoe to finish", timeout=30)
        page.goto(table.url)
        expect(page.get_by_test_id("shoe-summary")).to_be_visible()
        stats = table.get("/api/state")["stats"]
        expect(page.get_by_test_id("shoe-summary")).to_have_text(
            f"Shoe 1 finished{stats['rounds']} rounds: Banker {stats['banker']}, Player "
            f"{stats['player']}, Tie {stats['tie']}")
        shows_the_view(page, table)
        expect(page.locator(".hands")).to_be_hidden()
        banner = page.get_by_test_id("result-banner")
        expect(banner).to_contain_text(f"Round {stats['rounds']} result")
        page.wait_for_timeout(300)
        expect(page.get_by_test_id("offline")).to_be_hidden()
        shot(page, artifacts, "17-shoe-finished")


def test_every_prompt_fits_without_breaking_a_phrase(tmp_path: Path, page: Page,
                                                     artifacts: Path) -> None:
    """Reported: "PLAYER WINS 7 / TO 4". Every prompt the table can give, fed to the page:
    each fits its box at a readable size, and "7 to 4" is never split."""
    prompts = [kind.prompt for kind in Irregularity] + [
        "Player wins 7 to 4", "Banker wins 9 to 8 (natural)", "No more bets: Deal Player",
        "Player stands, Banker draws", "Burn: turn the first card face up",
        "Shoe not connected: check its cable", "Connecting to the shoe..."]
    with web_table(tmp_path, CARDS) as table:
        page.goto(table.url)
        expect(page.get_by_test_id("prompt")).not_to_have_text("Connecting...")
        state = table.get("/api/state")
        for number, text in enumerate(prompts):
            state["view"] = {**state["view"], "prompt": text, "level": "error"}
            state["version"] = 10_000 + number
            page.evaluate("(s) => render(s)", json.loads(json.dumps(state)))
            prompt = page.get_by_test_id("prompt")
            fits(page, "prompt")
            size = float(prompt.evaluate("(n) => getComputedStyle(n).fontSize")[:-2])
            assert size >= 36, (text, size)
            shown = prompt.evaluate("(n) => n.textContent")
            assert re.sub(r"\s+", " ", shown) == text
            for numbers in re.findall(r"\d+ to \d+", text):
                assert numbers.replace(" ", "\u00a0") in shown
            if text == "Player wins 7 to 4":
                shot(page, artifacts, "18-prompt-player-wins")
