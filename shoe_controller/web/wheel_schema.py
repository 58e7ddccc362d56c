"""The wheel table's display API documents as pydantic models: they validate what the API
serves and give its OpenAPI description (``/openapi.json``, rendered offline at ``/api/docs``).

The wheel table's API is versioned by :data:`WHEEL_API_VERSION` (OpenAPI ``info.version``,
and ``api_version`` in every document); a change an integrator must act on raises it and is
listed here:

* 1: the first wheel API: ``GET /api/state``, ``GET /api/stream``, ``GET /api/bias``,
  ``POST /api/supervisor/login``, ``POST /api/supervisor/action`` (as a card table's API 2).

The view's models allow fields they do not name: a field the table adds to its view reaches
the API at once (documented here when it is).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from shoe_controller.web.schema import ActionOutcome, Latched

WHEEL_API_VERSION = 1


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class WheelStatus(_Open):
    connected: bool = Field(description="the line to the wheel is open")
    reason: str = Field(description="why not, when it is not")
    state: int | None = Field(description="the wheel's state 1-7 from its last status")
    state_name: str | None = Field(description="e.g. 'place your bets', 'ball in the rim'")
    warnings: list[str] = Field(description="warning flags of the last status, e.g. "
                                "misspin, ball_not_detected, hardware_fault, launch_failed")
    spin: int | None = Field(description="the wheel's own spin counter (1-256, wrapping)")
    rotor_rpm: float | None
    direction: str | None = Field(description="clockwise or anticlockwise")
    self_test: str | None = Field(description="the code of the last self-test answer")


class Result(_Open):
    round: int
    number: int | None = Field(description="0-36; null for a void game")
    colour: str | None = Field(description="red, black or green (zero); null for a void")
    void: str | None = Field(description="null, or why the game is void: misspin, "
                             "ball_not_detected, fault, supervisor, ...")
    dozen: int | None = None
    column: int | None = None
    parity: str | None = None
    half: str | None = None
    wheel_spin: int | None = None
    source: str | None = Field(default=None, description="status or result line")
    respin_of: int | None = None
    detail: str | None = Field(default=None, description="a void's detail")
    dealer: str | None = None


class StripEntry(_Open):
    round: int
    number: int | None
    colour: str | None
    void: str | None


class BiasSummary(_Open):
    wheel: str
    games: int = Field(description="games in this monitoring period")
    min_games: int = Field(description="games before the test is taken")
    alert_p: float = Field(description="the alert level: evidence with a p-value below it "
                           "raises the alert")
    alerting: bool = Field(description="the alert was raised in this period (it stands until "
                           "a supervisor resets the monitor)")
    p: float | None = Field(description="p-value of the evidence against a fair wheel "
                            "(null before min_games)")
    hottest_sector: list[int] = Field(description="the run of neighbouring pockets with the "
                                      "most games, in wheel order")


class WheelView(_Open):
    game: str = Field(description="roulette")
    table_id: str
    round: int = Field(description="the round in progress, or the last one")
    phase: str = Field(description="no_wheel, latched, betting_open, betting_closed, result, "
                       "void or idle")
    prompt: str = Field(description="what the dealer reads, e.g. 'Place your bets'")
    level: str = Field(description="action, wait, result or error")
    host_starts: bool = Field(description="the controller starts each game (`*u`)")
    dealer: str | None
    wheel: WheelStatus
    last_result: Result | None
    last_numbers: list[StripEntry] = Field(description="the last 20 games, newest first")
    hot: list[int] = Field(description="the most frequent numbers of the last recent_games")
    cold: list[int] = Field(description="the least frequent numbers of the last recent_games")
    recent_games: int = Field(description="numbers hot and cold are taken over")
    latched: list[Latched] = Field(description="irregularities a supervisor must clear")
    rounds_finished: int
    voids: int
    bias: BiasSummary
    betting_closes_at: float | None = Field(
        description="host-started games on the controller's own betting window: when betting "
        "closes (Unix time), else null")
    reporting: dict[str, Any] | None = Field(
        description="the table system's connection (`connected`), null without one")


class WheelState(BaseModel):
    api_version: int = Field(WHEEL_API_VERSION, description="this document's API version")
    version: int = Field(description="increases with every update")
    profile: str
    betting_seconds_left: float | None = Field(
        description="seconds until betting closes, as of this update (null unless betting is "
        "open on the controller's own window)")
    view: WheelView


class WheelActionOutcome(ActionOutcome):
    """What became of a supervisor action (``POST /api/supervisor/action``)."""

    api_version: int = Field(WHEEL_API_VERSION, description="this document's API version")
