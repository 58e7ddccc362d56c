"""Fuzzing the dealer display's HTTP API: any body, any query, over a real loopback server.

Whatever a client on the network sends (bytes that are not JSON, JSON of any shape, the
right fields with wrong types, valid actions with odd card codes, query strings), the answer
is a 4xx with a JSON ``detail`` or a success, never a 5xx, and the server and the table keep
running. The server is the product's own (``start_web`` on a running controller, as in
``shoe run --http``), reached through real HTTP.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from web.rig import PIN, SUPERVISOR, WebTable, web_table

from shoe_controller.cards import new_shoe

ALLOWED = {200, 202, 400, 403, 404, 405, 409, 413, 415, 422, 429}
SETTINGS = settings(max_examples=150, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture,
                                           HealthCheck.too_slow])


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebTable]:
    with web_table(tmp_path_factory.mktemp("http-fuzz"), new_shoe(1, 3)) as table:
        yield table


def request(url: str, body: bytes | None = None, method: str = "GET",
            content_type: str = "application/json") -> tuple[int, bytes]:
    req = urllib.request.Request(url, data=body, method=method,
                                 headers={"Content-Type": content_type} if body is not None else {})
    try:
        with urllib.request.urlopen(req, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def check(live: WebTable, status: int, body: bytes) -> None:
    assert status in ALLOWED, (status, body[:300])
    if status >= 400:  # an error's detail, or (409) the table's refusal of an action
        answer = json.loads(body)
        assert "detail" in answer or answer.get("accepted") is False, body[:300]
    live.check()  # the server, the controller and the shoe are all still running


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False)
    | st.text(max_size=80),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=12), inner,
                                                                 max_size=5),
    max_leaves=20,
)
texts = st.text(max_size=300) | st.sampled_from(["", " ", "\x00", "\ud800".encode(
    "utf-8", "surrogatepass").decode("utf-8", "replace"), "A" * 70, "<script>x</script>"])
bodies = st.fixed_dictionaries({}, optional={
    "supervisor": texts | json_values, "pin": texts | json_values,
    "action": st.sampled_from(["clear", "void_round", "enter_card", "end_shoe", "x"]) | texts,
    "card": st.sampled_from(["QS", "ZZ", "10H", "qs", "AS "]) | texts | json_values,
    "reason": texts | json_values,
})


@SETTINGS
@given(payload=st.binary(max_size=2000) | json_values.map(lambda v: json.dumps(v).encode())
       | bodies.map(lambda d: json.dumps(d).encode()),
       path=st.sampled_from(["api/supervisor/login", "api/supervisor/action"]),
       content_type=st.sampled_from(["application/json", "text/plain",
                                     "application/x-www-form-urlencoded"]))
def test_any_body_gets_a_clear_answer(live: WebTable, payload: bytes, path: str,
                                      content_type: str) -> None:
    status, body = request(live.url + path, payload, "POST", content_type)
    check(live, status, body)


@SETTINGS
@given(path=st.sampled_from(["api/rounds", "api/recall", "api/state", "api/roads", "api/odds",
                             "api/shoes"]),
       query=st.dictionaries(st.sampled_from(["shoe", "last", "x"]),
                             st.text(max_size=30) | st.integers().map(str), max_size=2))
def test_any_query_gets_a_clear_answer(live: WebTable, path: str, query: dict[str, Any]) -> None:
    status, body = request(live.url + path + "?" + urllib.parse.urlencode(query))
    check(live, status, body)


def test_the_right_pin_still_works_after_the_fuzzing(live: WebTable) -> None:
    """The fuzzed wrong PINs came from this client; the guard holds off only that client
    for that id, and a valid action from the right PIN is still decided by the table."""
    payload = json.dumps({"supervisor": SUPERVISOR, "pin": PIN, "action": "clear"}).encode()
    status, body = request(live.url + "api/supervisor/action", payload, "POST")
    assert status in (200, 202, 409, 429), body
    check(live, status, body)
