"""``shoe vision enroll|classify|bench``: teach the camera fallback a deck, read frames, measure.

Enrolled decks are saved one file per deck in the models folder (``--models DIR``, else
``$SHOE_VISION_MODELS``, else ``~/.local/share/shoe-controller/vision``); see docs/vision.md.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from shoe_controller.errors import ShoeError

HARD_DECK_ACCURACY = 0.99
"""Below this held-out accuracy at enrolment, ``shoe vision enroll`` warns the operator."""


def configure(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="vision_command", metavar="ACTION", required=True)
    enroll = sub.add_parser("enroll", help="learn a deck from a folder of labelled frames",
                            description="learn a deck from a folder of labelled frames and save "
                            "it in the models folder")
    _common(enroll)
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
                           "deck on a folder of labelled frames")
    _common(bench)
    bench.add_argument("folder", type=Path, metavar="DIR", help="labelled frames (labels.csv)")
    bench.add_argument("--json", action="store_true", help="print the figures as JSON")


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--deck", required=True, metavar="NAME", help="the enrolled deck")
    parser.add_argument("--models", metavar="DIR", help="models folder (see docs/vision.md)")


def run(args: argparse.Namespace) -> int:
    from vision.model import LOCATED, DeckModel, models_dir

    folder = models_dir(args.models)
    if args.vision_command == "enroll":
        from vision.bench import enroll_folder

        model, skipped = enroll_folder(args.deck, args.folder)
        path = model.save(folder)
        figures = model.enrolment
        index = ("rank and suit read apart, boxes located on the deck"
                 if model.split_name == LOCATED else
                 f"rank and suit read apart, fixed boxes {model.split_name}"
                 if model.split_name else "whole index")
        index += (", printed both ways up" if model.both_ways
                  else ", printed one way up: cards read both ways")
        print(f"enrolled deck {model.name!r} from {int(figures['frames'])} frames of "
              f"{int(figures['cards'])} cards: layout {model.layout} ({index}), threshold "
              f"{model.threshold:.3f}, held-out accuracy {figures['held_out_accuracy']:.1%}")
        if figures["held_out_accuracy"] < HARD_DECK_ACCURACY:
            # Held-out reads are the only evidence of how the deck reads at the table: when
            # a few of them are wrong, the threshold set above them is a thin guarantee.
            print(f"warning: {1 - figures['held_out_accuracy']:.1%} of the held-out "
                  f"enrolment reads were wrong: this deck is hard for the camera. Enrol more "
                  f"frames per card, and measure with 'shoe vision bench' before use.")
        print(f"saved {path}")
        for name in skipped:
            print(f"skipped {name}: no card found in the frame")
        return 0
    from vision.recognise import Recogniser

    recogniser = Recogniser(DeckModel.load(args.deck, folder))
    if args.vision_command == "classify":
        from vision.capture import read_image

        failed = 0
        for image in args.images:
            try:
                read = recogniser.recognise(read_image(image))
            except ShoeError as exc:
                failed += 1
                print(json.dumps({"file": str(image), "card": None, "confidence": 0.0,
                                  "error": str(exc)}) if args.json else f"{image}: {exc}")
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
    print(f"  accuracy             {result.accuracy:8.2%}")
    print(f"  precision (accepted) {result.precision:8.2%}")
    print(f"  decline rate         {result.decline_rate:8.2%}")
    print(f"  time per frame       p50 {result.percentile_ms(50):.1f} ms, "
          f"p95 {result.percentile_ms(95):.1f} ms")
    for mistake in result.mistakes:
        print(f"  wrong: {mistake}")
    return 0
