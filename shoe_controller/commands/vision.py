"""``shoe vision enroll|classify|bench``: teach the camera fallback a deck, read frames, measure.

Enrolled decks are saved one file per deck in the models folder (``--models DIR``, else
``$SHOE_VISION_MODELS``, else ``~/.local/share/shoe-controller/vision``); see docs/vision.md.
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path
from typing import TYPE_CHECKING

from shoe_controller.errors import ShoeError

if TYPE_CHECKING:
    from shoe_controller.cards import Card
    from vision.model import DeckModel

MISTAKES_SHOWN = 20
HARD_DECK_ACCURACY = 0.99
"""Below this held-out accuracy at enrolment, ``shoe vision enroll`` warns the operator."""


def configure(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="vision_command", metavar="ACTION", required=True)
    enroll = sub.add_parser("enroll", help="learn a deck from a folder of labelled frames",
                            description="learn a deck from a folder of labelled frames and save "
                            "it in the models folder")
    _common(enroll)
    _roi_option(enroll)
    enroll.add_argument("folder", type=Path, metavar="DIR",
                        help="frames plus labels.csv (columns file,card; e.g. QS)")
    classify = sub.add_parser("classify", help="read the card in each image",
                              description="read the card in each image (exit 1 if an image "
                              "cannot be read)")
    _common(classify)
    classify.add_argument("images", type=Path, nargs="+", metavar="IMAGE",
                          help="image files (PNG, JPEG, ...)")
    classify.add_argument("--json", action="store_true", help="one JSON object per image")
    bench = sub.add_parser("bench", help="accuracy, precision, declines and speed on a folder",
                           description="accuracy, precision, declines and speed of an enrolled "
                           "deck on a folder of labelled frames; or, with --enrol-per-card, of "
                           "a deck enrolled from some of the folder's photos and tested on all "
                           "the others")
    bench.add_argument("--deck", metavar="NAME",
                       help="the enrolled deck (not with --enrol-per-card)")
    bench.add_argument("--models", metavar="DIR", help="models folder (see docs/vision.md)")
    bench.add_argument("--enrol-per-card", type=int, metavar="N",
                       help="enrol from N photos per card of DIR (a seeded draw, printed) and "
                       "read every other photo")
    bench.add_argument("--seed", type=int, default=2024, metavar="N",
                       help="draws the enrolment photos (default: 2024)")
    _roi_option(bench, " (with --enrol-per-card)")
    bench.add_argument("folder", type=Path, metavar="DIR", help="labelled frames (labels.csv)")
    bench.add_argument("--json", action="store_true", help="print the figures as JSON")


def _roi_option(parser: argparse.ArgumentParser, note: str = "") -> None:
    parser.add_argument("--roi", metavar="REGION",
                        help="a fixed camera: read the index in this region of the frame "
                        "without looking for the card's outline: 'whole' or x0,y0,x1,y1 "
                        f"(fractions of the frame){note}")


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--deck", required=True, metavar="NAME", help="the enrolled deck")
    parser.add_argument("--models", metavar="DIR", help="models folder (see docs/vision.md)")


def run(args: argparse.Namespace) -> int:
    from vision.cores import read_on_one_core
    from vision.model import LOCATED, DeckModel, models_dir
    from vision.roi import RoiError, parse_roi

    read_on_one_core()  # the enrolment's and the reads' figures are one core's

    try:
        roi = parse_roi(args.roi) if getattr(args, "roi", None) else None
    except RoiError as exc:
        raise ShoeError(str(exc)) from None
    folder = models_dir(args.models)
    if args.vision_command == "enroll":
        from vision.bench import cards_unknown_to, enroll_items, read_labels

        items = read_labels(args.folder)
        model, skipped, left_out = enroll_items(args.deck, items, roi)
        unknown = cards_unknown_to(model, [card for _, card in items])
        # Left out of the whole-card deck, yet read by the index corners of its frames.
        by_index_only = [code for code in left_out if code not in unknown]
        path = model.save(folder)
        figures = model.enrolment
        index = ("rank and suit read apart, boxes located on the deck"
                 if model.split_name == LOCATED else
                 f"rank and suit read apart, fixed boxes {model.split_name}"
                 if model.split_name else "whole index")
        index += (", printed both ways up" if model.both_ways
                  else ", printed one way up: cards read both ways")
        if model.roi is not None:
            index = "read in the region " + ",".join(f"{value:g}" for value in model.roi)
        print(f"enrolled deck {model.name!r} from {int(figures['frames'])} frames of "
              f"{int(figures['cards'])} cards: layout {model.layout} ({index}), threshold "
              f"{model.threshold:.3f}, held-out accuracy {figures['held_out_accuracy']:.1%}")
        if model.frame_size is not None:
            short, long = model.frame_size
            print(f"camera: every frame {long} x {short} pixels; a frame of another size "
                  f"(another camera, or another resolution) is declined")
        else:
            print("camera: frames of several sizes, so a frame is not checked for its size")
        if model.roi is None:
            print(_pips_line(model, [card for _, card in items]))
            if (line := _index_line(model)) is not None:
                print(line)
        else:
            print(_region_pips_line(model))
        if figures["held_out_accuracy"] < HARD_DECK_ACCURACY:
            # Held-out reads are the only evidence of how the deck reads at the table: when
            # a few of them are wrong, the threshold set above them is a thin guarantee.
            print(f"warning: {1 - figures['held_out_accuracy']:.1%} of the held-out "
                  f"enrolment reads were wrong: this deck is hard for the camera. Enrol more "
                  f"frames per card (taken in every light the table has), give a fixed "
                  f"camera a region of interest (--roi) round the index, light the card "
                  f"evenly, and measure with 'shoe vision bench' before use.")
        if unknown:
            # A deck reads only the cards it knows, and its limits were set on those: a card
            # it never saw may be taken for one it did (a four-card deck read a 9H as 8H),
            # so the recogniser declines the cards of their ranks and suits, unless the
            # index read tells them apart.
            print(f"warning: {len(unknown)} of the folder's {len({c for _, c in items})} "
                  f"cards were not enrolled ({', '.join(unknown)}): fewer than 2 of their "
                  f"frames show the card. The deck cannot read them, and declines the cards "
                  f"of their ranks and suits, which it could take them for, unless their "
                  f"index shows it is not one of them. Retake "
                  f"their frames with the whole card in view (a fixed camera: enrol it with "
                  f"--roi round the index) and enrol again.")
        if by_index_only:
            print(f"warning: only one frame each shows {', '.join(by_index_only)} whole: "
                  f"they are read by their index corners alone, not as whole cards. Retake "
                  f"their frames with the whole card in view and enrol again.")
        print(f"saved {path}")
        for name in skipped:
            print(f"skipped {name}: no card found in the frame (retake it with the whole "
                  f"card in view, not covered along a side)")
        return 0
    if args.vision_command == "bench" and args.enrol_per_card is not None:
        return _holdout(args, roi)
    if args.deck is None:
        raise ShoeError("shoe vision bench: give --deck NAME, or --enrol-per-card N")
    if roi is not None:
        raise ShoeError("--roi is the enrolled deck's: give it to enroll (or with "
                        "--enrol-per-card)")
    from vision.recognise import Recogniser

    recogniser = Recogniser(DeckModel.load(args.deck, folder))
    if args.vision_command == "classify":
        from vision.capture import CaptureError, read_image

        failed = 0
        for image in args.images:
            try:
                read = recogniser.recognise(read_image(image))
            except ShoeError as exc:
                failed += 1
                # (a CaptureError names the file itself)
                shown = str(exc) if isinstance(exc, CaptureError) else f"{image}: {exc}"
                print(json.dumps({"file": str(image), "card": None, "confidence": 0.0,
                                  "error": str(exc)}) if args.json else shown)
                continue
            if args.json:
                print(json.dumps({"file": str(image), **read.to_dict()}))
            else:
                shown = read.card.code if read.card else f"unknown ({read.reason})"
                print(f"{image}: {shown} confidence {read.confidence:.3f}")
        return 1 if failed else 0
    from vision.bench import measure, read_labels

    result = measure(recogniser, read_labels(args.folder))
    if args.json:
        print(json.dumps({"deck": args.deck, **result.to_dict()}))
        return 0
    print(f"deck {args.deck}: {result.frames} frames")
    _print_figures(result)
    return 0


def _print_figures(result) -> None:  # type: ignore[no-untyped-def]
    print(f"  accuracy             {result.accuracy:8.2%}")
    print(f"  precision (accepted) {result.precision:8.2%}")
    print(f"  decline rate         {result.decline_rate:8.2%}")
    print(f"  time per frame       p50 {result.percentile_ms(50):.1f} ms, "
          f"p95 {result.percentile_ms(95):.1f} ms")
    if result.cpu_seconds:
        print(f"  CPU per frame        p50 {result.cpu_percentile_ms(50):.1f} ms, "
              f"p95 {result.cpu_percentile_ms(95):.1f} ms (one core, whatever else runs)")
    for name, session in sorted(result.sessions.items()):
        print(f"  session {name:12s} {session.frames:5d} frames: accuracy "
              f"{session.accuracy:7.2%}, precision {session.precision:7.2%}, declined "
              f"{session.decline_rate:7.2%}")
    if result.confusions:
        print("  wrong reads (card -> taken as): " + ", ".join(
            f"{truth}->{read} x{count}" for (truth, read), count
            in result.confusions.most_common(10)))
    if result.declined_as:
        print("  declined, best guess another card: " + ", ".join(
            f"{truth}->{guess} x{count}" for (truth, guess), count
            in result.declined_as.most_common(10)))
    for mistake in result.mistakes[:MISTAKES_SHOWN]:
        print(f"  wrong: {mistake}")
    if len(result.mistakes) > MISTAKES_SHOWN:
        print(f"  ... and {len(result.mistakes) - MISTAKES_SHOWN} more wrong reads (--json "
              f"lists them all)")


def _holdout(args: argparse.Namespace, roi) -> int:  # type: ignore[no-untyped-def]
    """``shoe vision bench --enrol-per-card N DIR``: one core, a seeded draw."""
    from vision.bench import holdout_bench

    if args.deck is not None:
        raise ShoeError("--enrol-per-card enrols its own deck: leave out --deck")
    if args.enrol_per_card < 2:
        raise ShoeError("--enrol-per-card: at least 2 photos per card")
    held = holdout_bench(args.folder, args.enrol_per_card, args.seed, roi)
    if args.json:
        print(json.dumps({"folder": str(args.folder), "roi": roi, **held.to_dict()}))
        return 0
    result = held.result
    print(f"{args.folder}: enrolled from {args.enrol_per_card} photos per card "
          f"(seed {args.seed}, {len(held.enrolled)} photos), read {result.frames} others"
          + ("" if roi is None else f", region {','.join(f'{v:g}' for v in roi)}"))
    print(f"  enrolled: {' '.join(held.enrolled)}")
    if held.skipped:
        print(f"  no card found in {len(held.skipped)} enrolment photos: "
              f"{' '.join(held.skipped)}")
    if held.not_enrolled:
        print(f"  cards not enrolled (fewer than 2 photos with a card found): "
              f"{' '.join(held.not_enrolled)}")
    print(f"  enrolment            {held.enrol_seconds:.1f} s CPU")
    _print_figures(result)
    return 0


def _index_line(model: DeckModel) -> str | None:
    """What ``shoe vision enroll`` says of the index corner reader (a card the frame cuts,
    or a hand covers, is read by it): the confidence most cards' reads need, the cards
    that need more because held-out reads of them were wrong (those the operator can help
    with more frames), and whether the camera shows colour (:func:`vision.ink.red_ink_shows`);
    None without a corner reader."""
    corners = model.corners
    if corners is None:
        return None
    from vision.model import card_of

    enrolled = sorted(set(corners.labels.tolist()))
    needs = {label: corners.threshold_for(label) for label in enrolled}
    usual = statistics.median(needs.values())
    harder = [card_of(label).code for label in enrolled if needs[label] > usual + 1e-9]
    line = f"index corners: {len(enrolled)} cards, most read at a confidence of {usual:.2f}"
    if harder:
        shown = ", ".join(harder[:8]) + (f" and {len(harder) - 8} more" if len(harder) > 8
                                         else "")
        line += (f"; {shown} need up to {corners.threshold:.2f} (held-out enrolment reads "
                 f"took them for other cards: more frames of them, in every light the "
                 f"table has, can lower it)")
    if not corners.red_ink:
        line += ("; the camera shows no colour (the red cards' ink is grey), so red and "
                 "black cards are told apart by their shapes alone")
    return line


def _region_pips_line(model: DeckModel) -> str:
    """What ``shoe vision enroll`` says of a region deck's pip counter
    (:mod:`vision.region_pips`): whether number cards its look is unsure of are counted,
    and which ranks."""
    counter = model.region_pips
    if counter is None:
        return ("pips: not counted (fewer than half of the number cards' frames show every "
                "pip clean in the region: a camera that sees only the index, or a card cut "
                "off)")
    ranks = ", ".join("T" if rank == 10 else str(rank) for rank in sorted(counter.layouts))
    line = (f"pips: number cards the look is unsure of are counted by their pips (ranks "
            f"{ranks}; {len(counter.suits)} pips learnt)")
    from vision.model import card_of

    large = ", ".join(sorted({card_of(ace.suit * 13).code for ace in counter.large_aces}))
    if counter.aces:
        line += "; aces by their one pip" + (f" ({large} by its large one)" if large else "")
    else:
        line += f"; {large} by its large pip" if large else "; aces by their look alone"
    letters = counter.letters
    if letters is None:
        return line + ("; court cards by their look alone (no index letter recurred over "
                       "the enrolment frames: more frames of them, in every light)")
    learnt = sorted({int(rank) for rank in letters.ranks[letters.letters]})
    names = ", ".join("JQK"[rank - 11] for rank in learnt)
    return line + f"; court cards {names} by their index letters and the pips beside them"


def _pips_line(model: DeckModel, cards: list[Card]) -> str:
    """What ``shoe vision enroll`` says of the number cards' pips (:mod:`vision.pips`): which
    of the deck's number cards an unsure read can fall back on them for."""
    from vision.model import card_index
    from vision.pips import PIP_COUNTS

    learnt = set() if model.pips is None else set(model.pips.layouts)
    number = sorted({card for card in cards if card.rank in PIP_COUNTS},
                    key=card_index)
    if not number:
        return "pips: no number cards in the folder"
    lacking = [card.code for card in number if card_index(card) not in learnt]
    line = (f"pips: {len(number) - len(lacking)} of {len(number)} number cards also read by "
            f"their pips when unsure")
    if lacking:
        line += (f" (not {', '.join(lacking)}: fewer than 2 of their frames show every pip "
                 f"clean)")
    return line
