"""A realistic camera: card faces put into the scene a real camera sees, then degraded the way
a real camera degrades light, with parameters grouped into named *camera conditions*.

The renderer of :mod:`simulators.camera` gives clean frames (a flat light, a little blur and
noise) on which the recogniser reads 99.5 % and more, while real photographs of the same kind
of scene read far less (docs/vision.md). This module models what those frames lack, in the
order light meets it:

1. **scene** (``reflectance``, white paper = 1): the card face and what is round it, per
   *view*: ``index_corner`` (a camera inside the shoe: the card's top-left corner under a
   top plate, behind a vertical rod), ``slot`` (a low-resolution camera over a slot holding
   the whole card, turned 90 degrees), ``overhead`` (a webcam over felt: any rotation and
   place, hands touching the card, a card partly out of frame);
2. **light**: an uneven illumination field (smooth random variation; over felt, a lamp to
   one side) and lens vignetting (a radial fall-off); a fixed camera's own lamp falling off
   from where it points, the shadow of what stands between it and part of the card (lit
   there by the room, in the room light's colour), and the lamp's glare off the glossy card;
3. **optics**: defocus (Gaussian) and, sometimes, motion blur (a line kernel); a cheap
   sensor's weak colour separation;
4. **exposure**: the grey level white paper reaches, or auto-exposure metering the frame's
   mean, and white balance (the colour cast of white paper); veiling glare (flare) lifting
   the blacks;
5. **sensor**: saturation under a glare (a sensor whose ceiling is the lit paper's light),
   shot and read noise, clipping at full scale (an over-exposed paper saturates),
   quantisation (8 bits, or the 5/6 bits of an RGB565 sensor);
6. **compression**: JPEG at the camera's quality, then the set's own processing (a resize
   and a second JPEG where the real photos had one).

Each stage draws from a seeded :class:`numpy.random.Generator`, so a frame is a function of
(face, seed, condition, session). :data:`CONDITIONS` names three conditions mirroring the
cameras of the real sets in ``../shared/real-cards``; how each parameter was chosen (a
statistic measured on the real photos with :mod:`simulators.camera_stats`, or an assumption)
is said beside it and in docs/vision.md. No parameter was chosen from the recogniser's figures.
"""

from __future__ import annotations

import csv
import functools
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

from shoe_controller.cards import Card
from simulators.camera import DeckDesign, render_deck

Range = tuple[float, float]
"""A parameter drawn uniformly between two values for each frame."""
Buckets = tuple[tuple[float, float, float], ...]
"""A parameter drawn from measured ranges (low, high, weight): a range by its weight, then a
value uniformly in it (:func:`draw_from`)."""


def gaussian(size: tuple[int, int], centre: tuple[float, float],
             spread: tuple[float, float]) -> np.ndarray:
    """A Gaussian over a ``size`` (width, height) frame, 1 at ``centre`` (pixels), its
    spread (sigma) ``spread`` pixels across and down: a lamp's light, a glare, a sheen."""
    y, x = _grid(size)
    across = (x - centre[0]) * (spread[1] / spread[0])  # (in units of the spread down)
    return np.exp(-(across ** 2 + (y - centre[1]) ** 2) / (2 * spread[1] ** 2))


@functools.cache
def _grid(size: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """Each pixel's row and column (float32) of a ``size`` frame: the same for every frame
    of a session, so made once (read-only)."""
    width, height = size
    y, x = np.mgrid[0:height, 0:width].astype(np.float32)
    y.setflags(write=False)
    x.setflags(write=False)
    return y, x


@dataclass(frozen=True)
class Lamp:
    """A fixed camera's own lamp (a slot's LED): the light falls off from the place it points
    at as a Gaussian, its spreads (sigma) shares of the frame's width and height. Measured on
    the real session's median paper map (the paper's level over each frame, the lightest over
    an eighth of the card then the darkest, over its 95th percentile; its median over the
    session's photos: the camera and the lamp stay put, the cards change)."""

    centre: tuple[float, float]
    spread: tuple[float, float]

    def field(self, size: tuple[int, int]) -> np.ndarray:
        width, height = size
        return gaussian(size, (self.centre[0] * width, self.centre[1] * height),
                        (self.spread[0] * width, self.spread[1] * height))


@dataclass(frozen=True)
class Shadow:
    """Part of a fixed camera's view its lamp does not reach (the slot's wall or the
    camera's own board in the way): a box (x0, y0, x1, y1, shares of the frame) lit only
    by the room, ``depth`` of the lamp's light there, in the room light's colour (blue /
    green, red / green over the lamp's). Each edge moves by up to ``jitter`` (a share of
    the frame) from frame to frame, as the card sits higher or lower in the slot and the
    board flexes; its sides as soft as ``softness`` (a share of the frame's width: the
    Gaussian blur of the box; a lamp's shadow has a penumbra)."""

    box: tuple[float, float, float, float]
    depth: Range
    colour: tuple[float, float] = (1.0, 1.0)
    jitter: float = 0.05
    softness: float = 0.015

    def field(self, rng: np.random.Generator, size: tuple[int, int]) -> np.ndarray:
        """The light's share (height, width, 3) that reaches each pixel, in each channel."""
        width, height = size
        x0, y0, x1, y1 = (edge + rng.uniform(-self.jitter, self.jitter) for edge in self.box)
        mask = np.zeros((height, width), np.float32)
        mask[max(0, round(y0 * height)):max(0, round(y1 * height)),
             max(0, round(x0 * width)):max(0, round(x1 * width))] = 1
        mask = cv2.GaussianBlur(mask, (0, 0), max(self.softness * width, 0.3))
        blue, red = self.colour
        # The room light's grey level is ``depth``: its colour scaled so its luma is 1.
        tint = np.array([blue, 1.0, red], np.float32) / (0.114 * blue + 0.587 + 0.299 * red)
        shaded = rng.uniform(*self.depth) * tint
        return 1 - mask[:, :, None] * (1 - shaded[None, None, :])


@dataclass(frozen=True)
class Glare:
    """The lamp's reflection off a glossy card (a fixed camera close over it): light added
    to paper and ink alike, so the ink under it is lifted towards grey (a pip there reads
    faint). A Gaussian of the lamp's colour at ``centre`` (shares of the frame, moving by
    up to ``jitter`` from frame to frame), its spread a share of the frame's width, its
    peak ``strength`` of white paper's light."""

    centre: tuple[float, float]
    spread: float
    strength: Range
    jitter: float = 0.05

    def field(self, rng: np.random.Generator, size: tuple[int, int]) -> np.ndarray:
        width, height = size
        cx = (self.centre[0] + rng.uniform(-self.jitter, self.jitter)) * width
        cy = (self.centre[1] + rng.uniform(-self.jitter, self.jitter)) * height
        sigma = self.spread * width
        return rng.uniform(*self.strength) * gaussian(size, (cx, cy), (sigma, sigma))


FACE_HEIGHT = 600
"""Card faces are rendered this tall: the in-shoe view shows a card about 560 pixels tall."""


@dataclass(frozen=True)
class Session:
    """One capture session of a camera: its light and what the frames show."""

    name: str
    paper: Range
    """Grey level white paper reaches (measured: the real session's ``highlight``, p10-p90)."""
    cast: tuple[Range, Range]
    """White paper's (blue / green, red / green) (measured: ``paper_cast``, p10-p90)."""
    metering: Range | None = None
    """Auto-exposure that meters the whole frame: its mean grey level (measured: the real
    session's ``brightness``, p10-p90); then ``paper`` is not used."""
    size: tuple[int, int] | None = None
    """The capture size (width, height) when it is not the condition's."""
    uneven: float = 0.1
    """Amplitude of the smooth random variation of the light over the frame."""
    flare: Range = (0.0, 0.05)
    """Veiling glare: light scattered in the lens, a share of the frame's mean added to every
    pixel (it lifts black ink towards grey: the contrast statistic)."""
    defocus: Range = (0.5, 1.0)
    """Gaussian blur sigma, in pixels of the capture."""
    motion: float = 0.0
    """Share of frames with motion blur."""
    hand: float = 0.0
    """Share of frames with a hand in view (overhead view)."""
    hand_kinds: tuple[float, float, float] = (0.0, 1.0, 0.0)
    """Of the frames with a hand: the weights (any scale) of a hand that stays apart from
    the card, reaches onto it, or holds it on the palm (the card lying over the hand)."""
    onto_reach: Buckets = ((0.0, 0.3, 1.0),)
    """How far a hand onto the card reaches onto it, a share of the card's length: ranges
    (low, high, weight), one drawn by weight, then a value uniformly in it."""
    partial: float = 0.0
    """Share of frames with the card partly out of frame (overhead view)."""
    partial_out: Buckets = ((0.15, 0.45, 1.0),)
    """How much of a card partly out of frame lies beyond the frame's edge, a share of its
    extent across that edge (ranges as ``onto_reach``)."""
    partial_corner: float = 0.0
    """Of the cards partly out of frame, the share cut by two edges (a corner of the frame),
    each by a share drawn from ``partial_out``."""
    tilt: float = 0.0
    """A camera tilted from straight down: the table's scale grows down the frame by this
    log-factor per frame height (overhead view; 0: the card's image plane parallel)."""
    paper_texture: float = 0.0
    """The card's surface (a linen finish): fine random relief over the card's paper, its
    standard deviation a share of the paper's reflectance, before the optics."""
    card_size: Range = (0.7, 0.8)
    """The card's long side as a share of the frame's height (overhead view)."""
    felt_sheen: tuple[Range, Range, Range] | None = None
    """Felt lit by a lamp to one side (overhead view): the felt, not the card, is brightest
    near the lamp and falls off away from it, as a Gaussian whose centre lies in the x and
    y ranges (shares of the frame's width and height) and whose spread is in the third
    (a share of the width). None: the felt as evenly lit as the card."""
    bits: tuple[int, int, int] = (8, 8, 8)
    """Bits per channel (blue, green, red) the sensor delivers."""
    saturation: float = 1.0
    """How much of a colour's difference from grey the sensor keeps (1: all; a cheap
    sensor's overlapping colour filters keep less)."""
    card_box: tuple[float, float, float, float] | None = None
    """Where the card lies in the frame (slot view): x0, y0, x1, y1 as fractions."""
    lamp: Lamp | None = None
    """A fixed camera's lamp, over the smooth random variation (None: no fall-off but it)."""
    shadows: tuple[Shadow, ...] = ()
    """Parts of a fixed camera's view its lamp does not reach."""
    glare: Glare | None = None
    """The lamp's reflection off the card (a fixed camera's lamp close over a glossy card)."""
    ceiling: float | None = None
    """The light (a share of white paper's under the lamp's peak) at which the sensor
    saturates, before the camera's own gain brings white paper to ``paper``: under a glare
    the paper stays at the ceiling while the ink is lifted towards it (None: the sensor
    saturates only at full scale, after that gain)."""
    shadow_share: float = 1.0
    """Share of the frames with ``shadows`` (the rest lit all over: a session captured over
    days, the lamp or the board moved between)."""


@dataclass(frozen=True)
class CameraCondition:
    """A kind of camera: its view, sensor, optics and compression, and its sessions."""

    name: str
    description: str
    real_set: str
    """The folder of ``../shared/real-cards`` whose camera this mirrors."""
    view: str  # "index_corner", "slot" or "overhead"
    size: tuple[int, int]
    sessions: dict[str, Session]
    read_noise: Range
    """Sensor read noise sigma in grey levels, before compression."""
    shot_noise: float
    """Shot noise: variance grows by this many grey levels per grey level of signal."""
    vignetting: float
    """Relative fall-off of the light at the frame's corners (cos^4-like, radial)."""
    motion_length: Range = (4.0, 12.0)
    """Length of a motion blur, in pixels of the capture."""
    jpeg_quality: int | None = None
    """JPEG quality of the camera's own compression (None: raw)."""
    output_size: tuple[int, int] | None = None
    """A resize after capture (the set's own processing), then ``output_jpeg``."""
    output_jpeg: int | None = None
    enrol_per_card: int = 5
    """How the matching real set is measured: photos per card enrolled ..."""
    roi: bool = True
    """... and read in a region of interest (the whole frame), or by the card's outline."""
    face_design: str = "anglo"
    """The rendered deck standing in for the real deck (a standard index, like Bicycle)."""
    extra: dict[str, object] = field(default_factory=dict)


# ------------------------------------------------------------------------------ conditions
# Statistics measured on the real sets with simulators/camera_stats.py (the bench prints
# them beside the simulation's): see docs/vision.md, "Simulated camera against real
# photos", for the table and how each value was chosen.

IN_SHOE_CORNER = CameraCondition(
    name="in_shoe_corner",
    description="fixed camera inside the shoe: the index corner only, behind a rod",
    real_set="pp2021_feeder",
    view="index_corner",
    size=(224, 224),  # measured: every photo is 224 x 224
    sessions={
        # Two capture sessions (origin.csv's dates): February under pinkish light, September
        # (a second diamonds session) bluish and less contrasted.
        "feb": Session("feb", paper=(170, 185), cast=((1.08, 1.13), (1.07, 1.12)),
                       uneven=0.08, defocus=(0.2, 0.5), flare=(0.25, 0.35)),
        "sep": Session("sep", paper=(125, 140), cast=((1.09, 1.22), (0.94, 1.11)),
                       uneven=0.12, defocus=(0.0, 0.35), flare=(0.6, 0.7)),
    },
    read_noise=(0.0, 0.6), shot_noise=0.01,  # assumed; checked: measured noise 0.28-0.40
    vignetting=0.35,  # assumed (a small lens close up); checked: corner ratio
    jpeg_quality=95,  # measured: every photo's quantisation table is IJG quality 95
    enrol_per_card=5, roi=True,
    extra={
        # By eye and by the paper's bounding box on the real photos (p10-p90): the card's
        # top-left corner, the top plate's edge, the rod.
        "corner_x": (70.0, 100.0), "corner_y": (30.0, 78.0), "card_width": (350.0, 410.0),
        "tilt": 2.0, "plate_edge": (18.0, 40.0), "rod_x": (196.0, 206.0), "rod_width": 26.0,
        # Colours relative to the white paper in the same frames (medians, February).
        "plate": (0.75, 0.84, 0.93), "wall": (0.57, 0.52, 0.57), "rod": (0.85, 0.82, 0.85),
    },
)

LOW_RES_SLOT = CameraCondition(
    name="low_res_slot",
    description="very low-resolution fixed camera over a slot, three lighting sessions",
    real_set="ece395_ov7670",
    view="slot",
    size=(128, 128),  # measured: sessions a and b 128 x 128, c 172 x 147
    sessions={
        # The lamp, shadows and glare (twenty-fifth round; docs/vision.md, "How each
        # parameter was chosen"): the lamp placed on each session's median paper map; the
        # shadows' boxes by eye on it, their depth and colour calibrated on the shaded share
        # of the card, its level and its cast; the glare by eye, its strength calibrated on
        # the black pips' ink level under it. Session b's light is even but for the LED's
        # own reflection at the card's bottom edge, where no pip lies: none of the three.
        "a": Session("a", paper=(135, 180), cast=((0.84, 1.02), (0.71, 0.83)),
                     uneven=0.35, defocus=(0.35, 0.65), bits=(5, 5, 5), saturation=0.5,
                     card_box=(0.07, 0.02, 0.97, 0.9),
                     lamp=Lamp(centre=(0.72, 0.15), spread=(0.55, 1.0)),
                     shadows=(Shadow((-0.1, 0.6, 0.55, 1.1), depth=(0.35, 0.5),
                                     colour=(1.15, 1.12), softness=0.07),),
                     glare=Glare(centre=(0.62, 0.27), spread=0.12, strength=(0.4, 1.0)),
                     ceiling=1.0),
        "b": Session("b", paper=(108, 125), cast=((0.98, 1.03), (0.60, 0.63)),
                     uneven=0.35, defocus=(0.5, 0.8), bits=(5, 5, 5), saturation=0.5,
                     card_box=(0.07, 0.02, 0.97, 0.9)),
        "c": Session("c", paper=(148, 168), cast=((0.97, 1.05), (0.89, 0.95)),
                     size=(172, 147), uneven=0.35, defocus=(0.2, 0.45), bits=(5, 5, 6),
                     saturation=0.5, card_box=(0.0, -0.02, 0.93, 0.97), flare=(0.1, 0.2),
                     lamp=Lamp(centre=(0.45, 0.05), spread=(0.9, 1.3)),
                     shadows=(Shadow((-0.1, -0.1, 0.2, 1.1), depth=(0.35, 0.5),
                                     colour=(9.0, 11.0)),
                              Shadow((-0.1, 0.8, 1.1, 1.1), depth=(0.3, 0.4),
                                     colour=(9.0, 11.0))),
                     glare=Glare(centre=(0.45, 0.12), spread=0.12, strength=(0.2, 0.7)),
                     ceiling=1.0,
                     shadow_share=0.6),
    },
    read_noise=(0.6, 1.4), shot_noise=0.02,  # assumed; checked: measured noise 1.2-3.0
    vignetting=0.3,  # assumed (a tiny plastic lens)
    jpeg_quality=None,  # measured: decoded raw frames saved as PNG; 5 or 6 bits a channel
    enrol_per_card=2, roi=True,
    extra={
        # By eye: the card fills the frame turned 90 degrees, inside a dark slot.
        "jitter": 0.015, "tilt": 1.0,
        "slot": (0.02, 0.02, 0.025),
    },
)

ONTO_REACH_S1: Buckets = ((0.0, 0.15, 21), (0.15, 0.35, 5), (0.35, 0.6, 6))
"""How far a hand onto the card reaches, cardai s1 (see OVERHEAD_FELT)."""
ONTO_REACH_S2: Buckets = ((0.0, 0.15, 18), (0.15, 0.35, 11), (0.35, 0.6, 13))
"""How far a hand onto the card reaches, cardai s2 (see OVERHEAD_FELT)."""

OVERHEAD_FELT = CameraCondition(
    name="overhead_felt",
    description="overhead webcam over dim green felt, hands and partial views",
    real_set="cardai_hearts",
    view="overhead",
    size=(1280, 720),  # SOURCE.md: captured 1280 x 720 ...
    sessions={
        # By eye on contact sheets: s1, all 256 frames: 92 with a hand, 133 partly out of
        # frame, cards smaller; s2, every sixth frame (96): 71 with a hand, 14 partly out of
        # frame. (A first count on 40 frames of each had s1 25 % partial, s2 8 %.) How
        # the hand lies, by eye on 32 frames of each (every 8th of s1, every 17th of s2):
        # s1 15 hands, 6 apart from the card, 4 onto it, 5 holding it on the palm; s2 21
        # hands, 10 apart, 11 onto it, none under it. The card's long side over the frame's
        # height, on the whole cards the detector finds in every third photo, p10-p90: s1
        # 0.64-0.80 (the simulation had 0.46-0.70), s2 0.66-0.77 (had 0.67-0.83).
        # How far, by eye: of 26 cards partly out of frame in 48 s1 frames (every 5th),
        # 9 had under 15 % of the card beyond the edge, 9 15-35 %, 5 35-50 %, 3 up to 75 %
        # (the simulation had 15-45 % for all), and 8 were cut by two edges (it had none);
        # s2's 8 of 48 (every 11th), 5 under 15 %, 3 up to 30 %, none by two edges. A hand
        # onto the card, in the same frames (27): its fingers over under 15 % of the card's
        # length 20 times, 15-35 % 3 times, 35-60 % 4 times (it had 0-30 % for all).
        # Counted again per session (fourteenth round), s1 every 4th frame (64), s2 every
        # 6th (97): s1 24 hands, 8 apart from the card, 5 onto it (under 15 % of its length
        # once, 15-35 % twice, 35-60 % twice), 11 holding it (on the palm, or lifting it);
        # s2 72 hands, 28 apart, 42 onto (18 under 15 %, 11 15-35 %, 13 35-60 %: deeper
        # than the first count, which had few of s2's), 2 holding it. The shares of hand
        # kinds below pool both counts; s1's reach pools the first count with its own five,
        # s2's is its own count.
        # The paper's fine texture (a linen finish), measured on the rectified whole cards
        # (every 4th photo), in a blank strip by the long side: its high-pass (grey minus a
        # 2-pixel Gaussian blur) standard deviation over the paper's level, p50, real s1
        # 1.00 %, s2 1.26 %; the simulation had 0.81 % and 0.60 % (noise and JPEG alone),
        # and with the relief below 0.99 % and 1.26 %. The camera's tilt: the log of the
        # ratio of a whole card's opposite sides against how far apart they lie (every 2nd
        # photo's whole cards, both pairs of sides, least squares): down the frame's height
        # 0.155 (s1) and 0.218 (s2), across its width 0.03 and 0.04 (left out); the
        # simulation had 0.00-0.02. In s2 the tilt explains most of the spread (residual
        # 0.022 of 0.092), in s1 less (0.083 of 0.105: cards lifted off the felt).
        "s1": Session("s1", paper=(95, 185), metering=(33, 47),
                      cast=((0.98, 1.04), (1.0, 1.15)),
                      uneven=0.15, defocus=(0.25, 0.7), motion=0.25, hand=0.36, partial=0.52,
                      hand_kinds=(14, 9, 16), card_size=(0.62, 0.82),
                      partial_out=((0.05, 0.15, 9), (0.15, 0.35, 9), (0.35, 0.5, 5),
                                   (0.5, 0.75, 3)),
                      partial_corner=8 / 26, onto_reach=ONTO_REACH_S1, paper_texture=0.012,
                      tilt=0.155, felt_sheen=((-0.1, 0.3), (0.4, 0.7), (0.4, 0.55))),
        "s2": Session("s2", paper=(130, 200), metering=(46, 67),
                      cast=((0.92, 1.01), (0.92, 1.09)),
                      uneven=0.15, defocus=(0.25, 0.7), motion=0.1, hand=0.73, partial=0.14,
                      hand_kinds=(38, 53, 2), card_size=(0.64, 0.78),
                      partial_out=((0.05, 0.15, 5), (0.15, 0.3, 3)), onto_reach=ONTO_REACH_S2,
                      paper_texture=0.02, tilt=0.218,
                      felt_sheen=((-0.15, 0.15), (0.65, 0.95), (0.31, 0.48))),
    },
    read_noise=(1.5, 3.0), shot_noise=0.03,  # assumed; checked: measured noise 0.19-0.43
    vignetting=0.5,  # assumed (a wide webcam lens); checked: corner ratio
    jpeg_quality=95,  # assumed: the capture script's cv2.imwrite default
    output_size=(960, 540), output_jpeg=90,  # SOURCE.md: resized (area), saved at quality 90
    enrol_per_card=5, roi=False,
    extra={
        # Measured: the felt's median colour over the set (BGR), relative to white paper at
        # the set's median highlight (about 150).
        "felt": (0.29, 0.46, 0.17), "spot_floor": 0.05,
        # Assumed: light skin's reflectance (sRGB about 224, 172, 140).
        "skin": (0.55, 0.67, 0.88),
    },
)

CONDITIONS: dict[str, CameraCondition] = {
    condition.name: condition for condition in (IN_SHOE_CORNER, LOW_RES_SLOT, OVERHEAD_FELT)}


class ConditionError(ValueError):
    pass


def condition_named(name: str) -> CameraCondition:
    try:
        return CONDITIONS[name]
    except KeyError:
        raise ConditionError(f"unknown camera condition {name!r}: one of "
                             f"{', '.join(CONDITIONS)}") from None


def session_of_condition(condition: CameraCondition, name: str | None) -> Session:
    if name is None:
        return next(iter(condition.sessions.values()))
    try:
        return condition.sessions[name]
    except KeyError:
        raise ConditionError(f"camera condition {condition.name} has no session {name!r}: "
                             f"{', '.join(condition.sessions)}") from None


# ------------------------------------------------------------------------------ the pipeline

def realistic_frame(face: np.ndarray, rng: np.random.Generator, condition: CameraCondition,
                    session: Session | None = None) -> np.ndarray:
    """One BGR frame of the BGRA card ``face`` as ``condition``'s camera delivers it (after
    compression: what the recogniser reads)."""
    session = session or next(iter(condition.sessions.values()))
    width, height = session.size or condition.size
    scene = SCENES[condition.view](face, rng, (width, height), condition, session)
    light = illumination(rng, (width, height), session.uneven, condition.vignetting)
    if condition.view == "overhead":
        light *= _spot(rng, (width, height), float(condition.extra["spot_floor"]))
    if session.lamp is not None:
        light *= session.lamp.field((width, height))
    image = scene * light[:, :, None]
    if session.shadows and rng.random() < session.shadow_share:
        for shadow in session.shadows:
            image *= shadow.field(rng, (width, height))
    if session.glare is not None:
        image += session.glare.field(rng, (width, height))[:, :, None]
    image = optics(image, rng, session, condition)
    if session.ceiling is not None:
        image = np.minimum(image, session.ceiling)
    if session.saturation != 1.0:
        grey = image.mean(axis=2, keepdims=True)
        image = grey + session.saturation * (image - grey)
    image = expose(image, rng, session)
    image = image + rng.uniform(*session.flare) * image.mean(axis=(0, 1))
    image = sensor(image, rng, condition, session)
    return compress(image, condition)


def illumination(rng: np.random.Generator, size: tuple[int, int], uneven: float,
                 vignetting: float) -> np.ndarray:
    """The light falling on each pixel, 1 on average at the frame's middle: smooth random
    variation (a few blobs the size of a quarter of the frame) times a radial fall-off."""
    width, height = size
    coarse = rng.normal(0, 1, (6, 6)).astype(np.float32)
    field = cv2.resize(coarse, (width, height), interpolation=cv2.INTER_CUBIC)
    field /= max(float(np.abs(field).max()), 1e-6)
    y, x = np.mgrid[0:height, 0:width].astype(np.float32)
    radius2 = ((x - width / 2) ** 2 + (y - height / 2) ** 2) / ((width / 2) ** 2 + (height / 2) ** 2)
    falloff = 1 - vignetting * radius2 ** 1.5  # about cos^4 of a moderate field of view
    return np.clip((1 + uneven * field) * falloff, 0.05, None)


SPOT_WIDTH = (0.45, 0.75)
"""The spot's spread (sigma), a share of the frame's width. Measured by how much the light
varies over a card's white border (its 95th over its 5th percentile of grey, on the cards
the detector finds): cardai p50 1.70 (s1) and 1.92 (s2); the simulation with spots of
0.25-0.45 gave 2.41 and 2.82 (cards half in the dark, half lit, which the real lamp does
not do), with 0.45-0.75 1.73 and 1.95 (48 frames of each). The frame's light spread then
falls further below the real one (1.5 and 1.6 against 2.26 and 3.98): its darker corners
and edges are not in the simulation."""


def _spot(rng: np.random.Generator, size: tuple[int, int], floor: float) -> np.ndarray:
    """Dim directional light: a broad spot over an ambient floor, its centre anywhere from
    well inside to a little outside the frame (a lamp to one side lights the table as a
    gradient)."""
    width, height = size
    cx, cy = rng.uniform(-0.1, 1.1) * width, rng.uniform(-0.1, 1.1) * height
    sigma = rng.uniform(*SPOT_WIDTH) * width
    return floor + (1 - floor) * gaussian(size, (cx, cy), (sigma, sigma))


def optics(image: np.ndarray, rng: np.random.Generator, session: Session,
           condition: CameraCondition) -> np.ndarray:
    """Defocus, then (for a share of the frames) motion blur along a random direction."""
    sigma = rng.uniform(*session.defocus)
    if sigma > 0.2:
        image = cv2.GaussianBlur(image, (0, 0), sigma)
    if rng.random() < session.motion:
        length = rng.uniform(*condition.motion_length)
        angle = rng.uniform(0, np.pi)
        size = int(np.ceil(length)) | 1
        kernel = np.zeros((size, size), np.float32)
        centre = size // 2
        dx, dy = np.cos(angle) * length / 2, np.sin(angle) * length / 2
        cv2.line(kernel, (round(centre - dx), round(centre - dy)),
                 (round(centre + dx), round(centre + dy)), 1.0, 1, cv2.LINE_AA)
        image = cv2.filter2D(image, -1, kernel / kernel.sum())
    return image


def expose(image: np.ndarray, rng: np.random.Generator, session: Session) -> np.ndarray:
    """Auto-exposure and white balance: white paper (reflectance 1, light 1) comes out at the
    session's paper level in green and its measured cast in blue and red; or, with metering,
    the frame's mean comes out at the metered level."""
    level = rng.uniform(*session.paper)
    blue, red = rng.uniform(*session.cast[0]), rng.uniform(*session.cast[1])
    image = image * (np.array([blue, 1.0, red], np.float32) * level)
    if session.metering is not None:
        # The camera's own auto-exposure: it brings the frame's mean, not the paper, to its
        # target, so a card on the dark side of the table comes out dim.
        metered = float(cv2.cvtColor(np.clip(image, 0, 255), cv2.COLOR_BGR2GRAY).mean())
        image *= rng.uniform(*session.metering) / max(metered, 1e-3)
    return image


def sensor(image: np.ndarray, rng: np.random.Generator, condition: CameraCondition,
           session: Session) -> np.ndarray:
    """Shot and read noise, clipping at full scale, quantisation to the sensor's bits."""
    read = rng.uniform(*condition.read_noise)
    sigma = np.sqrt(read ** 2 + condition.shot_noise * np.clip(image, 0, None))
    image = np.clip(image + rng.normal(0, 1, image.shape).astype(np.float32) * sigma, 0, 255)
    for channel, bits in enumerate(session.bits):
        if bits < 8:
            step = 255 / (2 ** bits - 1)
            image[:, :, channel] = np.round(image[:, :, channel] / step) * step
    return np.round(image).astype(np.uint8)


def compress(image: np.ndarray, condition: CameraCondition) -> np.ndarray:
    if condition.jpeg_quality is not None:
        image = _jpeg(image, condition.jpeg_quality)
    if condition.output_size is not None:
        image = cv2.resize(image, condition.output_size, interpolation=cv2.INTER_AREA)
        if condition.output_jpeg is not None:
            image = _jpeg(image, condition.output_jpeg)
    return image


def _jpeg(image: np.ndarray, quality: int) -> np.ndarray:
    ok, data = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, quality])
    if not ok:
        raise RuntimeError("OpenCV could not encode a JPEG")
    return cv2.imdecode(data, cv2.IMREAD_COLOR)


# ------------------------------------------------------------------------------ scenes

def _face_reflectance(face: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A BGRA face as reflectance (white paper 1) and its alpha (0-1)."""
    return face[:, :, :3].astype(np.float32) / 255, face[:, :, 3].astype(np.float32) / 255


def _place(target: np.ndarray, face: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    """Composite ``face`` (BGRA) onto the reflectance image ``target`` through a 3x3
    perspective ``matrix``; returns the card's coverage (alpha) in the frame."""
    height, width = target.shape[:2]
    colour, alpha = _face_reflectance(face)
    # Bilinear sampling, no area averaging (OpenCV's warps have none): a face shrunk five
    # times (the slot camera) aliases a little where a sensor would average.
    warped = cv2.warpPerspective(np.dstack([colour * alpha[:, :, None], alpha]), matrix,
                                 (width, height), flags=cv2.INTER_LINEAR,
                                 borderValue=(0, 0, 0, 0))
    coverage = warped[:, :, 3]
    target *= (1 - coverage)[:, :, None]
    target += warped[:, :, :3]
    return coverage


def _index_corner_scene(face, rng, size, condition, session) -> np.ndarray:
    """The view from inside a shoe: the wall behind, the card's top-left corner, the top
    plate over the card's top edge, a vertical rod in front of the card's right part."""
    width, height = size
    extra = condition.extra
    scene = np.empty((height, width, 3), np.float32)
    scene[:] = extra["wall"]
    scene *= np.linspace(0.9, 1.05, height, dtype=np.float32)[:, None, None]
    fw = face.shape[1]
    scale = rng.uniform(*extra["card_width"]) / fw
    angle = np.deg2rad(rng.uniform(-extra["tilt"], extra["tilt"]))
    x0, y0 = rng.uniform(*extra["corner_x"]), rng.uniform(*extra["corner_y"])
    rotation = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
    matrix = np.eye(3)
    matrix[:2, :2] = rotation * scale
    matrix[:2, 2] = (x0, y0)
    coverage = _place(scene, face, matrix)
    # The card's own shadow on the wall to its left, where the light comes over it.
    shadow = np.roll(cv2.GaussianBlur(coverage, (0, 0), 3), -3, axis=1)
    scene *= (1 - 0.25 * np.clip(shadow - coverage, 0, 1))[:, :, None]
    # The top plate, its edge a little wavy, shading the card just under it.
    edge = rng.uniform(*extra["plate_edge"]) + 3 * np.sin(
        np.linspace(0, rng.uniform(2, 6), width) + rng.uniform(0, 6))
    rows = np.arange(height, dtype=np.float32)[:, None]
    plate = rows < edge[None, :]
    below = np.clip((rows - edge[None, :]) / 10, 0, 1)
    scene *= (0.7 + 0.3 * below)[:, :, None]
    scene[plate] = np.asarray(extra["plate"], np.float32)
    # The rod: a metal cylinder, lit from the front (bright middle, dark sides), a wider
    # collar at its foot.
    centre = rng.uniform(*extra["rod_x"])
    half = float(extra["rod_width"]) / 2
    columns = np.arange(width, dtype=np.float32)
    for top, widen in ((0.0, 1.0), (0.82 * height, 1.6)):
        across = (columns - centre) / (half * widen)
        inside = np.abs(across) < 1
        shade = 0.55 + 0.5 * np.sqrt(np.clip(1 - across ** 2, 0, 1))
        rod = np.asarray(extra["rod"], np.float32)[None, :] * shade[inside][:, None]
        scene[int(top):, inside] = np.minimum(rod, 1.2)[None, :, :]
    return scene


def _slot_scene(face, rng, size, condition, session) -> np.ndarray:
    """The whole card turned 90 degrees in a dark slot that it nearly fills."""
    width, height = size
    extra = condition.extra
    scene = np.empty((height, width, 3), np.float32)
    scene[:] = extra["slot"]
    turned = cv2.rotate(face, cv2.ROTATE_90_CLOCKWISE)
    th, tw = turned.shape[:2]
    jitter = float(extra["jitter"])
    left, top, right, bottom = (value + rng.uniform(-jitter, jitter)
                                for value in session.card_box or (0.05, 0.05, 0.95, 0.95))
    corners = np.float32([[0, 0], [tw, 0], [tw, th], [0, th]])
    box = np.float32([[left * width, top * height], [right * width, top * height],
                      [right * width, bottom * height], [left * width, bottom * height]])
    angle = np.deg2rad(rng.uniform(-extra["tilt"], extra["tilt"]))
    middle = box.mean(axis=0)
    rotation = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
    box = ((box - middle) @ rotation.T + middle).astype(np.float32)
    _place(scene, turned, cv2.getPerspectiveTransform(corners, box))
    return scene


def _overhead_scene(face, rng, size, condition, session) -> np.ndarray:
    """Felt seen from above, the card anywhere at any angle (sometimes partly out of the
    frame), sometimes a hand touching it."""
    width, height = size
    extra = condition.extra
    scene = np.empty((height, width, 3), np.float32)
    scene[:] = extra["felt"]
    texture = cv2.GaussianBlur(rng.normal(0, 0.04, (height, width)).astype(np.float32),
                               (0, 0), 1.2)
    scene *= (1 + texture)[:, :, None]
    fh, fw = face.shape[:2]
    scale = rng.uniform(*session.card_size) * height / fh
    angle = rng.uniform(-np.pi, np.pi)
    corners = np.float32([[0, 0], [fw, 0], [fw, fh], [0, fh]])
    centred = (corners - [fw / 2, fh / 2]) * scale
    centred += rng.uniform(-0.03, 0.03, (4, 2)) * [fw * scale, fh * scale]
    rotation = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
    placed = centred @ rotation.T
    cut = [0.0, 0.0]  # the share of the card's extent beyond an edge, on each axis
    if rng.random() < session.partial:
        cut[0] = draw_from(rng, session.partial_out)
        if rng.random() < session.partial_corner:
            cut[1] = draw_from(rng, session.partial_out)
        if rng.random() < 0.5:
            cut.reverse()
    placed = placed + card_offset(rng, placed.min(axis=0), placed.max(axis=0),
                                  (width, height), (cut[0], cut[1]))
    placed = tilted(placed, (width, height), session.tilt).astype(np.float32)
    matrix = cv2.getPerspectiveTransform(corners, placed)
    skin = np.asarray(extra["skin"], np.float32)
    kind = (int(rng.choice(3, p=np.asarray(session.hand_kinds) / sum(session.hand_kinds)))
            if rng.random() < session.hand else None)
    felt = np.ones((height, width), np.float32)  # how much of each pixel is felt
    if kind == HAND_UNDER:  # the card on the palm: the hand first, the card over it
        felt -= _hand(scene, rng, placed, skin, rng.uniform(0.5, 1.1))
    coverage = _place_with_shadow(scene, face, matrix)
    felt *= 1 - coverage
    if session.paper_texture > 0:
        scene *= (1 + session.paper_texture * coverage * _relief(rng, (width, height)))[
            :, :, None]
    if kind == HAND_APART:
        felt *= 1 - _hand(scene, rng, placed, skin, rng.uniform(-0.3, -0.03))
    elif kind == HAND_ONTO:
        felt *= 1 - _hand(scene, rng, placed, skin, draw_from(rng, session.onto_reach))
    if session.felt_sheen is not None:  # drawn last: the card and hand lie where they would
        sheen = _felt_sheen(rng, (width, height), session.felt_sheen)
        scene *= (1 + (sheen - 1) * felt)[:, :, None]
    return scene


def _felt_sheen(rng: np.random.Generator, size: tuple[int, int],
               lamp: tuple[Range, Range, Range]) -> np.ndarray:
    """How bright the felt is at each pixel (:attr:`Session.felt_sheen`), 1 at the median
    pixel: the felt's colour (``extra["felt"]``) is measured as the median over the frames,
    and the camera's exposure is set by the whole frame, so the sheen moves light about
    the felt without making it darker overall."""
    width, height = size
    across, down, spread = lamp
    cx, cy = rng.uniform(*across) * width, rng.uniform(*down) * height
    sigma = rng.uniform(*spread) * width
    sheen = gaussian(size, (cx, cy), (sigma, sigma))
    return sheen / max(float(np.median(sheen)), 1e-3)


def tilted(points: np.ndarray, size: tuple[int, int], tilt: float) -> np.ndarray:
    """Points of the table as a camera tilted by ``tilt`` (:attr:`Session.tilt`) sees them:
    a projective map about the frame's centre whose scale grows down the frame, about
    ``exp(tilt)`` times from the top edge to the bottom one."""
    if tilt == 0:
        return np.asarray(points, np.float64)
    width, height = size
    centre = np.array([width / 2, height / 2])
    away = np.asarray(points, np.float64) - centre
    depth = 1.0 - np.tanh(tilt / 2) * away[:, 1:2] / (height / 2)
    return centre + away / depth


def draw_from(rng: np.random.Generator, buckets: Buckets) -> float:
    """A value from measured ranges: a range chosen by its weight, a value uniform in it."""
    weights = np.array([weight for _, _, weight in buckets], np.float64)
    low, high, _ = buckets[int(rng.choice(len(buckets), p=weights / weights.sum()))]
    return float(rng.uniform(low, high))


HAND_APART, HAND_ONTO, HAND_UNDER = range(3)  # the order of Session.hand_kinds


def _relief(rng: np.random.Generator, size: tuple[int, int]) -> np.ndarray:
    """Fine random relief, unit standard deviation, grains about a pixel across."""
    width, height = size
    relief = cv2.GaussianBlur(rng.standard_normal((height, width), np.float32), (0, 0), 0.7)
    relief /= max(float(relief.std()), 1e-6)
    return relief


def card_offset(rng: np.random.Generator, low: np.ndarray, high: np.ndarray,
                size: tuple[int, int], cut: tuple[float, float] = (0.0, 0.0)) -> np.ndarray:
    """Where to move a card whose corners span ``low``-``high`` (relative to its centre):
    anywhere it fits whole in the frame (centred on an axis where it cannot fit); on an
    axis (x, y) whose ``cut`` is above 0, pushed over one of its two edges, either, until
    that share of its extent leaves the frame."""
    frame = np.asarray(size, np.float64)
    first, last = -low + 4, frame - high - 4  # the offsets that keep it whole, 4 px clear
    offset = np.where(last > first, first + rng.random(2) * (last - first),
                      (frame - low - high) / 2)
    for axis, share in enumerate(cut):
        if share > 0:
            out = share * (high[axis] - low[axis])
            offset[axis] = (-low[axis] - out if rng.random() < 0.5
                            else frame[axis] - high[axis] + out)
    return offset


def _place_with_shadow(scene: np.ndarray, face: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    footprint = cv2.warpPerspective(face[:, :, 3].astype(np.float32) / 255, matrix,
                                    scene.shape[1::-1])
    shadow = np.roll(cv2.GaussianBlur(footprint, (0, 0), 6), (6, 6), axis=(0, 1))
    scene *= (1 - 0.4 * shadow)[:, :, None]
    return _place(scene, face, matrix)


def _hand(scene: np.ndarray, rng: np.random.Generator, card: np.ndarray, skin: np.ndarray,
          reach: float) -> np.ndarray:
    """A hand coming in from the frame's edge nearest the card, one to four fingers whose
    tips lie ``reach`` of the card's length onto the card (short of it when negative), and
    the hand's soft shadow. Returns how much of each pixel the hand covers (0 to 1)."""
    height, width = scene.shape[:2]
    centre = card.mean(axis=0)
    card_len = float(np.linalg.norm(card[0] - card[3]))
    # From where the player sits (by eye on the real frames: mostly the right, then the
    # bottom, a few from the left), towards the card.
    side = int(rng.choice(3, p=[0.6, 0.25, 0.15]))
    direction = np.array([[-1, 0], [0, -1], [1, 0]][side], np.float32)
    direction = direction + rng.normal(0, 0.3, 2)
    direction /= np.linalg.norm(direction)
    reach *= card_len
    # The card's extent along the direction, from its centre back towards the hand.
    back = float(np.max((card - centre) @ -direction))
    tips = centre - direction * (back - reach)
    finger_len = rng.uniform(0.4, 0.6) * card_len
    finger_w = rng.uniform(0.11, 0.15) * card_len
    palm = tips - direction * (finger_len + 0.4 * card_len)
    normal = np.array([-direction[1], direction[0]])
    mask = np.zeros((height, width), np.float32)
    count = int(rng.integers(1, 5))
    for index in range(count):
        offset = (index - (count - 1) / 2) * finger_w * 1.15
        tip = tips + normal * offset - direction * abs(offset) * 0.4
        root = palm + normal * offset * 1.2 + direction * 0.2 * card_len
        cv2.line(mask, tuple(int(v) for v in root), tuple(int(v) for v in tip), 1.0,
                 max(int(finger_w), 2), cv2.LINE_AA)
    axes = (int(0.6 * card_len), int(0.45 * card_len))
    cv2.ellipse(mask, tuple(int(v) for v in palm), axes,
                float(np.degrees(np.arctan2(direction[1], direction[0]))), 0, 360, 1.0, -1,
                cv2.LINE_AA)
    mask = cv2.GaussianBlur(mask, (0, 0), 1.0)
    shadow = np.roll(cv2.GaussianBlur(mask, (0, 0), 10), (8, 8), axis=(0, 1))
    scene *= (1 - 0.5 * shadow)[:, :, None]
    # Rounded: lit on the top, darker at the sides (the blur of the mask, not its edge).
    shading = rng.uniform(0.6, 1.0) * (0.6 + 0.4 * cv2.GaussianBlur(mask, (0, 0),
                                                                    finger_w / 2))
    scene *= (1 - mask)[:, :, None]
    scene += (mask * shading)[:, :, None] * skin[None, None, :]
    return mask


SCENES: dict[str, Callable[..., np.ndarray]] = {
    "index_corner": _index_corner_scene, "slot": _slot_scene, "overhead": _overhead_scene}


# ------------------------------------------------------------------------------ sources

class RealisticCamera:
    """A :class:`simulators.camera.SimulatedCamera` with a realistic camera: ``capture``
    renders the card ``card_source()`` names (None: no card) under ``condition``."""

    def __init__(self, card_source: Callable[[], Card | None], design: DeckDesign,
                 condition: CameraCondition, *, session: str | None = None, seed: int = 0,
                 cache: Path | None = None) -> None:
        self.card_source = card_source
        self.design = design
        self.condition = condition
        self.session = session_of_condition(condition, session)
        self.cache = cache
        self._rng = np.random.default_rng(seed)
        self._lock = threading.Lock()
        self.captures = 0

    def capture(self) -> np.ndarray:
        card = self.card_source()
        with self._lock:
            self.captures += 1
            if card is None:
                blank = np.zeros((2, 2, 4), np.uint8)  # a transparent "card": the scene alone
                return realistic_frame(blank, self._rng, self.condition, self.session)
            face = render_deck(self.design, [card], height=FACE_HEIGHT, cache=self.cache)[card]
            return realistic_frame(face, self._rng, self.condition, self.session)

    def close(self) -> None:
        """Nothing to release."""


def write_matching_folder(folder: Path, design: DeckDesign, condition: CameraCondition,
                          plan: Sequence[tuple[Card, str]], *, seed: int,
                          cache: Path | None = None) -> Path:
    """Simulated frames laid out like a real set: one frame per (card, session) of ``plan``
    (a real set's photos, in its file-name order), named ``CARD_SESSION_NN.png`` so that
    the bench's draw and its per-session counts work as on the real set. Lossless PNG: the
    frames already carry the camera's JPEG. Returns the labels file."""
    folder.mkdir(parents=True, exist_ok=True)
    faces = render_deck(design, sorted({card for card, _ in plan},
                                       key=lambda card: (int(card.suit), card.rank)),
                        height=FACE_HEIGHT, cache=cache)
    rng = np.random.default_rng(seed)
    counts: dict[tuple[Card, str], int] = {}
    labels = folder / "labels.csv"
    with labels.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["file", "card"])
        for card, session in plan:
            counts[(card, session)] = number = counts.get((card, session), 0) + 1
            name = f"{card.code}_{session}_{number:02d}.png"
            frame = realistic_frame(faces[card], rng, condition,
                                    session_of_condition(condition, session))
            cv2.imwrite(str(folder / name), frame)
            writer.writerow([name, card.code])
    return labels
