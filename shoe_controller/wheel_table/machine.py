"""The wheel table: journalled inputs in, table events and wheel commands out (pure, no I/O).

The game tracker (:class:`wheel_protocol.GameTracker`) follows the wheel's games; this table
turns its games into the table's **rounds** and keeps what a live table keeps besides:

* rounds are numbered by the table, 1, 2, ... over the journal's life, for the games it
  opened: a game the wheel runs while an irregularity is latched is **not opened** (its
  number is never settled; the display says so), as a card table's exit stays locked while
  something is latched;
* a latched irregularity (a wheel fault the tracker latches: hardware, idle, ball not
  detected, a number mismatch, a host start that did not happen, silence) stays until a
  supervisor clears it; clearing is refused while the wheel is not connected;
* the numbers, the last results for the display, hot and cold numbers, and the wheel's bias
  monitor (:mod:`shoe_controller.games.roulette.bias`): its alert is an irregularity that
  does not latch.

Time is an input: every call carries the journal record's wall time, which is the tracker's
clock, so a replay of the journal rebuilds exactly the same table. :meth:`WheelTable.handle`
returns the events (JSON-ready dicts, ``type`` first; what the table system, the display and
the MQTT publisher are told) and the commands for the wheel (sent live only, never on replay).
"""

from __future__ import annotations

from collections import Counter, deque
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from shoe_controller.games.roulette.bias import BiasConfig, BiasMonitor, Spin
from shoe_controller.games.roulette.layout import Colour, colour, column_of
from shoe_controller.live.inputs import TableInput
from shoe_controller.wheel_table.inputs import (
    BettingCommand,
    LinkChanged,
    SessionStarted,
    SupervisorAction,
    WheelLine,
    WheelTick,
)
from wheel_protocol import (
    Command,
    GameTracker,
    GameVoided,
    NoMoreBets,
    NumberAccepted,
    Reply,
    RoundOpened,
    SelfTestResult,
    SendCommand,
    Status,
    TrackerConfig,
    TrackerOutput,
    TrackerStateError,
    Unparsed,
    WarningFlag,
    WheelFault,
    WheelState,
    WheelStatusChanged,
    WinningNumberLine,
    parse_wheel_bytes,
)
from wheel_protocol.events import FaultCode

#: How many results the table keeps for the display (last numbers, hot and cold).
RECENT_RESULTS = 100
HOT_COLD = 5

STATE_NAMES = {
    WheelState.BEFORE_GAME: "before a game",
    WheelState.BETS_OPEN: "place your bets",
    WheelState.BALL_IN_RIM: "ball in the rim",
    WheelState.NO_MORE_BETS: "no more bets",
    WheelState.WINNING_NUMBER: "winning number",
    WheelState.TABLE_CLOSED: "table closed",
    WheelState.BALL_NOT_DETECTED: "ball not detected",
}

#: The dealer's prompt for each latched fault (the remedy comes from the wheel protocol).
FAULT_PROMPTS = {
    FaultCode.HARDWARE: "Wheel fault",
    FaultCode.WHEEL_IDLE: "Wheel went idle mid-game",
    FaultCode.MISSPIN: "Misspin",
    FaultCode.BALL_NOT_DETECTED: "Ball not detected",
    FaultCode.LAUNCH_RETRY: "Ball launch retrying",
    FaultCode.NOT_STARTED: "Wheel did not start the game",
    FaultCode.NUMBER_MISMATCH: "Two different numbers reported",
    FaultCode.NO_STATUS: "Wheel silent",
    FaultCode.GAME_NOT_OPENED: "Game ran with no round open",
    FaultCode.LINE_NOISE: "Line noise",
}

BIAS_KIND = "wheel_bias"
_LINE_KINDS = {Status: "status", WinningNumberLine: "result", Reply: "reply"}


@dataclass(frozen=True, slots=True)
class WheelSettings:
    """What the table is told at construction (from the run configuration; not journalled:
    a restart with other settings applies them from then on, like a card table's)."""

    table_id: str = "table-1"
    wheel: str = "wheel-1"
    tracker: TrackerConfig = field(default_factory=TrackerConfig)
    bias: BiasConfig = field(default_factory=BiasConfig)


@dataclass(slots=True)
class _Round:
    round: int
    game: int
    phase: str  # "betting_open" | "betting_closed"
    spin: int | None
    respin_of: int | None


@dataclass(frozen=True, slots=True)
class Outcome:
    events: list[dict[str, Any]]
    commands: list[Command]


def number_facts(number: int) -> dict[str, Any]:
    """The winning number's colour, dozen, column, parity and half (zero: none of them)."""
    if number == 0:
        return {"colour": Colour.GREEN.value, "dozen": None, "column": None, "parity": None,
                "half": None}
    return {"colour": colour(number).value, "dozen": (number - 1) // 12 + 1,
            "column": column_of(number), "parity": "even" if number % 2 == 0 else "odd",
            "half": "low" if number <= 18 else "high"}


def session_settings(settings: WheelSettings) -> dict[str, Any]:
    """What a wheel table's session record carries (:attr:`SessionStarted.settings`)."""
    return {"tracker": asdict(settings.tracker)}


class WheelTable:
    def __init__(self, settings: WheelSettings | None = None) -> None:
        self.settings = settings or WheelSettings()
        self.tracker = GameTracker(self.settings.tracker)
        self.round_number = 0
        self.current: _Round | None = None
        self._rounds_of_games: dict[int, int] = {}  # tracker game -> table round (this game's)
        self.skipped_game: int | None = None  # the last game not opened (latched)
        self.latched: list[dict[str, Any]] = []
        self.link_up = False
        self.link_reason = "not connected yet"
        self.profile_sha256 = ""
        self.last_result: dict[str, Any] | None = None
        self.recent: deque[dict[str, Any]] = deque(maxlen=RECENT_RESULTS)
        self.rounds_finished = 0
        self.numbers_accepted = 0
        self.voids = 0
        self.bias = BiasMonitor(self.settings.wheel, self.settings.bias)
        self.bias_evidence: dict[str, Any] | None = None
        self.last_self_test: str | None = None
        self.noise_lines = 0
        self.line_kind: str | None = None  # what the last input's line was (for metrics)
        self.dealer: str | None = None  # on the table now (the bias report's breakdown)
        self._events: list[dict[str, Any]] = []
        self._commands: list[Command] = []

    # ------------------------------------------------------------------ inputs
    def handle(self, item: TableInput, at: float) -> Outcome:
        """Apply one journalled input at journal time ``at``."""
        self._events, self._commands = [], []
        self.line_kind = None
        if isinstance(item, WheelLine):
            message = (Unparsed(item.raw, item.noise) if item.noise
                       else parse_wheel_bytes(item.raw))
            self.line_kind = _LINE_KINDS.get(type(message), "noise")
            if isinstance(message, Unparsed):
                self.noise_lines += 1
            self._tracked(self.tracker.receive(message, at))
        elif isinstance(item, WheelTick):
            self._tracked(self.tracker.poll(at))
        elif isinstance(item, BettingCommand):
            self._betting(item, at)
        elif isinstance(item, SupervisorAction):
            self._supervisor(item, at)
        elif isinstance(item, LinkChanged):
            self._link(item, at)
        elif isinstance(item, SessionStarted):
            self.profile_sha256 = item.profile_sha256
            if item.settings is not None:
                self._take_settings(item.settings)
            self.tracker.resume(at)  # the controller was away, not the wheel
        else:
            raise TypeError(f"a wheel table takes no {type(item).__name__} input")
        return Outcome(self._events, self._commands)

    def _take_settings(self, settings: dict[str, Any]) -> None:
        """The tracker settings journalled with a session: they decide games from then on,
        whatever the configuration says when the journal is replayed (a restart with another
        ``[wheel]`` section, ``shoe journal export``)."""
        try:
            config = TrackerConfig(**settings["tracker"])
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"session settings: not a wheel's tracker settings ({exc})") \
                from None
        self.tracker.config = config
        self.settings = replace(self.settings, tracker=config)

    def _link(self, item: LinkChanged, at: float) -> None:
        if item.up == self.link_up:
            return
        self.link_up = item.up
        self.link_reason = "" if item.up else (item.reason or "lost")
        if item.up:
            self.tracker.resume(at)
        elif self.current is not None and self.current.phase == "betting_open":
            # Nobody may bet on a game the table cannot see: bets are locked at once; the
            # game's outcome is taken when the line is back (or it is void), as the tracker
            # decides from what the wheel then says.
            self.current.phase = "betting_closed"
            self._emit("betting_closed", round=self.current.round, origin="line_lost")
        self._emit("wheel_health", status="up" if item.up else "down",
                   reason=self.link_reason)

    def _betting(self, item: BettingCommand, at: float) -> None:
        if not self.settings.tracker.host_starts:
            self._refuse(f"betting {item.action}: the wheel runs the games (its state 2 opens "
                         "betting); set wheel.host_starts for host-started games")
            return
        if item.action == "open" and self.latched:
            self._refuse("betting open: an irregularity is latched (a supervisor must clear "
                         "it first)")
            return
        try:
            if item.action == "open":
                outputs = self.tracker.open_betting(at)
            elif item.action == "close":
                outputs = self.tracker.close_betting(at)
            else:
                self._refuse(f"betting {item.action!r}: not open or close")
                return
        except TrackerStateError as exc:
            self._refuse(f"betting {item.action}: {exc}")
            return
        self._tracked(outputs, origin=item.origin)

    def _supervisor(self, item: SupervisorAction, at: float) -> None:
        if item.action == "clear":
            if not self.latched:
                self._refuse("nothing to clear")
            elif blocking := self._blocking_conditions():
                self._refuse(f"cannot clear yet: {blocking}")
                self._emit("clear_refused", supervisor=item.supervisor, reason=blocking)
            else:
                cleared, self.latched = self.latched, []
                for latched in cleared:
                    self._emit("irregularity_cleared", kind=latched["kind"],
                               supervisor=item.supervisor, round=latched["round"])
        elif item.action == "void_round":
            if not item.reason.strip():
                self._refuse("a void needs a reason (what happened)")
                return
            try:
                outputs = self.tracker.void(at, f"{item.supervisor}: {item.reason}")
            except TrackerStateError as exc:
                self._refuse(str(exc))
                return
            by = "table-system" if item.supervisor == "table-system" else "supervisor"
            self._tracked(outputs, origin=by, voided_by=item.supervisor)
        elif item.action == "dealer":
            name = item.reason.strip()
            if not name or not name.isprintable() or len(name) > 64:
                self._refuse("a dealer needs a name (1-64 printable characters)")
                return
            self.dealer = name
            self._emit("dealer_changed", dealer=name, supervisor=item.supervisor)
        elif item.action == "reset_bias":
            self.bias.reset()
            self.bias_evidence = None
            self._emit("bias_reset", supervisor=item.supervisor, reason=item.reason)
        else:
            self._refuse(f"a wheel table has no supervisor action {item.action!r}")

    def _blocking_conditions(self) -> str:
        """Why a clear cannot be accepted now ("" when it can): what caused the latch is
        still there, and the next game would latch it again at once."""
        if not self.link_up:
            return "the wheel is not connected"
        status = self.tracker.last_status
        if status is not None and WarningFlag.HARDWARE_FAULT in status.warnings:
            return "the wheel still reports a sensor, motor or encoder fault"
        if status is not None and status.state in (WheelState.TABLE_CLOSED,
                                                   WheelState.BALL_NOT_DETECTED):
            return (f"the wheel still says '{STATE_NAMES[status.state]}': have it "
                    "self-tested and restarted first")
        return ""

    # ------------------------------------------------------------------ tracker outputs
    def _tracked(self, outputs: list[TrackerOutput], *, origin: str = "wheel",
                 voided_by: str | None = None) -> None:
        """``origin``: who closed betting (the wheel's state 4, or the host's command);
        ``voided_by``: the supervisor (or ``table-system``) whose void this is. Both are
        reported as a card table reports them."""
        for output in outputs:
            if isinstance(output, RoundOpened):
                self._opened(output)
            elif isinstance(output, NoMoreBets):
                if (self.current is not None and self.current.game == output.game
                        and self.current.phase == "betting_open"):
                    self.current.phase = "betting_closed"
                    self._emit("betting_closed", round=self.current.round, origin=origin)
            elif isinstance(output, NumberAccepted):
                self._number(output)
            elif isinstance(output, GameVoided):
                self._voided(output, voided_by)
            elif isinstance(output, WheelFault):
                self._fault(output)
            elif isinstance(output, WheelStatusChanged):
                self._emit("wheel_status", state=output.state, warnings=output.warnings,
                           state_name=STATE_NAMES.get(WheelState(output.state), "?"))
            elif isinstance(output, SelfTestResult):
                self.last_self_test = output.code
                self._emit("wheel_self_test", code=output.code)
            elif isinstance(output, SendCommand):
                self._commands.append(output.command)

    def _opened(self, output: RoundOpened) -> None:
        if self.latched:
            self.skipped_game = output.game
            self.current = None
            self._emit("game_not_opened", wheel_spin=output.spin,
                       reason="an irregularity is latched: a supervisor must clear it")
            return
        respin_of = self._rounds_of_games.get(output.respin_of) \
            if output.respin_of is not None else None
        self.round_number += 1
        self._rounds_of_games = {output.game: self.round_number}  # this game's only
        if respin_of is not None:
            self._rounds_of_games[output.respin_of] = respin_of  # type: ignore[index]
        self.current = _Round(self.round_number, output.game, "betting_open", output.spin,
                              respin_of)
        self._emit("round_opened", round=self.round_number, wheel_spin=output.spin,
                   respin_of=respin_of)

    def _number(self, output: NumberAccepted) -> None:
        current = self.current
        if current is None or current.game != output.game:
            return  # a game that was not opened: watched, never settled
        self.current = None
        spin = output.spin if output.spin is not None else current.spin
        result = {"round": current.round, "number": output.number,
                  **number_facts(output.number), "wheel_spin": spin, "source": output.source,
                  "respin_of": current.respin_of, "void": None, "dealer": self.dealer}
        self.last_result = result
        self.recent.appendleft(result)
        self.rounds_finished += 1
        self.numbers_accepted += 1
        self._emit("winning_number", **result)
        direction = None
        status = self.tracker.last_status
        if status is not None:
            direction = "clockwise" if int(status.direction) == 0 else "anticlockwise"
        alert = self.bias.add(Spin(output.number, self.dealer, direction))
        if self.bias.games >= self.settings.bias.min_games or alert is not None:
            self.bias_evidence = self.bias.evidence().to_json_dict()
        if alert is not None:
            self._emit("irregularity", kind=BIAS_KIND, prompt="Wheel bias suspected",
                       remedy="have the wheel inspected (level, wear, ball track); see the "
                       "bias report", detail=alert.message, card=None, counter=None,
                       round=current.round, latched=False, p=alert.evidence.p,
                       hottest_sector=list(alert.hottest_sector))

    def _voided(self, output: GameVoided, voided_by: str | None) -> None:
        current = self.current
        if current is None or current.game != output.game:
            return
        self.current = None
        result = {"round": current.round, "number": None, "colour": None,
                  "wheel_spin": current.spin, "respin_of": current.respin_of,
                  "void": output.reason.value, "detail": output.detail}
        self.last_result = result
        self.recent.appendleft(result)
        self.rounds_finished += 1
        self.voids += 1
        self._emit("round_void", round=current.round, supervisor=voided_by,
                   reason=output.reason.value, detail=output.detail)

    def _fault(self, output: WheelFault) -> None:
        if output.code is FaultCode.NO_STATUS and not self.link_up:
            return  # the line is down: the display says so; silence is counted once it is up
        round_ = self._rounds_of_games.get(output.game) if output.game is not None else None
        facts = {"kind": output.code.value, "prompt": FAULT_PROMPTS[output.code],
                 "remedy": output.remedy, "detail": output.detail, "card": None,
                 "counter": None, "round": round_}
        if output.latch:
            self.latched.append(facts)
            self._emit("irregularity", **facts, latched=True)
        else:
            self._emit("wheel_warning", **facts)

    # ------------------------------------------------------------------ helpers
    def _refuse(self, reason: str) -> None:
        self._emit("refused", reason=reason)

    def _emit(self, event_type: str, /, **data: Any) -> None:
        self._events.append({"type": event_type, **data})

    # ------------------------------------------------------------------ what is shown
    def next_deadline(self) -> float | None:
        return self.tracker.next_deadline()

    @property
    def waiting_for_round(self) -> bool:
        """A host-started table may open the next round (nothing in progress or latched)."""
        return self.current is None and not self.latched and not self.tracker.in_progress

    def view(self) -> dict[str, Any]:
        """What the dealer display, the API and the MQTT state show (JSON-ready)."""
        status = self.tracker.last_status
        wheel: dict[str, Any] = {"connected": self.link_up, "reason": self.link_reason,
                                 "state": None, "state_name": None, "warnings": [],
                                 "spin": None, "rotor_rpm": None, "direction": None,
                                 "self_test": self.last_self_test}
        if isinstance(status, Status):
            wheel.update(state=int(status.state), state_name=STATE_NAMES[status.state],
                         warnings=[flag.name.lower() for flag in WarningFlag
                                   if flag and flag in status.warnings and flag.name],
                         spin=status.spin, rotor_rpm=status.rotor_rpm,
                         direction="clockwise" if int(status.direction) == 0
                         else "anticlockwise")
        prompt, level, phase = self._prompt()
        numbers = [r["number"] for r in self.recent if r["number"] is not None]
        counts = Counter(numbers)
        hot = [n for n, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:HOT_COLD]]
        cold = sorted(range(37), key=lambda n: (counts.get(n, 0), n))[:HOT_COLD]
        return {
            "game": "roulette",
            "table_id": self.settings.table_id,
            "round": self.current.round if self.current else self.round_number,
            "phase": phase,
            # The keys every live table's view has (the MQTT state reads them): the state,
            # the alarm, the device link; a wheel has no card exit to lock.
            "state": phase,
            "alarm": "latched" if self.latched else "ok",
            "link_up": self.link_up,
            "exit_locked": False,
            "prompt": prompt,
            "level": level,
            "host_starts": self.settings.tracker.host_starts,
            "dealer": self.dealer,
            "wheel": wheel,
            "last_result": self.last_result,
            "last_numbers": [{"round": r["round"], "number": r["number"],
                              "colour": r["colour"], "void": r["void"]}
                             for r in list(self.recent)[:20]],
            "hot": hot,
            "cold": cold,
            "recent_games": len(numbers),
            "latched": list(self.latched),
            "rounds_finished": self.rounds_finished,
            "voids": self.voids,
            "bias": {"wheel": self.settings.wheel, "games": self.bias.games,
                     "min_games": self.settings.bias.min_games,
                     "alert_p": self.settings.bias.alert_p,
                     "alerting": self.bias.alerting,
                     "p": None if self.bias_evidence is None else self.bias_evidence["p"],
                     "hottest_sector": list(self.bias.hottest_sector())
                     if self.bias.games else []},
        }

    def _prompt(self) -> tuple[str, str, str]:
        if not self.link_up:
            return f"Wheel not connected ({self.link_reason})", "error", "no_wheel"
        if self.latched:
            first = self.latched[0]
            return (f"{first['prompt']}: {first['remedy']}. A supervisor must clear it",
                    "error", "latched")
        current = self.current
        if current is not None:
            if current.phase == "betting_open":
                return "Place your bets", "action", "betting_open"
            return "No more bets", "wait", "betting_closed"
        if self.last_result is not None:
            result = self.last_result
            if result["number"] is None:
                return f"Game void: {result['void'].replace('_', ' ')}", "wait", "void"
            return f"{result['number']} {result['colour']}", "result", "result"
        return "Waiting for the wheel", "wait", "idle"
