"""End to end in headless Chromium: the software shoe deals, the controller runs the table, and
the page must show every card as it comes, the totals, the next action and the result; an
irregularity is resolved from the supervisor panel in the browser and journalled with who did it.

The test is the dealer: it pulls each card from the software shoe when the exit opens and
presses the shoe's button to confirm a result, then looks at the page. What the page must say is
worked out independently from the cards (``Coup``), not read back from the table.
"""

from __future__ import annotations

import re
from pathlib import Path

from playwright.sync_api import Page, expect

from shoe_controller.cards import new_shoe
from shoe_controller.games.baccarat.coup import Coup, Hand
from shoe_controller.games.baccarat.rules import hand_total
from shoe_controller.journal import Journal
from shoe_controller.table.irregularities import Irregularity

from .rig import PIN, SUPERVISOR, WebTable, web_table

CARDS = new_shoe(1, 3)  # burn 2; round 1: 4 cards (natural tie); round 2: 6 cards; round 3: 4

expect.set_options(timeout=10_000)


def expected_prompt(coup: Coup) -> str:
    """The dealer's prompt after the cards of ``coup`` (what the brief asks the display for)."""
    if coup.is_complete:
        return coup.result().describe()
    due = coup.next_due()
    who = "Player" if due is Hand.PLAYER else "Banker"
    return f"Deal {who}" if len(coup.cards) < 4 else f"{who} draws"


def banner_text(coup: Coup) -> str:
    """The result banner: the result, and NATURAL as a tag of its own."""
    result = coup.result()
    return result.describe().removesuffix(" (natural)") + (" natural" if result.natural else "")


def check_hands(page: Page, coup: Coup) -> None:
    for name, hand in (("player", coup.player), ("banker", coup.banker)):
        codes = " ".join(card.code for card in hand)
        expect(page.get_by_test_id(f"{name}-cards")).to_have_attribute("data-cards", codes)
        total = str(hand_total(hand)) if hand else ""
        expect(page.get_by_test_id(f"{name}-total")).to_have_text(total)


def deal_round(table: WebTable, page: Page, *, screenshot: Path | None = None) -> Coup:
    """Deal one round card by card, checking the page after each card."""
    # Betting closes by the table's timer; the next action must then be on screen.
    table.wait(lambda: table.controller.view.due == "player", "betting to close")
    expect(page.get_by_test_id("prompt")).to_have_text("No more bets: Deal Player")
    coup = Coup()
    while not coup.is_complete:
        out = table.pull()
        coup = coup.add(out.card)
        check_hands(page, coup)
        expect(page.get_by_test_id("prompt")).to_have_text(expected_prompt(coup))
        if not coup.is_complete:
            due = "player" if coup.next_due() is Hand.PLAYER else "banker"
            expect(page.get_by_test_id(f"{due}-hand")).to_have_class(re.compile(r"\bdue\b"))
            expect(page.get_by_test_id("result-banner")).to_be_hidden()
        if screenshot is not None and len(coup.cards) == 3:
            page.screenshot(path=str(screenshot))
    banner = page.get_by_test_id("result-banner")
    expect(banner).to_be_visible()
    expect(banner).to_have_text(banner_text(coup))
    expect(banner).to_have_class(f"banner {coup.result().outcome.value}")
    return coup


def supervisor_records(journal: Path, action: str) -> list:
    with Journal(journal, readonly=True) as opened:
        return [r for r in opened.records()
                if r.kind == "supervisor" and r.data["action"] == action]


def unlock_panel(page: Page, pin: str) -> None:
    page.get_by_test_id("open-panel").click()
    page.get_by_test_id("sup-id").fill(SUPERVISOR)
    page.get_by_test_id("sup-pin").fill(pin)
    page.get_by_test_id("unlock").click()


def test_dealer_view_follows_every_card_and_a_supervisor_resolves_an_irregularity(
    tmp_path: Path, page: Page, artifacts: Path
) -> None:
    with web_table(tmp_path, CARDS) as table:
        page.goto(table.url)
        expect(page.get_by_test_id("prompt")).to_have_text("Burn: turn the first card face up")
        expect(page.get_by_test_id("offline")).to_be_hidden()
        while table.controller.view.due == "burn":
            table.pull()
        expect(page.get_by_test_id("cards-left")).to_have_text(str(52 - 2))

        played: list[Coup] = []
        for number in (1, 2):
            shot = artifacts / "dealer-mid-round.png" if number == 2 else None
            played.append(deal_round(table, page, screenshot=shot))
            expect(page.get_by_test_id("stat-rounds")).to_have_text(str(number))
            if number == 2:
                page.screenshot(path=str(artifacts / "dealer-result.png"))
            table.press_button()
            # Confirmed: the result stays on screen, labelled, until the next round's first card.
            expect(page.get_by_test_id("result-banner")).to_have_class(re.compile(r"\blast\b"))

        # Statistics, roads and recall after two rounds (both ties with this shoe).
        outcomes = [coup.result().outcome.value for coup in played]
        assert outcomes == ["tie", "tie"]
        expect(page.get_by_test_id("stat-tie")).to_have_text("2")
        expect(page.get_by_test_id("bead-plate")).to_have_attribute("data-count", "2")
        expect(page.get_by_test_id("big-road")).to_have_attribute("data-count", "1")
        expect(page.get_by_test_id("leading-ties")).to_contain_text("2 tie(s)")
        expect(page.get_by_test_id("recall").locator("li")).to_have_count(2)
        expect(page.get_by_test_id("odds-asof")).to_contain_text("after round 2")
        cards_used = 2 + sum(len(coup.cards) for coup in played)
        expect(page.get_by_test_id("cards-left")).to_have_text(str(52 - cards_used))

        # Round 3, then the dealer forces a card past the locked exit before confirming.
        deal_round(table, page)
        forced = table.pull(forced=True)
        error = page.get_by_test_id("error")
        expect(error).to_be_visible()
        expect(page.get_by_test_id("prompt")).to_have_text("Card forced past the locked exit")
        expect(page.get_by_test_id("error-remedy")).to_contain_text("call a supervisor")
        expect(page.get_by_test_id("prompt")).to_have_class(re.compile(r"\blevel-error\b"))
        page.screenshot(path=str(artifacts / "dealer-error.png"))

        # Read-only without the PIN: a wrong PIN leaves the actions hidden.
        unlock_panel(page, "999999")
        expect(page.get_by_test_id("panel-message")).to_contain_text("wrong PIN")
        expect(page.get_by_test_id("actions")).to_be_hidden()
        assert supervisor_records(table.journal, "clear") == []

        # The right PIN unlocks the panel; Clear resolves the latch, journalled as alice.
        page.get_by_test_id("sup-pin").fill(PIN)
        page.get_by_test_id("unlock").click()
        expect(page.get_by_test_id("actions")).to_be_visible()
        expect(page.get_by_test_id("who")).to_have_text(SUPERVISOR)
        page.get_by_test_id("act-clear").click()
        expect(error).to_be_hidden()
        expect(page.get_by_test_id("panel-message")).to_contain_text("DONE: Clear error")
        expect(page.get_by_test_id("panel-message")).to_contain_text(
            "Journalled as done by alice.")
        expect(page.get_by_test_id("panel-message")).to_have_attribute("data-kind", "good")
        expect(page.get_by_test_id("sup-log")).to_contain_text(
            f"alice: Cleared: {Irregularity.CARD_WHILE_LOCKED.prompt}")
        records = supervisor_records(table.journal, "clear")
        assert len(records) == 1 and records[0].actor == SUPERVISOR
        assert table.controller.table.strays[-1]["counter"] == forced.counter

        # The result still waits for the dealer's confirmation; then round 4 starts.
        expect(page.get_by_test_id("result-banner")).to_be_visible()
        table.press_button()

        # Round 4: two cards, then the supervisor voids the round from the panel.
        table.wait(lambda: table.controller.view.due == "player", "betting to close")
        first = table.pull()
        expect(page.get_by_test_id("player-cards")).to_have_attribute("data-cards",
                                                                       first.card.code)
        page.get_by_test_id("reason").fill("wrong table limit")
        page.get_by_test_id("act-void").click()
        expect(page.get_by_test_id("result-banner")).to_have_text("Round 4 voided")
        expect(page.get_by_test_id("recall").locator("li").first).to_contain_text("VOID")
        voids = supervisor_records(table.journal, "void_round")
        assert len(voids) == 1 and voids[0].actor == SUPERVISOR
        assert voids[0].data["reason"] == "wrong table limit"

        # End the shoe (the page asks for a confirmation first). The virtual dealer loads the
        # next shoe at once when the SHUFFLE light comes on, so the page moves on to shoe 2.
        page.once("dialog", lambda dialog: dialog.accept())
        page.get_by_test_id("act-end").click()
        expect(page.get_by_test_id("sup-log")).to_contain_text("alice: Shoe 1 ended early")
        expect(page.get_by_test_id("shoe")).to_have_text("2")
        expect(page.get_by_test_id("stat-rounds")).to_have_text("0")
        ends = supervisor_records(table.journal, "end_shoe")
        assert len(ends) == 1 and ends[0].actor == SUPERVISOR

        # Locking the panel makes the page read-only again.
        page.get_by_test_id("lock").click()
        expect(page.get_by_test_id("actions")).to_be_hidden()
        expect(page.get_by_test_id("login")).to_be_visible()


def test_page_says_when_it_loses_the_controller(tmp_path: Path, page: Page) -> None:
    with web_table(tmp_path, CARDS) as table:
        page.goto(table.url)
        expect(page.get_by_test_id("prompt")).to_have_text("Burn: turn the first card face up")
        table.web.close()
        expect(page.get_by_test_id("offline")).to_be_visible()


def test_the_panel_says_when_the_table_refuses_an_action(tmp_path: Path, page: Page,
                                                         artifacts: Path) -> None:
    """Reported: "Clear error" with an unread card pending showed green "Clear error: sent
    (journalled as alice)"; the table's refusal was only small grey text."""
    with web_table(tmp_path, CARDS, misread_at=(3,)) as table:
        page.goto(table.url)
        expect(page.get_by_test_id("prompt")).to_have_text("Burn: turn the first card face up")
        while table.controller.view.due == "burn":
            table.pull()
        table.wait(lambda: table.controller.view.due == "player", "betting to close")
        out = table.pull()  # card 3: its face is not read
        expect(page.get_by_test_id("error")).to_be_visible()
        unlock_panel(page, PIN)
        expect(page.get_by_test_id("actions")).to_be_visible()
        page.get_by_test_id("act-clear").click()
        message = page.get_by_test_id("panel-message")
        expect(message).to_have_text(
            "REFUSED: Clear error The table refused it: cannot clear yet: Player's 1st card "
            "(card 3 out of the shoe) was not read: enter it, or void the round Journalled as "
            "tried by alice.")
        expect(message).to_have_attribute("data-kind", "bad")
        expect(message).to_have_css("color", "rgb(255, 107, 107)")
        page.screenshot(path=str(artifacts / "panel-refused.png"))
        page.get_by_test_id("card-code").fill(out.card.code)
        page.get_by_test_id("act-enter").click()
        expect(message).to_have_text("DONE: Enter card Journalled as done by alice.")
        expect(message).to_have_attribute("data-kind", "good")
        expect(page.get_by_test_id("error")).to_be_hidden()


def test_text_from_the_server_is_never_taken_as_markup(tmp_path: Path, page: Page) -> None:
    """Reported: bet names from a profile were written into the page as HTML. Every place the
    page puts server text is fed a document full of markup; none of it may become elements."""
    with web_table(tmp_path, CARDS) as table:
        page.goto(table.url)
        expect(page.get_by_test_id("prompt")).to_have_text("Burn: turn the first card face up")
        evil = '<img src=x id="evil" onerror="window.pwned=1">'
        page.evaluate("""(evil) => {
          const hand = (cards) => ({ cards, total: 1 });
          const round = { shoe: 1, round: 7, cards: [], player: hand(["AS", evil + "S"]),
            banker: hand(["2H"]), result: { outcome: evil, natural: false, player_total: 1,
            banker_total: 2 }, void: null, irregularities: [evil] };
          const cell = { col: 0, row: 0, value: evil, streak: 0, depth: 0, ties: evil,
            player_pair: true, banker_pair: true, natural: false };
          render({
            version: 99, profile: evil,
            view: { state: evil, alarm: "latched", prompt: evil, level: "error", detail: evil,
              exit_locked: true, lights: [], round: evil, cards_dealt: 0, due: evil,
              latched: [{ kind: evil, prompt: evil, remedy: evil, detail: evil, card: null,
                counter: null, round: null }], lid_open: false, link_up: true },
            round, previous_round: null,
            stats: { shoe: evil, rounds: evil, banker: 0, player: 0, tie: 0, naturals: 0,
              player_pairs: evil, banker_pairs: 0, cards_left: evil },
            roads: { rows: 6, bead_plate: [cell], big_road: { cells: [cell], leading_ties: 0,
              streaks: [] }, big_eye_boy: [cell], small_road: [cell], cockroach_pig: [cell] },
            recall: [round],
            odds: { shoe: 1, after_round: evil, error: null, cards_left: evil, outcomes: {},
              bets: [{ bet: evil, description: evil, house_edge: 0.01, player_edge: true,
                win: 0, push: 0 }] },
            supervisor_log: [{ supervisor: evil, type: evil, kind: evil, reason: evil }],
          });
        }""", evil)
        assert page.locator("#evil").count() == 0
        assert page.evaluate("window.pwned") is None
        expect(page.get_by_test_id("odds")).to_contain_text(evil)
        expect(page.get_by_test_id("recall")).to_contain_text(evil)
        expect(page.get_by_test_id("profile")).to_have_text(evil)
