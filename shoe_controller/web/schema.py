"""The JSON API's documents as pydantic models: they validate what the API serves and give
the OpenAPI description (``/openapi.json``, rendered offline at ``/api/docs``).

The API is versioned by :data:`API_VERSION` (OpenAPI ``info.version``); a change an
integrator must act on raises it and is listed here:

* 1: the first API.
* 2: ``POST /api/supervisor/action`` answers with what the table decided (:class:`ActionOutcome`):
  200 journalled and done, 409 journalled but refused (``message`` says why), 202 still queued;
  it used to answer 202 ``Accepted`` whatever the table made of it. Wrong PINs answer 429 with
  ``Retry-After`` once a client has had too many (no longer per typed id alone).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

API_VERSION = 2


class Latched(BaseModel):
    kind: str = Field(description="irregularity kind, e.g. extra_card, misread")
    prompt: str = Field(description="what the dealer sees, e.g. 'Extra card: no card was due'")
    remedy: str = Field(description="what to do about it")
    detail: str
    card: str | None
    counter: int | None = Field(description="the shoe's card counter of the card concerned")
    round: int | None


class TableViewDoc(BaseModel):
    state: str = Field(description="table state, e.g. in_play.dealing.initial_deal")
    alarm: str = Field(description="ok or latched")
    prompt: str = Field(description="the dealer's next action, e.g. 'Deal Player'")
    level: str = Field(description="action, wait, result or error")
    detail: str
    exit_locked: bool
    lights: list[str]
    round: int
    cards_dealt: int = Field(description="cards drawn from the current shoe (burn included)")
    due: str | None = Field(description="whom the next card is for: player, banker, burn")
    latched: list[Latched]
    lid_open: bool
    link_up: bool
    awaiting: dict[str, Any] | None = Field(
        default=None, description="blackjack: what the round waits for when it is the "
        "players' turn: `kind` (decision or insurance), `prompt`, `key`, `seat`, `hand`, "
        "`options`, `seats`; absent otherwise")


class Hand(BaseModel):
    cards: list[str] = Field(description="card codes in dealing order, e.g. ['KS', '7H']")
    total: int | None = Field(description="baccarat total of the cards so far")


class RoundCard(BaseModel):
    target: str
    position: int
    card: str
    source: str | None = Field(description="scanner, camera or supervisor")
    counter: int | None


class Round(BaseModel):
    shoe: int
    round: int
    cards: list[RoundCard]
    player: Hand
    banker: Hand
    result: dict[str, Any] | None = Field(
        description="the round line of docs/replay-schema.md with the natural/side-bet facts")
    void: dict[str, Any] | None = Field(description="supervisor and reason if voided")
    irregularities: list[str]


class Stats(BaseModel):
    shoe: int
    rounds: int
    banker: int
    player: int
    tie: int
    naturals: int
    player_pairs: int
    banker_pairs: int
    voided: int
    irregularities: int
    cards_burned: int
    cards_dealt: int
    cards_left: int | None
    shoe_cards: int


class RoadCell(BaseModel):
    col: int
    row: int
    value: str = Field(description="B/P/T (bead plate, big road) or red/blue (derived roads)")
    streak: int = Field(description="logical column (streak) index")
    depth: int = Field(description="position in the streak, 0 = top")
    ties: int
    player_pair: bool
    banker_pair: bool
    natural: bool


class BigRoad(BaseModel):
    cells: list[RoadCell]
    leading_ties: int = Field(description="ties before the first Banker/Player result")
    streaks: list[int]


class Roads(BaseModel):
    rows: int
    bead_plate: list[RoadCell]
    big_road: BigRoad
    big_eye_boy: list[RoadCell]
    small_road: list[RoadCell]
    cockroach_pig: list[RoadCell]


class BetEdge(BaseModel):
    bet: str
    description: str
    house_edge: float = Field(description="fraction of the stake; negative: the player has the edge")
    player_edge: bool
    win: float
    push: float


class Odds(BaseModel):
    shoe: int
    after_round: int = Field(description="completed rounds of the shoe the odds are taken after")
    error: str | None
    cards_left: int | None
    bets: list[BetEdge]
    outcomes: dict[str, float] = Field(description="probabilities of banker, player, tie")
    seconds: float | None = None


class State(BaseModel):
    version: int = Field(description="increases with every update")
    profile: str
    view: TableViewDoc
    round: Round | None
    previous_round: Round | None = Field(
        description="the last finished or voided round before `round`")
    stats: Stats
    roads: Roads
    recall: list[Round]
    odds: Odds | None
    supervisor_log: list[dict[str, Any]] = Field(
        description="the last supervisor actions, oldest first: `type` (irregularity_cleared, "
        "clear_refused, round_void, shoe_finished), `supervisor`, `kind`, `reason`, `round` "
        "as the table's event gave them, and `text`: what happened, in words for people "
        "(e.g. 'Clear refused: card 3 was not read: enter it, or void the round')")
    blackjack: dict[str, Any] | None = Field(
        default=None, description="blackjack tables (null otherwise): `seats` (each with "
        "`hands`: `cards`, `total`, `soft`, `bust`, and once settled `outcome`, `blackjack`, "
        "`doubled`), `dealer` (`cards`: `card` null and `face_down` true for the hole card "
        "until the dealer turns it over; `total` of the cards shown, `final`, `blackjack`), "
        "`awaiting` (the view's, with `seconds_left` before the hand stands)")


class ShoeSummary(BaseModel):
    shoe: int
    rounds: int = Field(description="completed rounds (voided ones not counted)")
    finished: bool
    stats: dict[str, Any]


class Login(BaseModel):
    supervisor: str = Field(min_length=1, max_length=64)
    pin: str = Field(min_length=1, max_length=64)


class Action(Login):
    action: str = Field(description="clear, void_round, enter_card, end_shoe, or error_burn "
                        "(blackjack: burn the profile's cards after a game error, between "
                        "rounds); at a wheel table: clear, void_round, reset_bias (`reason`: "
                        "why) or dealer (`reason`: the dealer's name)")
    card: str | None = Field(default=None, description="for enter_card: a card code, e.g. QS")
    reason: str = Field(default="", max_length=200, description="why: required (not blank) "
                        "for void_round, journalled with it; a void without one is refused "
                        "with HTTP 400")


class Accepted(BaseModel):
    """The answer to a login: the PIN is right (the panel unlocks)."""

    accepted: bool
    supervisor: str
    action: str | None = None


class ActionOutcome(BaseModel):
    """What became of a supervisor action (``POST /api/supervisor/action``)."""

    api_version: int = Field(API_VERSION, description="this document's API version")
    status: Literal["journalled", "queued"] = Field(
        description="journalled: in the journal, the table has decided (HTTP 200 or 409); "
        "queued: handed to the table but not journalled within 2 s (HTTP 202): it is applied "
        "in order, and lost if the controller stops before that")
    accepted: bool | None = Field(
        description="journalled: whether the table carried it out; queued: null")
    message: str = Field(
        description="the table's reason for a refusal (e.g. 'cannot clear yet: card 12 was "
        "not read: enter it, or void the round'), what it did, or what queued means")
    supervisor: str
    action: str
    record: int | None = Field(description="the journal record's number, once journalled")
