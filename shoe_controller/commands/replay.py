"""``shoe replay``: deal a shoe file through the baccarat engine (JSON lines:
docs/replay-schema.md), or through the blackjack engine with a decisions file (docs/blackjack.md)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from shoe_controller.cards import read_shoe_file
from shoe_controller.errors import ShoeError


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("shoefile", metavar="SHOEFILE", help="card codes in dealing order")
    parser.add_argument(
        "--profile",
        metavar="NAME",
        required=True,
        help="table profile name or TOML file (its shoe procedure; for blackjack its rules)",
    )
    parser.add_argument(
        "--cut-card",
        metavar="N",
        type=int,
        default=None,
        help="cards behind the cut card (default: the profile's; 0 = none)",
    )
    parser.add_argument(
        "--decisions",
        metavar="FILE",
        default=None,
        help="blackjack: the players' decisions, JSON lines (docs/blackjack.md)",
    )
    parser.add_argument("--json", action="store_true", help="JSON lines (schema version 1)")


def run(args: argparse.Namespace) -> int:
    from shoe_controller.games.blackjack.profile import is_blackjack_profile

    if is_blackjack_profile(args.profile) or args.decisions is not None:
        return _run_blackjack(args)
    from shoe_controller.games.baccarat.profile import load_profile
    from shoe_controller.games.baccarat.replay import replay_shoe

    profile = load_profile(args.profile)
    cards = read_shoe_file(args.shoefile)
    return _print(replay_shoe(cards, profile, cut_card=args.cut_card), args.json, _text)


def _run_blackjack(args: argparse.Namespace) -> int:
    from shoe_controller.games.blackjack.decisions import read_decisions_file
    from shoe_controller.games.blackjack.profile import load_profile
    from shoe_controller.games.blackjack.replay import replay_blackjack

    profile = load_profile(args.profile)  # with --decisions, a baccarat profile is an error here
    if args.decisions is None:
        raise ShoeError(f"{profile.name} is a blackjack profile: replay needs the players' "
                        "choices, --decisions FILE (docs/blackjack.md)")
    cards = read_shoe_file(args.shoefile)
    decisions = read_decisions_file(args.decisions, profile.rules.seats)
    records = replay_blackjack(cards, profile, decisions, cut_card=args.cut_card)
    return _print(records, args.json, _blackjack_text)


def _print(records: Any, as_json: bool, text: Any) -> int:
    out = sys.stdout
    try:
        for record in records:
            out.write(json.dumps(record) + "\n" if as_json else text(record) + "\n")
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


def _blackjack_text(record: dict[str, Any]) -> str:
    kind = record["type"]
    if kind != "round":
        return _text(record)
    dealer = record["dealer"]
    parts = [f"{record['round']:>4}    D {' '.join(dealer['cards'])} ({_total(dealer)})"]
    for seat, hands in record["seats"].items():
        for number, hand in enumerate(hands, start=1):
            label = f"{seat}.{number}" if len(hands) > 1 else seat
            flags = " x2" if hand["doubled"] else ""
            parts.append(f"{label}: {' '.join(hand['cards'])} ({_total(hand)}){flags} "
                         f"{hand['outcome']} {hand['payout']:+g}")
    if record["insurance"]["taken"]:
        parts.append(f"insured {','.join(map(str, record['insurance']['taken']))}")
    return "  ".join(parts)


def _total(hand: dict[str, Any]) -> str:
    if hand["blackjack"]:
        return "BJ"
    return f"{hand['total']}" + (" bust" if hand["bust"] else "")
