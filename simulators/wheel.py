"""The software roulette wheel: speaks the wheel protocol (wheel_protocol/PROTOCOL.md), sans I/O.

It runs games like an automatic wheel (before a game, place your bets, ball in the rim, no
more bets, winning number, again), or waits for ``*u`` when the host starts games (mode bit 2),
draws each number from a seeded generator, sends a status every 500 ms when auto-status is on
(mode bit 128) and answers commands. Times are a real wheel's, divided by ``speed`` for tests.

Faults on demand, for a given game (``KIND@GAME``, :data:`GAME_FAULTS`):

* ``misspin``: flag 2 halfway through the ball's run; the wheel waits for ``*R``, then
  launches again (a respin);
* ``no-ball``: flag 1 through "no more bets", then state 7 and back to "before a game" with
  no number; ``no-ball-brief``: flag 1 for the first 2 s of "no more bets" only;
* ``launch-retry``: flag 8 for the first 2 s of "ball in the rim" (inside the vendor's grace);
  ``launch-retry-long``: for 5 s (past it);
* ``sensor``: flag 4 mid-game, then idle (state 6) until a self-test (``*F``);
* ``silent-idle``: a drop to state 6 with no flag (a fault without mode 256), until ``*F``.

Line faults (:class:`LineFaults`, seeded): status lines dropped, result lines dropped or
repeated. Byte noise on the wire comes from ``--faults`` (simulators/faults.py), as for the shoe.

The wheel's own record of its games (``shoe sim --wheel --log FILE``): :attr:`SimulatedWheel.played`
holds one :class:`PlayedGame` per game it finished, as it finished it (``on_game`` is called
with each), whatever the host made of it: what a test compares a table system's record with.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, replace

from shoe_controller.errors import ConfigError
from wheel_protocol.messages import (
    ARCADE_AUTOMATIC,
    AcknowledgeVoid,
    Command,
    Direction,
    GetVersion,
    Identify,
    Mode,
    Reply,
    Rotor,
    SelfTest,
    SetMode,
    SetParameter,
    StartGame,
    Status,
    StatusPoll,
    WarningFlag,
    WheelState,
    WinningNumberLine,
    encode_line,
)
from wheel_protocol.parser import CommandParser

GAME_FAULTS = ("misspin", "no-ball", "no-ball-brief", "launch-retry", "launch-retry-long",
               "sensor", "silent-idle")
IDENTITY = "CAM"
VERSION = "SIM 2.10"


@dataclass(frozen=True, slots=True)
class WheelTimings:
    """Seconds each phase lasts on a real wheel (about 50 games an hour)."""

    before_game: float = 4.0
    bets_open: float = 25.0
    ball_in_rim: float = 14.0
    no_more_bets: float = 10.0
    result: float = 12.0
    launching: float = 2.0  # host-started: from *u to the ball in the rim
    status_interval: float = 0.5
    recovery: float = 30.0  # an idle wheel nobody self-tests comes back by itself
    speed: float = 1.0  # how much faster than a real wheel the times above already are

    def scaled(self, speed: float) -> WheelTimings:
        """These times ``speed`` times faster (for tests and demos)."""
        if not (speed > 0 and speed < float("inf")):
            raise ConfigError(f"--speed must be a number more than 0, got {speed}")
        faster = {f: getattr(self, f) / speed for f in self.__dataclass_fields__ if f != "speed"}
        return replace(self, **faster, speed=self.speed * speed)

    def real(self, seconds: float) -> float:
        """A real wheel's ``seconds`` at this speed."""
        return seconds / self.speed


@dataclass(frozen=True, slots=True)
class LineFaults:
    """Seeded per-line faults: ``drop-status``, ``drop-line``, ``repeat-line`` (rates 0..1)."""

    drop_status: float = 0.0
    drop_line: float = 0.0
    repeat_line: float = 0.0
    seed: int = 0

    @classmethod
    def parse(cls, text: str) -> LineFaults:
        """``"drop-status=0.2,repeat-line=0.5,seed=3"``; ConfigError naming a bad item."""
        values: dict[str, float] = {}
        seed = 0
        for item in filter(None, (part.strip() for part in text.split(","))):
            key, sep, value = item.partition("=")
            name = key.strip().replace("-", "_")
            if not sep or name not in ("drop_status", "drop_line", "repeat_line", "seed"):
                raise ConfigError(f"--line-faults: unknown item {item!r} (known: drop-status, "
                                  "drop-line, repeat-line, seed)")
            try:
                if name == "seed":
                    seed = int(value)
                    continue
                number = float(value)
            except ValueError:
                raise ConfigError(f"--line-faults: {key} needs a number, got {value!r}") from None
            if not 0 <= number <= 1:
                raise ConfigError(f"--line-faults: {key} is a rate in 0..1, got {value}")
            values[name] = number
        return cls(values.get("drop_status", 0.0), values.get("drop_line", 0.0),
                   values.get("repeat_line", 0.0), seed)


def parse_game_faults(texts: list[str]) -> dict[int, str]:
    """``["misspin@3", "sensor@7,no-ball@9"]`` -> {3: "misspin", 7: "sensor", 9: "no-ball"}."""
    plan: dict[int, str] = {}
    for text in texts:
        for item in filter(None, (part.strip() for part in text.split(","))):
            kind, sep, game = item.partition("@")
            if kind not in GAME_FAULTS:
                raise ConfigError(f"--wheel-fault: unknown fault {kind!r} (known: "
                                  f"{', '.join(GAME_FAULTS)})")
            if not sep or not game.isdigit() or int(game) < 1:
                raise ConfigError(f"--wheel-fault: {item!r} needs the game number, e.g. "
                                  f"{kind}@3")
            plan[int(game)] = kind
    return plan


@dataclass(frozen=True, slots=True)
class PlayedGame:
    """A game the wheel finished: its number (None: it ended without one, e.g. no ball or a
    sensor fault), the fault planned for it (None: none), and when it began (state 2) and
    ended (the number drawn, or the game given up), on the wheel's clock."""

    game: int
    spin: int
    number: int | None
    fault: str | None
    began: float
    ended: float

    def to_json_dict(self) -> dict[str, object]:
        return asdict(self)


class SimulatedWheel:
    """The wheel's logic: :meth:`receive` host bytes, :meth:`step` the clock,
    :meth:`data_to_send` the lines due. ``numbers`` lists every number drawn, in order."""

    def __init__(self, *, seed: int | None = None, timings: WheelTimings = WheelTimings(),
                 mode: int = ARCADE_AUTOMATIC, faults: Mapping[int, str] | None = None,
                 line_faults: LineFaults = LineFaults(), result_line: bool = True,
                 stuck_spin: bool = False, games: int | None = None,
                 on_game: Callable[[PlayedGame], None] | None = None) -> None:
        self.timings = timings
        self.mode = mode
        self.faults = dict(faults or {})
        self.line_faults = line_faults
        self.result_line = result_line
        self.stuck_spin = stuck_spin
        self.max_games = games
        self._draw = random.Random(seed)
        self._line_rng = random.Random(line_faults.seed)
        self._parser = CommandParser()
        self._out = bytearray()
        self.numbers: list[int] = []
        self.played: list[PlayedGame] = []
        self.on_game = on_game
        self._began = 0.0  # when the current game's state 2 began
        self.game = 0
        self.spin = 0
        self.state = WheelState.BEFORE_GAME
        self.flags = WarningFlag.NONE
        self.last_number: int | None = None
        self.direction = Direction.CLOCKWISE
        self._since: float | None = None  # when the current state began
        self._next_status: float | None = None
        self._awaiting_ack = False
        self._start_requested: Direction | None = None
        self._misspun = False  # this game's misspin has happened
        self._failed = False  # this game's sensor fault or silent drop has happened
        self.finished = False

    # ------------------------------------------------------------------ protocol

    @property
    def host_starts(self) -> bool:
        return bool(self.mode & Mode.HOST_STARTS_GAME)

    @property
    def auto_status(self) -> bool:
        return bool(self.mode & Mode.AUTO_STATUS)

    @property
    def in_game(self) -> bool:
        return self.state in (WheelState.BETS_OPEN, WheelState.BALL_IN_RIM,
                              WheelState.NO_MORE_BETS, WheelState.WINNING_NUMBER)

    def status(self) -> Status:
        return Status(self.state, self.spin, self.last_number, self.flags, 250 if
                      self.state is not WheelState.TABLE_CLOSED else 0, self.direction)

    def receive(self, data: bytes, now: float) -> None:
        for command in self._parser.feed(data):
            if isinstance(command, Command):
                self._command(command, now)

    def _command(self, command: Command, now: float) -> None:
        if isinstance(command, Identify):
            self._send(Reply("K", IDENTITY))
        elif isinstance(command, GetVersion):
            self._send(Reply(command.letter, VERSION))
        elif isinstance(command, StatusPoll):
            self._send(self.status())
        elif isinstance(command, SelfTest):
            self._send(Reply("F", "0"))
            if self._fault_idle:
                self.flags = WarningFlag.NONE
                self._enter(WheelState.BEFORE_GAME, now)
        elif isinstance(command, Rotor):
            if self.in_game:
                self._send(Reply("P", "NO"))
            else:
                self._send(Reply("P", "OK"))
                self._enter(WheelState.BEFORE_GAME if command.on else WheelState.TABLE_CLOSED,
                            now)
        elif isinstance(command, StartGame):
            if self.host_starts and self.state is WheelState.BEFORE_GAME:
                self._start_requested = command.direction
                self._since = now  # start from now, not from when the wheel became ready
            else:
                self._send(Reply("u", "NO"))
        elif isinstance(command, AcknowledgeVoid):
            if self._awaiting_ack:
                self._awaiting_ack = False
                self.flags = WarningFlag.NONE
                self._enter(WheelState.BALL_IN_RIM, now)  # the respin
        elif isinstance(command, SetMode):
            if self.in_game:
                self._send(Reply("o", "BUSY"))
            else:
                self.mode = command.mode
                self._send(Reply("o", "OK"))
        elif isinstance(command, SetParameter):
            self._send(Reply("o", "BUSY") if self.in_game else Reply("T", "OK"))

    def _send(self, message: Status | Reply | WinningNumberLine) -> None:
        self._out += encode_line(message)

    def data_to_send(self, now: float) -> bytes:
        self.step(now)
        out, self._out = bytes(self._out), bytearray()
        return out

    # ------------------------------------------------------------------ time

    def next_deadline(self) -> float | None:
        times = [t for t in (self._next_status, self._state_deadline()) if t is not None]
        return min(times, default=None)

    def step(self, now: float) -> None:
        if self._since is None:
            self._since = now
            self._next_status = now
        for _ in range(16):  # a long pause may pass several phases at once
            deadline = self._state_deadline()
            if deadline is None or now < deadline:
                break
            self._advance(deadline)
            passed = self._state_deadline()
            if (self.auto_status and passed is not None and now >= passed
                    and self.state is not WheelState.WINNING_NUMBER):  # 5 is sent at once
                # The process was not scheduled for a while (a loaded test machine, at a
                # high speed) and this phase is over already: a real wheel would have sent
                # its status in it; sent now, twice as a real wheel repeats it, so that the
                # host sees the game the wheel played (its ball launched), not a jump.
                self._send(self.status())
                self._send(self.status())
        self._set_flags(now)
        if self.auto_status and self._next_status is not None and now >= self._next_status:
            if not self._line_rng.random() < self.line_faults.drop_status:
                self._send(self.status())
            self._next_status = now + self.timings.status_interval
        elif not self.auto_status:
            self._next_status = None

    @property
    def _fault(self) -> str | None:
        return self.faults.get(self.game)

    @property
    def _fault_idle(self) -> bool:
        return self.state is WheelState.TABLE_CLOSED and self._fault in ("sensor", "silent-idle")

    def _state_deadline(self) -> float | None:
        t, since, fault = self.timings, self._since, self._fault
        if since is None or self.finished:
            return None
        state = self.state
        if state is WheelState.BEFORE_GAME:
            if self.max_games is not None and self.game >= self.max_games:
                return None
            if self.host_starts:
                return since if self._start_requested is not None else None
            return since + t.before_game
        if state is WheelState.BETS_OPEN:
            return since + (t.launching if self.host_starts else t.bets_open)
        if state is WheelState.BALL_IN_RIM:
            if self._awaiting_ack:
                return None
            if fault == "misspin" and not self._misspun:
                return since + t.ball_in_rim / 2
            if fault == "sensor":  # flag 4 halfway, shown for two statuses, then idle
                return since + (2 * t.status_interval if self._failed else t.ball_in_rim / 2)
            return since + t.ball_in_rim
        if state is WheelState.NO_MORE_BETS:
            if fault == "no-ball":
                return since + t.no_more_bets + t.real(8.0)  # past the 5 s grace
            if fault == "silent-idle":
                return since + t.no_more_bets / 2
            return since + t.no_more_bets
        if state is WheelState.WINNING_NUMBER:
            return since + t.result
        if state is WheelState.BALL_NOT_DETECTED:
            return since + t.result
        if state is WheelState.TABLE_CLOSED and self._fault_idle:
            return since + t.recovery
        return None

    def _advance(self, at: float) -> None:
        state, fault = self.state, self._fault
        if state is WheelState.BEFORE_GAME:
            self.game += 1
            if not self.stuck_spin or self.spin == 0:
                self.spin = self.spin % 256 + 1
            if self._start_requested is not None:
                self.direction, self._start_requested = self._start_requested, None
            elif self.mode & Mode.ALTERNATE_DIRECTION and self.game > 1:
                self.direction = Direction(1 - self.direction)
            self._enter(WheelState.BETS_OPEN, at)
        elif state is WheelState.BETS_OPEN:
            self._enter(WheelState.BALL_IN_RIM, at)
        elif state is WheelState.BALL_IN_RIM:
            if fault == "misspin" and not self._misspun:
                self._misspun = True
                self.flags |= WarningFlag.MISSPIN
                self._awaiting_ack = True
            elif fault == "sensor" and not self._failed:
                self._failed = True
                self.flags |= WarningFlag.HARDWARE_FAULT
                self._enter(WheelState.BALL_IN_RIM, at)
            elif fault == "sensor":
                self._enter(WheelState.TABLE_CLOSED, at)
            else:
                self._enter(WheelState.NO_MORE_BETS, at)
        elif state is WheelState.NO_MORE_BETS:
            if fault == "no-ball":
                self._enter(WheelState.BALL_NOT_DETECTED, at)
            elif fault == "silent-idle" and not self._failed:
                self._failed = True
                self._enter(WheelState.TABLE_CLOSED, at)
            else:
                self._result(at)
        elif state in (WheelState.WINNING_NUMBER, WheelState.BALL_NOT_DETECTED,
                       WheelState.TABLE_CLOSED):  # the game is over, or the wheel recovered
            self.flags = WarningFlag.NONE
            self._enter(WheelState.BEFORE_GAME, at)

    def _enter(self, state: WheelState, at: float) -> None:
        if state is WheelState.BETS_OPEN:
            self._misspun = False
            self._failed = False
            self._began = at
        elif state is WheelState.BALL_NOT_DETECTED or (
                state is WheelState.TABLE_CLOSED and self.in_game):
            self._game_over(None, at)  # no ball, a sensor fault or a silent drop: no number
        self.state = state
        self._since = at
        if state is WheelState.BEFORE_GAME and self.max_games is not None \
                and self.game >= self.max_games:
            self.finished = True  # however the last game ended

    def _result(self, at: float) -> None:
        number = self._draw.randrange(37)
        self.numbers.append(number)
        self._game_over(number, at)
        self.last_number = number
        self.flags = WarningFlag.NONE
        self._enter(WheelState.WINNING_NUMBER, at)
        if self.auto_status:  # the state-5 status goes out at once, as real wheels do
            self._send(self.status())
            self._next_status = at + self.timings.status_interval
        if self.result_line and not self._line_rng.random() < self.line_faults.drop_line:
            self._send(WinningNumberLine(number))
            if self._line_rng.random() < self.line_faults.repeat_line:
                self._send(WinningNumberLine(number))

    def _game_over(self, number: int | None, at: float) -> None:
        played = PlayedGame(self.game, self.spin, number, self._fault, self._began, at)
        self.played.append(played)
        if self.on_game is not None:
            self.on_game(played)

    def _set_flags(self, now: float) -> None:
        """Flags that last only part of a phase (the brief and the long launch failures)."""
        fault, since, t = self._fault, self._since, self.timings
        if since is None or fault is None:
            return
        if self.state is WheelState.BALL_IN_RIM and fault.startswith("launch-retry"):
            span = t.real(5.0 if fault == "launch-retry-long" else 2.0)
            self._flag(WarningFlag.LAUNCH_FAILED, now < since + span)
        elif self.state is WheelState.NO_MORE_BETS and fault == "no-ball-brief":
            self._flag(WarningFlag.BALL_NOT_DETECTED, now < since + t.real(2.0))
        elif self.state is WheelState.NO_MORE_BETS and fault == "no-ball":
            self._flag(WarningFlag.BALL_NOT_DETECTED, True)

    def _flag(self, flag: WarningFlag, on: bool) -> None:
        self.flags = self.flags | flag if on else self.flags & ~flag
