"""``shoe replay``: deal a shoe file through the baccarat engine (JSON lines: docs/replay-schema.md)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from shoe_controller.cards import read_shoe_file


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("shoefile", metavar="SHOEFILE", help="card codes in dealing order")
    parser.add_argument(
        "--profile",
        metavar="NAME",
        required=True,
        help="table profile name or TOML file (burn and cut-card rules)",
    )
    parser.add_argument(
        "--cut-card",
        metavar="N",
        type=int,
        default=None,
        help="cards behind the cut card (default: the profile's; 0 = none)",
    )
    parser.add_argument("--json", action="store_true", help="JSON lines (schema version 1)")


def run(args: argparse.Namespace) -> int:
    from shoe_controller.games.baccarat.profile import load_profile
    from shoe_controller.games.baccarat.replay import replay_shoe

    profile = load_profile(args.profile)
    cards = read_shoe_file(args.shoefile)
    out = sys.stdout
    try:
        for record in replay_shoe(cards, profile, cut_card=args.cut_card):
            out.write(json.dumps(record) + "\n" if args.json else _text(record) + "\n")
            out.flush()  # lines already dealt stay visible even if a later round fails
    except BrokenPipeError:
        # The reader (e.g. ``| head``) closed the pipe: not an error of ours. Point stdout at
        # devnull so the interpreter's final flush does not complain again.
        devnull = open(os.devnull, "w")  # noqa: SIM115 - lives until exit
        os.dup2(devnull.fileno(), sys.stdout.fileno())
    return 0


def _text(record: dict[str, Any]) -> str:
    kind = record["type"]
    if kind == "burn":
        return f"burn    {' '.join(record['cards'])}"
    if kind == "shoe_end":
        return f"end     {record['rounds']} rounds, {record['cards_used']} cards used"
    flags = [name for name in ("natural", "player_pair", "banker_pair") if record[name]]
    return (
        f"{record['round']:>4}    P {' '.join(record['player']):<9} ({record['player_total']})"
        f"  B {' '.join(record['banker']):<9} ({record['banker_total']})"
        f"  {record['outcome']:<6} {' '.join(flags)}".rstrip()
    )
