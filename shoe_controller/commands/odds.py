"""``shoe odds``: exact baccarat odds and every bet's house edge for a full or partly dealt shoe."""

from __future__ import annotations

import argparse
import json
import sys

from shoe_controller.cards import read_shoe_file
from shoe_controller.errors import ShoeError


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--profile", metavar="NAME", help="table profile name or TOML file")
    parser.add_argument(
        "--seen",
        metavar="SHOEFILE",
        help="cards already out of the shoe (shoe-file format); odds are for the rest",
    )
    parser.add_argument("--decks", metavar="N", type=_decks,
                        help="decks in the shoe, 1..64 (default: the profile's)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--list-profiles", action="store_true", help="list known profiles and exit")


def _decks(text: str) -> int:
    # The profile's own bounds (games/baccarat/profile.py: decks 1..64).
    if not text.isdigit() or not 1 <= int(text) <= 64:
        raise argparse.ArgumentTypeError(f"expected a whole number of decks, 1..64, got {text!r}")
    return int(text)


def run(args: argparse.Namespace) -> int:
    from shoe_controller.games.baccarat.odds import exact_odds, full_shoe, remaining
    from shoe_controller.games.baccarat.profile import list_profiles, load_profile

    if args.list_profiles:
        for name, path in list_profiles().items():
            print(f"{name:24} {path}")
        return 0
    if not args.profile:
        raise ShoeError("--profile NAME is required (see --list-profiles)")
    profile = load_profile(args.profile)
    decks = args.decks or profile.decks
    if args.seen:
        composition = remaining(decks, read_shoe_file(args.seen))
    else:
        composition = full_shoe(decks)
    odds = exact_odds(composition, profile)
    if args.json:
        json.dump(odds.to_json_dict(profile.name, decks), sys.stdout)
        sys.stdout.write("\n")
        return 0
    print(f"profile {profile.name}: {decks} decks, {odds.cards_left} cards left")
    print("outcome                   probability")
    for event, p in odds.outcomes.items():
        print(f"  {event:22} {float(p):.10f}")
    print("bet                     house edge        RTP")
    for name, bet in odds.bets.items():
        print(f"  {name:20} {float(bet.house_edge) * 100:10.6f} % {float(bet.rtp) * 100:10.6f} %")
    return 0
