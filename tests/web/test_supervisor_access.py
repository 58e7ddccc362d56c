"""Supervisor access over HTTP against the real server: the shared access guard under a
concurrent attack, the client address it counts, the Host and Origin checks, TLS, and an
action endpoint that answers with what the table decided."""

from __future__ import annotations

import http.client
import json
import shutil
import ssl
import subprocess
import threading
import urllib.request
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from shoe_controller.access import Limits
from shoe_controller.cards import new_shoe
from shoe_controller.config import check_pin
from shoe_controller.games.baccarat.profile import load_profile
from shoe_controller.web.app import WebServerError, start_web
from shoe_controller.web.binding import HttpSettingsError, http_settings

from .rig import PIN, PROFILE, SUPERVISOR, WebTable, web_table

CARDS = new_shoe(1, 3)  # burn 2 (the first turned up), then round 1 starts with card 3
LIMITS = Limits()
WRONG = "000000"


class CountingCheck:
    def __init__(self) -> None:
        self.calls = 0
        self._lock = threading.Lock()

    def __call__(self, stored: str, pin: str) -> bool:
        with self._lock:
            self.calls += 1
        return check_pin(stored, pin)


def login(table: WebTable, pin: str, *, source: str | None = None,
          headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], Any]:
    return table.request("POST", "/api/supervisor/login", {"supervisor": SUPERVISOR, "pin": pin},
                         source=source, headers=headers)


# -- the guard, over HTTP ------------------------------------------------------------------------

def test_sixty_concurrent_wrong_pins_cost_five_checks_and_alice_gets_in_from_another_client(
        tmp_path: Path) -> None:
    """Reported: 60 concurrent wrong PINs were all hashed (limit 5), and anyone could lock a
    real supervisor out by typing her id."""
    with web_table(tmp_path, CARDS) as table:
        check = CountingCheck()
        table.controller.access.verify_pin = check
        barrier = threading.Barrier(60)

        def attack(_: int) -> int:
            barrier.wait(15)
            return login(table, WRONG)[0]

        with ThreadPoolExecutor(max_workers=60) as pool:
            codes = Counter(pool.map(attack, range(60)))
        assert check.calls == LIMITS.pair_failures
        assert codes == {403: LIMITS.pair_failures, 429: 60 - LIMITS.pair_failures}
        assert login(table, PIN)[0] == 429  # the attacker's client: held off, unchecked
        assert check.calls == LIMITS.pair_failures
        # Alice at another client (another loopback address) is not locked out.
        status, _, body = login(table, PIN, source="127.0.0.2")
        assert (status, body) == (200, {"accepted": True, "supervisor": SUPERVISOR,
                                        "action": None})
        assert table.controller.access.is_held_off(SUPERVISOR, "127.0.0.1")
        assert not table.controller.access.is_held_off(SUPERVISOR, "127.0.0.2")


def test_a_request_cannot_choose_the_client_it_is_counted_against(tmp_path: Path) -> None:
    """uvicorn trusts X-Forwarded-For from 127.0.0.1 by default: the display turns it off."""
    with web_table(tmp_path, CARDS) as table:
        for n in range(LIMITS.pair_failures):
            assert login(table, WRONG, headers={"X-Forwarded-For": f"198.51.100.{n}"})[0] == 403
        status, _, _ = login(table, PIN, headers={"X-Forwarded-For": "198.51.100.99",
                                                  "Forwarded": "for=198.51.100.99"})
        assert status == 429
        assert not table.controller.access.is_held_off(SUPERVISOR, "198.51.100.99")


def test_an_action_is_limited_by_the_same_guard_as_the_login(tmp_path: Path) -> None:
    with web_table(tmp_path, CARDS) as table:
        for _ in range(LIMITS.pair_failures):
            assert login(table, WRONG)[0] == 403
        status, headers, body = table.request("POST", "/api/supervisor/action", {
            "supervisor": SUPERVISOR, "pin": PIN, "action": "clear"})
        assert status == 429 and "retry-after" in headers
        assert "too many wrong PINs" in body["detail"]


# -- the table's decision ------------------------------------------------------------------------

def test_the_action_answer_is_the_tables_decision(tmp_path: Path) -> None:
    """Reported: "Clear error" with an unread card pending showed green "sent (journalled as
    alice)" and answered 202 accepted, though the table refused it."""
    with web_table(tmp_path, CARDS, misread_at=(3,)) as table:
        table.wait(lambda: table.controller.view.due == "burn", "the shoe to be loaded")
        while table.controller.view.due == "burn":
            table.pull()
        table.wait(lambda: table.controller.view.due == "player", "betting to close")
        out = table.pull()
        table.wait(lambda: table.controller.table.alarm == "latched", "the misread to latch")
        status, body = table.post("/api/supervisor/action",
                                  {"supervisor": SUPERVISOR, "pin": PIN, "action": "clear"})
        assert status == 409
        assert body["status"] == "journalled" and body["accepted"] is False
        assert body["message"] == (
            "cannot clear yet: Player's 1st card (card 3 out of the shoe) was not read: "
            "enter it, or void the round")
        assert body["record"] is not None and body["api_version"] == 2
        assert table.controller.table.alarm == "latched"
        status, body = table.post("/api/supervisor/action", {
            "supervisor": SUPERVISOR, "pin": PIN, "action": "enter_card",
            "card": out.card.code})
        assert status == 200
        assert body["status"] == "journalled" and body["accepted"] is True
        assert body["record"] > 0
        table.wait(lambda: table.controller.table.alarm == "ok", "the latch to clear")


# -- Host and Origin ------------------------------------------------------------------------------

def test_requests_must_name_this_display(tmp_path: Path) -> None:
    with web_table(tmp_path, CARDS, hosts=("dealer-7.casino.lan",)) as table:
        port = table.web._sock.getsockname()[1]
        for good in (f"127.0.0.1:{port}", f"localhost:{port}", "LOCALHOST", f"[::1]:{port}",
                     f"dealer-7.casino.lan:{port}", "dealer-7.casino.lan."):
            assert table.request("GET", "/api/state", headers={"Host": good})[0] == 200, good
        # DNS rebinding: a page at attacker.example whose name now resolves to 127.0.0.1.
        for bad in (f"attacker.example:{port}", "127.0.0.1.attacker.example", "dealer-7",
                    "", "a b", f"[::2]:{port}", "localhost:abc"):
            status, _, text = table.request("GET", "/api/state", headers={"Host": bad})
            assert status == 400, bad
            assert "Invalid host header" in text
        status, _, _ = table.request("POST", "/api/supervisor/login",
                                     {"supervisor": SUPERVISOR, "pin": PIN},
                                     headers={"Host": "attacker.example"})
        assert status == 400
        # A page elsewhere posting through the dealer's browser: refused before any check.
        check = CountingCheck()
        table.controller.access.verify_pin = check
        status, _, text = login(table, PIN, headers={"Origin": "http://attacker.example"})
        assert status == 403 and "Cross-site" in text
        assert login(table, PIN, headers={"Origin": "null"})[0] == 403
        assert check.calls == 0
        assert login(table, PIN, headers={"Origin": f"http://127.0.0.1:{port}"})[0] == 200
        assert login(table, PIN)[0] == 200  # no Origin: not a browser's cross-site request


def test_the_page_itself_still_works_through_the_host_check(tmp_path: Path, page: Any) -> None:
    from playwright.sync_api import expect

    with web_table(tmp_path, CARDS) as table:
        for url in (table.url, table.url.replace("127.0.0.1", "localhost")):
            page.goto(url)
            expect(page.get_by_test_id("prompt")).to_have_text(
                "Burn: turn the first card face up")
            page.get_by_test_id("open-panel").click()
            page.get_by_test_id("sup-id").fill(SUPERVISOR)
            page.get_by_test_id("sup-pin").fill(PIN)
            page.get_by_test_id("unlock").click()  # a POST with the page's own Origin
            expect(page.get_by_test_id("actions")).to_be_visible()
            page.get_by_test_id("lock").click()


# -- where it listens, TLS -------------------------------------------------------------------------

def test_a_display_beyond_this_machine_needs_tls_or_says_insecure(tmp_path: Path) -> None:
    with pytest.raises(HttpSettingsError, match="without TLS.*--http-cert.*--http-insecure"):
        http_settings("0.0.0.0:8443")
    with pytest.raises(HttpSettingsError, match="without TLS"):
        http_settings("192.0.2.7:8443")
    with pytest.raises(HttpSettingsError, match="go together"):
        http_settings("8443", cert_file=tmp_path / "cert.pem")
    assert http_settings("0.0.0.0:8443", insecure=True).insecure
    tls = http_settings("0.0.0.0:8443", cert_file="c.pem", key_file="k.pem",
                        hosts=["Dealer-7.casino.lan"])
    assert tls.tls and "dealer-7.casino.lan" in tls.allowed
    assert tls.url_host == "dealer-7.casino.lan"
    local = http_settings("8080")
    assert (local.host, local.port) == ("127.0.0.1", 8080)
    assert local.allowed == {"localhost", "127.0.0.1", "::1"}


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and localhost, made here with openssl."""
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("the openssl command is not installed (apt-get install openssl): the TLS "
                    "tests make their certificate with it, and the cryptography package is "
                    "not a dependency")
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run([openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt",
                    "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", str(key), "-out",
                    str(cert), "-days", "2", "-subj", "/CN=localhost", "-addext",
                    "subjectAltName=DNS:localhost,IP:127.0.0.1"],
                   check=True, capture_output=True, timeout=60)
    return cert, key


def test_the_display_serves_https_with_a_certificate(tmp_path: Path,
                                                      certificate: tuple[Path, Path]) -> None:
    cert, key = certificate
    with web_table(tmp_path, CARDS, cert_file=cert, key_file=key) as table:
        assert table.url.startswith("https://127.0.0.1:")
        trusted = ssl.create_default_context(cafile=str(cert))
        with urllib.request.urlopen(table.url + "api/state", context=trusted,
                                    timeout=10) as response:
            assert json.loads(response.read())["profile"]
        request = urllib.request.Request(
            table.url + "api/supervisor/login", method="POST",
            data=json.dumps({"supervisor": SUPERVISOR, "pin": PIN}).encode(),
            headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, context=trusted, timeout=10) as response:
            assert json.loads(response.read())["accepted"] is True
        # Plain HTTP on the TLS port gets no answer it could take for the API.
        try:
            status = table.request("GET", "/api/state")[0]
        except (OSError, http.client.HTTPException):
            status = None
        assert status != 200
        assert table.web._server.config.ssl.minimum_version == ssl.TLSVersion.TLSv1_2


def test_a_certificate_that_cannot_be_used_is_a_clear_error(
        tmp_path: Path, certificate: tuple[Path, Path]) -> None:
    cert, key = certificate
    with web_table(tmp_path, CARDS) as table:
        profile = load_profile(PROFILE)
        with pytest.raises(WebServerError, match="cannot use certificate"):
            start_web(table.controller, "127.0.0.1", 0, profile=profile,
                      cert_file=tmp_path / "missing.pem", key_file=key)
        with pytest.raises(WebServerError, match="cannot use certificate"):
            start_web(table.controller, "127.0.0.1", 0, profile=profile,
                      cert_file=key, key_file=cert)  # the wrong way round
        with pytest.raises(HttpSettingsError, match="without TLS"):
            start_web(table.controller, "0.0.0.0", 0, profile=profile)


def test_shoe_run_refuses_an_unsafe_http_before_it_opens_anything(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from shoe_controller.cli import main

    journal = tmp_path / "journal.sqlite"
    base = ["run", "--device", "loop://", "--profile", PROFILE, "--journal", str(journal)]
    assert main([*base, "--http", "0.0.0.0:0"]) == 1
    error = capsys.readouterr().err
    assert "shoe run: error: --http 0.0.0.0:0 listens beyond this machine without TLS" in error
    assert "--http-insecure" in error
    assert main([*base, "--http-cert", str(tmp_path / "c.pem")]) == 1
    assert "--http-cert: only used with --http" in capsys.readouterr().err
    assert main(["demo", "--http", "8080", "--http-key", "k.pem"]) == 1
    assert "go together" in capsys.readouterr().err
    assert not journal.exists()
