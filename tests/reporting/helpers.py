"""Shared pieces for the reporting tests: keys, a running reference table system, clients."""

from __future__ import annotations

import json
from typing import Any

from websockets.sync.client import ClientConnection, connect

from shoe_controller.reporting import protocol as p
from shoe_controller.reporting.client import TableSystemConfig, TableSystemReporter

KEY = b"k" * 32
TOKEN = "token-for-tests"


def reporter_for(port: int, **overrides: Any) -> TableSystemReporter:
    config = TableSystemConfig(url=f"ws://127.0.0.1:{port}/", token=TOKEN, key=KEY,
                               table_id="t1", backoff_initial=0.02, backoff_max=0.1,
                               drain_seconds=5.0, **overrides)
    return TableSystemReporter(config)


def card_event(round_: int, position: int, card: str = "AS") -> dict[str, Any]:
    return {"type": "card", "round": round_, "target": "player" if position % 2 else "banker",
            "position": position, "card": card, "source": "scanner", "counter": position}


class RawPeer:
    """A hand-driven controller: connects, authenticates, sends whatever a test wants."""

    def __init__(self, port: int, *, key: bytes = KEY, token: str = TOKEN) -> None:
        self.ws: ClientConnection = connect(f"ws://127.0.0.1:{port}/", open_timeout=5,
                                            proxy=None, max_size=p.HARD_FRAME_LIMIT).__enter__()
        self.key = key
        self.token = token
        self.challenge = self.recv()
        self.session = ""
        self.seq = 0

    def recv(self, timeout: float = 5) -> dict[str, Any]:
        return json.loads(self.ws.recv(timeout))

    def send(self, message: dict[str, Any], key: bytes | None = None) -> None:
        self.ws.send(p.encode(message, key or self.key))

    def hello(self, **changes: Any) -> dict[str, Any]:
        client_nonce = p.new_nonce()
        hello = p.message("hello", table_id="t1", token=self.token,
                          nonce=self.challenge["nonce"], client_nonce=client_nonce,
                          controller="test", head=0) | changes
        self.send(hello)
        reply = self.recv()
        if reply["type"] == "welcome":
            self.session = p.session_id(self.challenge["nonce"], client_nonce)
            self.seq = reply["last_seq"]
        return reply

    def event(self, seq: int | None = None, **changes: Any) -> dict[str, Any]:
        if seq is None:
            self.seq += 1
            seq = self.seq
        return p.message("round_opened", session=self.session, table_id="t1", seq=seq,
                         id=f"t1:{seq}:0", at=1.0, shoe=1, data={"round": seq}) | changes

    def close(self) -> None:
        self.ws.close()
