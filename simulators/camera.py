"""A simulated camera over the shoe's exit: real deck designs rendered into realistic frames.

Card faces come from the SVG decks Debian ships (``gnome-cards-data`` for AisleRiot,
``kdegames-card-data-kf5`` for KDE), rendered on demand with ``rsvg-convert --export-id`` and
cached as PNGs outside the repository (``$SHOE_CARD_CACHE`` or ``~/.cache/shoe-controller``);
nothing rendered is ever committed. A frame puts one card on a table-like background with the
things a real camera adds: perspective, rotation, scale, blur, sensor noise, a specular glare
and a colour-temperature shift. Frames are deterministic for a given seed, so a failing test
can be reproduced exactly.

:class:`SimulatedCamera` is what the table's camera fallback captures from: it asks its
``card_source`` which card is at the exit and renders a fresh frame of it.
"""

from __future__ import annotations

import csv
import gzip
import os
import random
import shutil
import subprocess
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from shoe_controller.cards import Card, Suit
from shoe_controller.errors import ShoeError

DECK_FOLDERS = (Path("/usr/share/aisleriot/cards"), Path("/usr/share/carddecks"))
"""Where the Debian packages put their SVG decks (one ``.svgz`` per design)."""

CARD_HEIGHT = 320
"""Rendered card height in pixels: comfortably more than a frame ever shows."""

FRAME_SIZE = (640, 480)

_SUIT_WORDS = {Suit.SPADES: "spade", Suit.HEARTS: "heart", Suit.DIAMONDS: "diamond",
               Suit.CLUBS: "club"}
_RANK_WORDS = {1: "1", 11: "jack", 12: "queen", 13: "king"}


UNSUITABLE = frozenset({
    "kde-future",  # indices only, on a grey plate: not a real casino face
    "kde-xskat-german", "swiss-xvii",  # German/Swiss suits under French element ids
    "kde-konqi-modern", "kde-xskat-french",  # rsvg-convert: "SVG has no dimensions"
    "Атласные",  # the same design as "atlasnye"
})
"""Designs :func:`find_designs` leaves out: they are not French-suited 52-card faces or do not
render."""


class DeckDesignError(ShoeError, LookupError):
    """A deck design is not installed, or cannot be rendered (no rsvg-convert, odd SVG)."""


def all_cards() -> list[Card]:
    return [Card(rank, suit) for suit in Suit for rank in range(1, 14)]


@dataclass(frozen=True)
class DeckDesign:
    """One SVG deck. ``id_style``: AisleRiot names elements ``club_king``, KDE ``king_club``."""

    name: str
    path: Path
    id_style: str  # "suit_rank" or "rank_suit"

    def element_id(self, card: Card) -> str:
        rank = _RANK_WORDS.get(card.rank, str(card.rank))
        suit = _SUIT_WORDS[card.suit]
        return f"{suit}_{rank}" if self.id_style == "suit_rank" else f"{rank}_{suit}"


def find_designs(folders: Iterable[Path] = DECK_FOLDERS) -> dict[str, DeckDesign]:
    """Every installed design with a full French-suited 52-card set, by name.

    AisleRiot decks are named after their file (``anglo``), KDE decks after their folder
    (``kde-oxygen``). Decks without all 52 element ids (German-suited, skat) are left out.
    """
    designs: dict[str, DeckDesign] = {}
    for folder in folders:
        if not folder.is_dir():
            continue
        for path in sorted(folder.rglob("*.svg*")):
            if folder.name == "carddecks":
                name = "kde-" + path.parent.name.removeprefix("svg-")
            else:
                name = path.name.split(".")[0]
            if name in UNSUITABLE:
                continue
            text = _svg_text(path)
            for style in ("suit_rank", "rank_suit"):
                design = DeckDesign(name, path, style)
                if all(f'id="{design.element_id(card)}"' in text for card in all_cards()):
                    designs[name] = design
                    break
    return designs


def _svg_text(path: Path) -> str:
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    return raw.decode("utf-8", errors="replace")


def cache_root() -> Path:
    """Rendered card faces live here (never in the repository)."""
    configured = os.environ.get("SHOE_CARD_CACHE")
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "shoe-controller" / "cards"


_render_lock = threading.Lock()


def render_deck(
    design: DeckDesign, cards: Sequence[Card] | None = None, *, height: int = CARD_HEIGHT,
    cache: Path | None = None,
) -> dict[Card, np.ndarray]:
    """The faces of ``cards`` (all 52 by default) as BGRA images ``height`` pixels tall,
    cropped to the card (rounded corners transparent). Renders only what the cache lacks."""
    if shutil.which("rsvg-convert") is None:
        raise DeckDesignError("rsvg-convert not found: apt-get install librsvg2-bin")
    folder = (cache or cache_root()) / f"{design.name}-{height}"
    folder.mkdir(parents=True, exist_ok=True)
    faces: dict[Card, np.ndarray] = {}
    with _render_lock:
        zoom: float | None = None
        for card in cards if cards is not None else all_cards():
            target = folder / f"{card.code}.png"
            if not target.exists():
                if zoom is None:
                    zoom = _zoom_for(design, height, folder)
                face = _crop_to_card(_render(design, card, zoom, folder))
                face = cv2.resize(face, (round(face.shape[1] * height / face.shape[0]), height),
                                  interpolation=cv2.INTER_AREA)
                scratch = folder / f".{card.code}.{os.getpid()}.png"
                cv2.imwrite(str(scratch), face)
                scratch.replace(target)  # atomic: a parallel test never sees half a file
            image = cv2.imread(str(target), cv2.IMREAD_UNCHANGED)
            if image is None or image.ndim != 3 or image.shape[2] != 4:
                raise DeckDesignError(f"{target}: cached card face is unreadable; delete it")
            faces[card] = image
    return faces


def _zoom_for(design: DeckDesign, height: int, folder: Path) -> float:
    probe = _crop_to_card(_render(design, Card(1, Suit.SPADES), 1.0, folder))
    return 1.15 * height / probe.shape[0]  # render a little larger, then shrink (sharper)


def _render(design: DeckDesign, card: Card, zoom: float, folder: Path) -> np.ndarray:
    out = folder / f".render-{os.getpid()}.png"
    command = ["rsvg-convert", f"--export-id={design.element_id(card)}", "--zoom",
               f"{zoom:.4f}", "-o", str(out), str(design.path)]
    result = subprocess.run(command, check=False, capture_output=True, text=True, timeout=60)
    if result.returncode != 0:
        raise DeckDesignError(f"rsvg-convert failed for {design.name} {card.code}: "
                              f"{result.stderr.strip()}")
    image = cv2.imread(str(out), cv2.IMREAD_UNCHANGED)
    out.unlink(missing_ok=True)
    if image is None or image.ndim != 3 or image.shape[2] != 4:
        raise DeckDesignError(f"rsvg-convert gave no RGBA image for {design.name} {card.code}")
    return image


def _crop_to_card(image: np.ndarray) -> np.ndarray:
    """The element's box may hold invisible helpers far away: keep the largest opaque blob."""
    opaque = (image[:, :, 3] > 128).astype(np.uint8)
    count, _, stats, _ = cv2.connectedComponentsWithStats(opaque, connectivity=8)
    if count < 2:
        raise DeckDesignError("rendered card is empty")
    best = 1 + int(np.argmax(stats[1:, cv2.CC_STAT_AREA]))
    x, y, w, h = stats[best, :4]
    return image[y:y + h, x:x + w].copy()


# ----------------------------------------------------------------------------- frames

@dataclass(frozen=True)
class FrameStyle:
    """How hard the camera's conditions are; defaults are a plausible table camera."""

    size: tuple[int, int] = FRAME_SIZE
    card_height: tuple[float, float] = (0.5, 0.72)  # of the frame height
    max_rotation: float = 180.0  # degrees either way
    perspective: float = 0.07  # corner jitter, fraction of the card size
    blur: float = 1.2  # max Gaussian sigma
    noise: float = 6.0  # max noise sigma (grey levels)
    glare: float = 0.6  # chance of a specular highlight on the card
    colour_shift: float = 0.12  # max per-channel gain change (colour temperature)


def background(rng: np.random.Generator, size: tuple[int, int]) -> np.ndarray:
    """A table surface: felt, a wood-like grain or a dark gradient, with some texture."""
    width, height = size
    kind = rng.integers(0, 3)
    base = {
        0: rng.choice([[40, 110, 30], [90, 60, 20], [30, 30, 120], [60, 90, 40]]),  # felt, BGR
        1: rng.choice([[40, 80, 130], [30, 60, 100], [60, 100, 150]]),  # wood
        2: rng.choice([[40, 40, 40], [70, 60, 50], [25, 35, 45]]),  # dark surface
    }[int(kind)]
    image = np.empty((height, width, 3), np.float32)
    image[:] = np.asarray(base, np.float32)
    if kind == 1:
        grain = np.sin(np.linspace(0, rng.uniform(20, 60), height)[:, None]
                       + rng.normal(0, 0.8, (height, 1))) * 12
        image += grain[:, :, None]
    elif kind == 2:
        image *= np.linspace(rng.uniform(0.6, 1.0), rng.uniform(1.0, 1.5), width)[None, :, None]
    texture = cv2.GaussianBlur(rng.normal(0, 10, (height, width)).astype(np.float32), (0, 0), 1.5)
    image += texture[:, :, None]
    return np.clip(image, 0, 255).astype(np.uint8)


def synthesise(face: np.ndarray, rng: np.random.Generator, style: FrameStyle = FrameStyle()
               ) -> np.ndarray:
    """One BGR camera frame showing the BGRA card ``face`` on a table."""
    width, height = style.size
    frame = background(rng, style.size).astype(np.float32)
    fh, fw = face.shape[:2]
    card_h = rng.uniform(*style.card_height) * height
    scale = card_h / fh
    card_w = fw * scale
    angle = np.deg2rad(rng.uniform(-style.max_rotation, style.max_rotation))
    corners = np.array([[0, 0], [fw, 0], [fw, fh], [0, fh]], np.float32)
    centred = (corners - [fw / 2, fh / 2]) * scale
    jitter = rng.uniform(-style.perspective, style.perspective, (4, 2)) * [card_w, card_h]
    rotation = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
    placed = (centred + jitter) @ rotation.T
    span = placed.max(axis=0) - placed.min(axis=0)
    margin = np.maximum((np.array([width, height]) - span) / 2 - 4, 0)
    centre = np.array([width / 2, height / 2]) + rng.uniform(-1, 1, 2) * margin * 0.6
    placed = (placed + centre).astype(np.float32)
    matrix = cv2.getPerspectiveTransform(corners, placed)
    card = face.astype(np.float32)
    # Colour temperature and exposure act on the lit card and the table alike.
    gains = 1 + rng.uniform(-style.colour_shift, style.colour_shift, 3)
    exposure = rng.uniform(0.8, 1.1)
    warped = cv2.warpPerspective(card, matrix, (width, height), flags=cv2.INTER_LINEAR,
                                 borderMode=cv2.BORDER_CONSTANT, borderValue=(0, 0, 0, 0))
    alpha = warped[:, :, 3:4] / 255.0
    # A soft shadow under the card, as a real card casts on the table.
    shadow = np.roll(cv2.GaussianBlur(warped[:, :, 3] / 255.0, (0, 0), 4), (3, 3), axis=(0, 1))
    frame *= 1 - 0.35 * shadow[:, :, None]
    frame = frame * (1 - alpha) + warped[:, :, :3] * alpha
    if rng.random() < style.glare:
        frame = _glare(frame, placed, alpha, rng)
    frame *= gains[None, None, :] * exposure
    sigma = rng.uniform(0, style.blur)
    if sigma > 0.3:
        frame = cv2.GaussianBlur(frame, (0, 0), sigma)
    frame += rng.normal(0, rng.uniform(1, style.noise), frame.shape).astype(np.float32)
    return np.clip(frame, 0, 255).astype(np.uint8)


def _glare(frame: np.ndarray, quad: np.ndarray, alpha: np.ndarray, rng: np.random.Generator
           ) -> np.ndarray:
    """A specular highlight: a soft bright ellipse on the glossy card (the felt is matte)."""
    height, width = frame.shape[:2]
    weights = rng.dirichlet(np.ones(4))
    cx, cy = weights @ quad
    axes = (int(rng.uniform(15, 60)), int(rng.uniform(8, 30)))
    spot = np.zeros((height, width), np.float32)
    cv2.ellipse(spot, (int(cx), int(cy)), axes, float(rng.uniform(0, 180)), 0, 360, 1.0, -1)
    spot = cv2.GaussianBlur(spot, (0, 0), axes[1] * 0.6 + 2)
    strength = rng.uniform(0.25, 0.6)
    return frame + (255 - frame) * (spot[:, :, None] * strength * alpha)


class SimulatedCamera:
    """A camera over the shoe's exit. ``card_source()`` names the card there now (None: no
    card, and the frame shows only the table); each :meth:`capture` is a fresh frame."""

    def __init__(
        self, card_source: Callable[[], Card | None], design: DeckDesign, *, seed: int = 0,
        style: FrameStyle = FrameStyle(), cache: Path | None = None,
    ) -> None:
        self.card_source = card_source
        self.design = design
        self.style = style
        self.cache = cache
        self._rng = np.random.default_rng(seed)
        self._lock = threading.Lock()
        self.captures = 0

    def capture(self) -> np.ndarray:
        card = self.card_source()
        with self._lock:
            self.captures += 1
            if card is None:
                return background(self._rng, self.style.size)
            face = render_deck(self.design, [card], cache=self.cache)[card]
            return synthesise(face, self._rng, self.style)

    def close(self) -> None:
        """Nothing to release; here so it stands in wherever a capture source is expected."""


def write_labelled_folder(
    folder: Path, design: DeckDesign, *, frames_per_card: int, seed: int,
    cards: Sequence[Card] | None = None, style: FrameStyle = FrameStyle(),
    cache: Path | None = None,
) -> Path:
    """Frames of ``cards`` (all 52 by default) plus ``labels.csv`` (file,card), the layout
    ``shoe vision enroll`` and ``bench`` read. Returns the labels file."""
    folder.mkdir(parents=True, exist_ok=True)
    chosen = list(cards) if cards is not None else all_cards()
    faces = render_deck(design, chosen, cache=cache)
    rng = np.random.default_rng(seed)
    labels = folder / "labels.csv"
    with labels.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["file", "card"])
        for card in chosen:
            for index in range(frames_per_card):
                name = f"{card.code}-{index}.png"
                cv2.imwrite(str(folder / name), synthesise(faces[card], rng, style))
                writer.writerow([name, card.code])
    return labels


def shuffled(cards: Sequence[Card], seed: int) -> list[Card]:
    order = list(cards)
    random.Random(seed).shuffle(order)
    return order
