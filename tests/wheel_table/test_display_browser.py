"""The roulette dealer display in headless Chromium (Debian's, through the session's one
Playwright: tests/conftest.py), on a real controller following the software wheel over a
loopback line (tests/wheel_table/display_rig.py).

The controller starts each game (host-start mode), so the wheel's n-th number is the n-th
game's. Game 2 has a sensor fault: the page must show game 1's number in its colour, the
countdown while betting is open, the strip with game 2 as a void, the latched irregularity
with its prompt, remedy and detail; a supervisor clears it from the panel (a wrong PIN first)
and game 3's number follows; a dealer's name that is markup is shown as text. What the page
must show comes from the wheel's draw and the colour table of the rule sheet, not from the
table."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from .display_rig import PIN, SUPERVISOR, colour, wheel_display
from .test_display import supervisor_records

pytestmark = pytest.mark.timeout(60)

HOSTILE_NAME = '<img src=x onerror="document.title=1">'

#: The pocket colours of wheel.css, as the browser computes them.
BACKGROUNDS = {"red": "rgb(200, 16, 46)", "black": "rgb(11, 11, 11)",
               "green": "rgb(10, 138, 58)"}


def expect_number(page: Page, number: int, round_: int) -> None:
    shown = page.get_by_test_id("winning-number")
    expect(shown).to_have_attribute("data-number", str(number))
    expect(shown).to_have_text(str(number))
    expect(shown).to_have_attribute("data-colour", colour(number))
    expect(shown).to_have_css("background-color", BACKGROUNDS[colour(number)])
    expect(page.get_by_test_id("result-label")).to_contain_text(f"round {round_}",
                                                                ignore_case=True)
    expect(page.get_by_test_id("number-facts")).to_contain_text(colour(number),
                                                                ignore_case=True)


def test_the_dealer_sees_numbers_the_strip_and_clears_a_latched_fault(
        tmp_path: Path, page: Page) -> None:
    with wheel_display(tmp_path, seed=21, host_starts=True, faults={2: "sensor"},
                       betting_seconds=2.0) as table:
        page.goto(table.url)
        expect(page.get_by_test_id("profile")).to_have_text("roulette-single-zero")
        expect(page.get_by_test_id("wheel-badge")).to_have_attribute("data-connected", "true")
        table.wait(lambda: len(table.wheel.numbers) >= 1, "game 1's number")
        first = table.wheel.numbers[0]
        expect_number(page, first, 1)
        # game 2 opens: the countdown runs while betting is open
        expect(page.get_by_test_id("countdown")).to_be_visible()
        expect(page.get_by_test_id("countdown-seconds")).to_have_text(re.compile(r"^[0-2] s$"))
        # game 2's sensor fault: latched, with what to do, and the game void in the strip
        latched = page.get_by_test_id("latched")
        expect(latched).to_be_visible()
        item = latched.locator("li").first
        expect(item).to_have_attribute("data-kind", "hardware")
        expect(item.locator(".error-prompt")).to_have_text("Wheel fault")
        expect(item.locator(".error-remedy")).to_contain_text("self-test")
        expect(item.locator(".error-detail")).to_have_text("warning flag 4")
        expect(page.get_by_test_id("prompt")).to_have_class(re.compile(r"\blevel-error\b"))
        strip = page.get_by_test_id("strip").locator("li")
        expect(strip).to_have_count(2)
        expect(strip.nth(0)).to_have_attribute("data-void", "fault")
        expect(strip.nth(0)).to_have_attribute("title", re.compile(r"round 2 void: fault"))
        expect(strip.nth(1)).to_have_attribute("data-number", str(first))
        expect(strip.nth(1)).to_have_attribute("data-colour", colour(first))
        page.screenshot(path=str(tmp_path / "wheel-display-latched.png"))

        # the supervisor: a wrong PIN does not unlock; the right one does; clear once the
        # wheel is back before a game
        page.get_by_test_id("open-panel").click()
        page.get_by_test_id("sup-id").fill(SUPERVISOR)
        page.get_by_test_id("sup-pin").fill("000000")
        page.get_by_test_id("unlock").click()
        expect(page.get_by_test_id("panel-message")).to_contain_text("NOT UNLOCKED")
        expect(page.get_by_test_id("actions")).to_be_hidden()
        page.get_by_test_id("sup-pin").fill(PIN)
        page.get_by_test_id("unlock").click()
        expect(page.get_by_test_id("actions")).to_be_visible()
        expect(page.get_by_test_id("wheel-state")).to_have_text("before a game")
        page.get_by_test_id("act-clear").click()
        expect(page.get_by_test_id("panel-message")).to_contain_text("DONE: Clear error")
        page.get_by_test_id("close-panel").click()
        expect(latched).to_be_hidden()

        # the table plays on: game 3's number is the wheel's second
        table.wait(lambda: len(table.wheel.numbers) >= 2, "game 3's number")
        second = table.wheel.numbers[1]
        expect_number(page, second, 3)
        expect(strip).to_have_count(3)
        expect(strip.nth(0)).to_have_attribute("data-number", str(second))
        # text from people is shown as text: a dealer's "name" that is markup stays words
        page.get_by_test_id("open-panel").click()
        page.get_by_test_id("dealer-name").fill(HOSTILE_NAME)
        page.get_by_test_id("act-dealer").click()
        expect(page.get_by_test_id("panel-message")).to_contain_text("DONE: Put dealer")
        page.get_by_test_id("close-panel").click()
        expect(page.get_by_test_id("dealer")).to_have_text(HOSTILE_NAME)
        expect(page.locator("header img")).to_have_count(0)
        page.screenshot(path=str(tmp_path / "wheel-display.png"))
    clears = [a for a in supervisor_records(table.journal) if a["action"] == "clear"]
    assert [(a["actor"], a["supervisor"]) for a in clears] == [(SUPERVISOR, SUPERVISOR)]
    dealers = [a for a in supervisor_records(table.journal) if a["action"] == "dealer"]
    assert [(a["actor"], a["reason"]) for a in dealers] == [(SUPERVISOR, HOSTILE_NAME)]
    assert (tmp_path / "wheel-display.png").stat().st_size > 10_000
