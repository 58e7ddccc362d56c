"""The read-only JSON API and the supervisor endpoints against a whole shoe played by the
virtual dealer, cross-checked with the journal's export (``shoe journal export``), the roads
built from it and the odds engine on the cards the shoe dealt."""

from __future__ import annotations

import json
import random
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from shoe_controller.access import Limits
from shoe_controller.cards import Card, new_shoe
from shoe_controller.games.baccarat.odds import exact_odds, remaining
from shoe_controller.games.baccarat.profile import load_profile
from shoe_controller.table.history import export_lines
from shoe_controller.web.app import WebServerError, start_web
from shoe_controller.web.binding import HttpSettingsError, parse_http
from shoe_controller.web.roads import RoundMark, roads

from .rig import PIN, PROFILE, SUPERVISOR, WebTable, web_table


def pair_rich_shoe() -> list[Card]:
    """One deck with all four aces and kings at the back: when the shoe ends, the cards left
    are rich in pairs, so the pair bets (11 to 1) give the player the edge."""
    deck = new_shoe(1, 11)
    back = [card for card in deck if card.rank in (1, 13)]
    front = [card for card in deck if card.rank not in (1, 13)]
    random.Random(5).shuffle(front)
    return front + back


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebTable]:
    """A whole shoe, dealt at full speed; the controller stops after it, the web stays up."""
    with web_table(tmp_path_factory.mktemp("api"), pair_rich_shoe(), auto_pull=True,
                   betting_seconds=0, shoes=1) as table:
        table.wait(lambda: not table.thread.is_alive(), "the shoe to finish", timeout=30)
        rounds = sum(1 for line in export_lines(table.journal) if line["type"] == "round")
        table.wait(lambda: (table.get("/api/odds") or {}).get("after_round") == rounds,
                   "the display to catch up")
        yield table


def export_rounds(table: WebTable) -> list[dict]:
    return [line for line in export_lines(table.journal) if line["type"] == "round"]


def test_rounds_are_the_journal_export(played: WebTable) -> None:
    exported = export_rounds(played)
    api = played.get("/api/rounds")
    assert len(api) == len(exported) > 5
    for got, want in zip(api, exported):
        assert got["round"] == want["round"]
        assert got["player"]["cards"] == want["player"] and got["banker"]["cards"] == want["banker"]
        assert got["player"]["total"] == want["player_total"]
        assert got["banker"]["total"] == want["banker_total"]
        assert {key: got["result"][key] for key in want if key not in ("type", "round")} == {
            key: value for key, value in want.items() if key not in ("type", "round")}
    assert played.get("/api/rounds?shoe=1") == api
    shoes = played.get("/api/shoes")
    assert shoes[0]["shoe"] == 1 and shoes[0]["finished"] and shoes[0]["rounds"] == len(exported)
    with pytest.raises(urllib.error.HTTPError) as missing:
        played.get("/api/rounds?shoe=99")
    assert missing.value.code == 404


def test_recall_is_the_last_ten_rounds(played: WebTable) -> None:
    exported = export_rounds(played)
    recall = played.get("/api/recall")
    assert [r["round"] for r in recall] == [r["round"] for r in exported[-10:]]
    assert [r["round"] for r in played.get("/api/recall?last=3")] == [
        r["round"] for r in exported[-3:]]


def test_roads_and_statistics_follow_the_results(played: WebTable) -> None:
    exported = export_rounds(played)
    assert played.get("/api/roads") == roads([RoundMark.from_result(r) for r in exported]
                                             ).to_dict()
    stats = played.get("/api/state")["stats"]
    assert stats["rounds"] == len(exported)
    for outcome in ("banker", "player", "tie"):
        assert stats[outcome] == sum(r["outcome"] == outcome for r in exported)
    assert stats["naturals"] == sum(r["natural"] for r in exported)
    assert stats["player_pairs"] == sum(r["player_pair"] for r in exported)
    shoe_end = next(line for line in export_lines(played.journal) if line["type"] == "shoe_end")
    assert stats["cards_left"] == 52 - shoe_end["cards_used"]


def test_odds_are_exact_for_the_remaining_shoe_and_flag_a_player_edge(played: WebTable) -> None:
    profile = load_profile(PROFILE)
    # Every card of the shoe that was dealt (burn and rounds; none was set aside), as exported.
    dealt = [Card.from_code(code) for line in export_lines(played.journal)
             for code in line.get("cards", []) + line.get("player", []) + line.get("banker", [])]
    expected = exact_odds(remaining(profile.decks, dealt), profile)
    odds = played.get("/api/odds")
    assert odds["cards_left"] == expected.cards_left == 52 - len(dealt)
    assert {b["bet"]: b["house_edge"] for b in odds["bets"]} == pytest.approx(
        {name: float(bet.house_edge) for name, bet in expected.bets.items()}, abs=1e-12)
    flagged = {b["bet"] for b in odds["bets"] if b["player_edge"]}
    assert flagged == {name for name, bet in expected.bets.items() if bet.house_edge < 0}
    assert "player_pair" in flagged  # the aces and kings are still in the shoe


def test_page_highlights_a_bet_with_a_player_edge(played: WebTable, page: Page) -> None:
    page.goto(played.url)
    row = page.locator('[data-testid="odds"] tr[data-bet="player_pair"]')
    expect(row).to_have_class("player-edge")
    expect(row).to_contain_text("PLAYER EDGE")
    expect(page.locator('[data-testid="odds"] tr[data-bet="banker"]')).not_to_have_class(
        "player-edge")


def test_openapi_documents_the_api(played: WebTable) -> None:
    api = played.get("/openapi.json")
    for path in ("/api/state", "/api/rounds", "/api/recall", "/api/odds", "/api/roads",
                 "/api/shoes", "/api/stream", "/api/supervisor/action"):
        assert path in api["paths"], path
    assert "State" in api["components"]["schemas"]
    assert api["info"]["version"] == "2"
    # What an action answers: the table's decision, each code with its document.
    answers = api["paths"]["/api/supervisor/action"]["post"]["responses"]
    assert set(answers) == {"200", "202", "400", "403", "409", "422", "429"}
    for code in ("200", "202", "409"):
        schema_ref = answers[code]["content"]["application/json"]["schema"]["$ref"]
        assert schema_ref.endswith("/ActionOutcome"), code
    outcome = api["components"]["schemas"]["ActionOutcome"]
    assert set(outcome["required"]) >= {"status", "accepted", "message", "supervisor", "action"}
    assert outcome["properties"]["status"]["enum"] == ["journalled", "queued"]
    assert "refused" in answers["409"]["description"]
    assert "lost if the controller stops" in answers["202"]["description"]
    with urllib.request.urlopen(played.url + "api/docs", timeout=5) as response:
        assert b"openapi.json" in response.read()


def test_supervisor_endpoints_check_the_pin_and_the_input(played: WebTable) -> None:
    assert played.post("/api/supervisor/login", {"supervisor": SUPERVISOR, "pin": PIN}) == (
        200, {"accepted": True, "supervisor": SUPERVISOR, "action": None})
    status, body = played.post("/api/supervisor/login", {"supervisor": SUPERVISOR, "pin": "0"})
    assert status == 403 and "wrong PIN" in body["detail"]
    status, _ = played.post("/api/supervisor/action",
                            {"supervisor": SUPERVISOR, "pin": "0", "action": "clear"})
    assert status == 403
    status, body = played.post("/api/supervisor/action",
                               {"supervisor": SUPERVISOR, "pin": PIN, "action": "explode"})
    assert status == 400 and "unknown supervisor action" in body["detail"]
    status, body = played.post("/api/supervisor/action", {
        "supervisor": SUPERVISOR, "pin": PIN, "action": "enter_card", "card": "ZZ"})
    assert status == 400
    # Too many wrong PINs from this client for one id: refused for a while, unchecked.
    for _ in range(Limits().pair_failures):
        assert played.post("/api/supervisor/login", {"supervisor": "bob", "pin": "1"})[0] == 403
    status, headers, body = played.request(
        "POST", "/api/supervisor/login", {"supervisor": "bob", "pin": "1"})
    assert status == 429 and "too many wrong PINs" in body["detail"]
    assert 0 < int(headers["retry-after"]) <= Limits().pair_window
    # ... for that id only, and only from this client.
    assert played.post("/api/supervisor/login", {"supervisor": SUPERVISOR, "pin": PIN})[0] == 200


def test_an_action_the_table_has_not_journalled_yet_is_said_to_be_queued(
        played: WebTable) -> None:
    """The controller of this fixture has stopped (shoe finished): nothing is journalled."""
    status, body = played.post("/api/supervisor/action",
                               {"supervisor": SUPERVISOR, "pin": PIN, "action": "end_shoe"})
    assert status == 202
    assert body["status"] == "queued" and body["accepted"] is None and body["record"] is None
    assert "applies it in order" in body["message"]
    assert "lost if the controller stops" in body["message"]


def test_a_restarted_display_rebuilds_the_shoes_from_the_journal(played: WebTable) -> None:
    second = start_web(played.controller, "127.0.0.1", 0, profile=load_profile(PROFILE))
    try:
        with urllib.request.urlopen(second.url + "api/rounds?shoe=1", timeout=5) as response:
            assert json.loads(response.read()) == played.get("/api/rounds?shoe=1")
    finally:
        second.close()
        second.close()  # idempotent
    second.check()


def test_a_taken_port_is_a_clear_error(played: WebTable) -> None:
    host, port = parse_http(played.url.removeprefix("http://").rstrip("/"))
    with pytest.raises(WebServerError, match="cannot listen"):
        start_web(played.controller, host, port, profile=load_profile(PROFILE))


def test_parse_http() -> None:
    assert parse_http("127.0.0.1:8080") == ("127.0.0.1", 8080)
    assert parse_http("[::1]:0") == ("::1", 0)
    assert parse_http("8080") == ("127.0.0.1", 8080)  # loopback unless a host is named
    assert parse_http(":80") == ("127.0.0.1", 80)
    assert parse_http("dealer-7.lan:8443") == ("dealer-7.lan", 8443)
    for bad in ("host:", "host:99999", "host:http", "", "::1:80", "[::1:80", "[]:80"):
        with pytest.raises(HttpSettingsError, match="PORT"):
            parse_http(bad)


def test_docs_at_fastapis_usual_address(played: WebTable) -> None:
    """Reported: `/docs` (FastAPI's convention) did not reach the API docs."""
    status, headers, _ = played.request("GET", "/docs")
    assert status == 307 and headers["location"] == "/api/docs"
    with urllib.request.urlopen(played.url + "docs", timeout=5) as response:
        assert response.url.endswith("/api/docs")
        assert b"openapi.json" in response.read()


def test_the_recall_limit_is_documented_and_a_422_says_the_range(played: WebTable) -> None:
    """Reported: `/api/recall?last=11` gave 422 with the limit documented nowhere."""
    api = played.get("/openapi.json")
    (param,) = api["paths"]["/api/recall"]["get"]["parameters"]
    assert param["name"] == "last"
    assert (param["schema"]["minimum"], param["schema"]["maximum"]) == (1, 10)
    assert "1 to 10" in param["description"]
    assert "at most 10" in api["paths"]["/api/recall"]["get"]["description"]
    assert "1 to 10" in api["paths"]["/api/recall"]["get"]["responses"]["422"]["description"]
    for bad in ("11", "0", "-3", "ten"):
        status, _, body = played.request("GET", f"/api/recall?last={bad}")
        assert status == 422, bad
        (error,) = body["detail"]
        assert error["loc"] == ["query", "last"]
        assert error["msg"].startswith("last must be a whole number from 1 to 10"), error
    assert played.get("/api/recall?last=10") == played.get("/api/recall")


def test_api_docs_render_code_as_code(played: WebTable, page: Page, artifacts: Path) -> None:
    """Reported: `/api/docs` showed raw backticks."""
    page.goto(played.url + "api/docs")
    description = page.locator("#description")
    expect(description.locator("code").first).to_be_visible()
    expect(description.locator("code", has_text="/api/stream")).to_have_count(1)
    expect(page.locator("#paths")).to_contain_text("/api/recall")
    expect(page.locator("#paths code", has_text="last")).not_to_have_count(0)
    expect(page.locator("#paths")).to_contain_text("1 to 10")
    text = page.locator("body").inner_text()
    assert "`" not in text
    page.screenshot(path=str(artifacts / "19-api-docs.png"))


def test_the_odds_table_says_what_its_numbers_are(played: WebTable, page: Page) -> None:
    """Reported: the odds table had no header ("1.339 %" of what?)."""
    page.goto(played.url)
    heads = page.locator('[data-testid="odds"] thead th')
    expect(heads).to_have_text(["Bet", "Chance to win", "House edge"])
    odds = played.get("/api/odds")
    banker = next(b for b in odds["bets"] if b["bet"] == "banker")
    row = page.locator('[data-testid="odds"] tr[data-bet="banker"]')
    expect(row.locator("td.win")).to_have_text(f"{banker['win'] * 100:.2f} %")
    expect(row.locator("td.edge")).to_have_text(
        f"{banker['house_edge'] * 100:.3f} %".replace("-", "\u2212"))
    expect(page.get_by_test_id("odds-asof")).to_contain_text(
        f"after round {odds['after_round']}")


def test_last_rounds_show_only_whole_lines(played: WebTable, page: Page) -> None:
    """Reported: the "Last rounds" list was clipped mid-line."""
    page.goto(played.url)
    recall = page.get_by_test_id("recall")
    expect(recall.locator("li").first).to_be_visible()
    box = recall.bounding_box()
    assert box is not None
    rows = recall.locator("li")
    shown = rows.count()
    assert shown >= 3
    for index in range(shown):
        row = rows.nth(index).bounding_box()
        assert row is not None and row["y"] + row["height"] <= box["y"] + box["height"] + 0.5
        assert row["y"] + row["height"] <= 800
    expected = played.get("/api/recall")
    if shown < len(expected):
        expect(page.get_by_test_id("recall-count")).to_have_text(
            f"({shown} of {len(expected)})")
    expect(rows.first).to_contain_text(f"#{expected[-1]['round']}")
