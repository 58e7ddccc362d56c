"""The roulette wheel protocol (Cammegh SlingShot-style ASCII lines), sans I/O.

Standard library only, like ``firmware_protocol``: typed messages and their encodings
(:mod:`.messages`), streaming parsers that never raise (:mod:`.parser`) and the game tracker
that turns a wheel's status stream and time into game events (:mod:`.tracker`,
:mod:`.events`). PROTOCOL.md (next to this file) describes the wire protocol as implemented.
"""

from wheel_protocol.events import (
    REMEDIES,
    FaultCode,
    GameEvent,
    GameVoided,
    NoMoreBets,
    NumberAccepted,
    RoundOpened,
    SelfTestResult,
    SendCommand,
    TrackerOutput,
    VoidReason,
    WheelFault,
    WheelStatusChanged,
)
from wheel_protocol.messages import (
    ARCADE_AUTOMATIC,
    COMMANDS,
    GAME_SERVER,
    LINE_END,
    MIN_POLL_INTERVAL,
    PROTOCOL_REVISION,
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
    Unparsed,
    WarningFlag,
    WheelMessage,
    WheelState,
    WinningNumberLine,
    encode_line,
)
from wheel_protocol.parser import (
    MAX_LINE,
    CommandParser,
    LineSplitter,
    WheelParser,
    parse_wheel_bytes,
)
from wheel_protocol.tracker import GameTracker, Phase, TrackerConfig, TrackerStateError

__all__ = [
    "ARCADE_AUTOMATIC", "COMMANDS", "GAME_SERVER", "LINE_END", "MAX_LINE", "MIN_POLL_INTERVAL",
    "PROTOCOL_REVISION", "REMEDIES", "AcknowledgeVoid", "Command", "CommandParser", "Direction",
    "FaultCode", "GameEvent", "GameTracker", "GameVoided", "GetVersion", "Identify",
    "LineSplitter", "Mode", "NoMoreBets", "NumberAccepted", "Phase", "Reply", "Rotor",
    "RoundOpened", "SelfTest", "SelfTestResult", "SendCommand", "SetMode", "SetParameter",
    "StartGame", "Status", "StatusPoll", "TrackerConfig", "TrackerOutput", "TrackerStateError",
    "Unparsed", "VoidReason", "WarningFlag", "WheelFault", "WheelMessage", "WheelParser",
    "WheelState", "WheelStatusChanged", "WinningNumberLine", "encode_line", "parse_wheel_bytes",
]
