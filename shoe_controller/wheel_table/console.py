"""The wheel table's lines on stdout (``shoe run`` without ``--quiet``): one line per round
opened, betting closed, winning number, void and irregularity, as the dealer would call them.

    round 12: place your bets
    round 12: no more bets
    round 12: 17 red  (odd, high, dozen 2, column 2; spin 113)
    round 13 void: misspin (the ball ran the same way as the rotor)
"""

from __future__ import annotations

from typing import Any


class WheelConsole:
    def __init__(self, out: Any = None) -> None:
        import sys

        self.out = out or sys.stdout

    def __call__(self, view: dict[str, Any], events: list[dict[str, Any]]) -> None:
        for event in events:
            line = describe(event)
            if line:
                print(line, file=self.out, flush=True)

    @staticmethod
    def summary(table: Any) -> str:
        return (f"{table.rounds_finished} game(s) this journal: {table.numbers_accepted} "
                f"numbers, {table.voids} void; last round {table.round_number}")


def describe(event: dict[str, Any]) -> str | None:
    kind = event["type"]
    if kind == "round_opened":
        respin = f" (respin of round {event['respin_of']})" if event.get("respin_of") else ""
        return f"round {event['round']}: place your bets{respin}"
    if kind == "betting_closed":
        return f"round {event['round']}: no more bets"
    if kind == "winning_number":
        facts = [] if event["number"] == 0 else [
            event["parity"], event["half"], f"dozen {event['dozen']}",
            f"column {event['column']}"]
        spin = f"spin {event['wheel_spin']}" if event.get("wheel_spin") is not None else ""
        details = "; ".join(part for part in (", ".join(facts), spin) if part)
        return f"round {event['round']}: {event['number']} {event['colour']}" + \
            (f"  ({details})" if details else "")
    if kind == "round_void":
        return f"round {event['round']} void: {event['reason'].replace('_', ' ')} " \
               f"({event['detail']})"
    if kind == "irregularity":
        latched = "LATCHED, supervisor must clear" if event.get("latched") else "not latched"
        return f"IRREGULARITY {event['prompt']}: {event['detail']} [{latched}]; " \
               f"{event['remedy']}"
    if kind == "irregularity_cleared":
        return f"cleared: {event['kind']} by {event['supervisor']}"
    if kind == "wheel_health":
        return f"wheel line {event['status']}" + (f": {event['reason']}"
                                                   if event["reason"] else "")
    if kind == "dealer_changed":
        return f"dealer {event['dealer']} on the table ({event['supervisor']})"
    if kind == "game_not_opened":
        return "the wheel ran a game while an irregularity is latched: not opened"
    return None
