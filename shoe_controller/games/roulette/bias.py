"""Wheel bias monitor: is this wheel still fair? Chi-square tests on the numbers it produced.

A pit manager's question for a wheel that runs thousands of games a day. Two Pearson
chi-square tests against a fair wheel (every pocket 1/37), on every game the journal holds for
one wheel:

* **numbers**: the 37 pocket counts (36 degrees of freedom): any pocket too hot or too cold;
* **sectors**: the wheel cut into runs of ``sector_size`` neighbouring pockets (wheel order;
  37 = 4 x 9 + 1, the last run has 10), expected counts in proportion to each run's size, at
  every one of the ``sector_size`` rotations of the cut, so a biased arc is never split
  between two runs at all of them. This is what a tilted wheel or a worn area shows: a whole
  arc of the wheel too hot, each pocket only a little.

The evidence of bias is the smallest p-value, corrected for looking several times
(Bonferroni: the sector p-value times the number of rotations, then the smaller of the two
tests times two); an **alert** (an irregularity to show, not a latch) is raised when it falls
below ``alert_p`` after at least ``min_games`` games (by then every pocket expects 10, where
the chi-square approximation holds). A breakdown by dealer and by launch direction gives the
same tests per group, for the manager to see whether one dealer or one direction carries it.

Operating figures (false alarms on fair wheels over 10,000 games, games to detect a biased
arc) are measured by ``bench/bench_wheel_bias.py`` and stated in docs/roulette.md.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats  # type: ignore[import-untyped]

from shoe_controller.games.roulette.layout import WHEEL_ORDER, check_number, sectors

REPORT_SCHEMA = "roulette-bias/1"
POCKETS = 37


@dataclass(frozen=True, slots=True)
class BiasConfig:
    alert_p: float = 1e-4
    min_games: int = 370
    sector_size: int = 9

    def __post_init__(self) -> None:
        if not (isinstance(self.alert_p, float) and 0 < self.alert_p < 1):
            raise ValueError(f"alert_p must be a probability between 0 and 1, got "
                             f"{self.alert_p!r}")
        if isinstance(self.min_games, bool) or not isinstance(self.min_games, int) \
                or self.min_games < 37:
            raise ValueError(f"min_games must be a whole number >= 37, got {self.min_games!r}")
        if not 2 <= self.sector_size <= 18:
            raise ValueError(f"sector_size must be 2..18 pockets, got {self.sector_size!r}")

    @property
    def rotations(self) -> int:
        return self.sector_size


@dataclass(frozen=True, slots=True)
class Spin:
    """One game's number, with who launched it and which way (for the breakdown)."""

    number: int
    dealer: str | None = None
    direction: str | None = None  # "clockwise" / "anticlockwise"


@dataclass(frozen=True, slots=True)
class Evidence:
    games: int
    numbers_chi2: float
    numbers_p: float
    sectors_chi2: float  # the largest over the rotations
    sectors_p: float  # corrected for the rotations
    sector_offset: int  # the rotation that gave it
    p: float  # the evidence of bias: min of the two, corrected for two tests

    def to_json_dict(self) -> dict[str, Any]:
        return {"games": self.games, "numbers_chi2": self.numbers_chi2,
                "numbers_p": self.numbers_p, "sectors_chi2": self.sectors_chi2,
                "sectors_p": self.sectors_p, "sector_offset": self.sector_offset, "p": self.p}


@dataclass(frozen=True, slots=True)
class BiasAlert:
    """Raised once when a wheel's evidence of bias passes the configured level."""

    wheel: str
    evidence: Evidence
    hottest_sector: tuple[int, ...]
    alert_p: float

    @property
    def message(self) -> str:
        e = self.evidence
        return (f"wheel {self.wheel}: evidence of bias after {e.games} games (p = {e.p:.2g} "
                f"< {self.alert_p:g}); hottest sector {'-'.join(map(str, self.hottest_sector))}"
                "; remedy: have the wheel inspected (level, wear, ball track) and compare "
                "dealers and directions in the bias report")


class _Partitions:
    """Membership matrices: pocket number -> run index, for every rotation of the cut."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.cuts = [sectors(size, offset) for offset in range(size)]
        self.matrices = []
        for cut in self.cuts:
            matrix = np.zeros((POCKETS, len(cut)))
            for index, run in enumerate(cut):
                for pocket in run:
                    matrix[pocket, index] = 1.0
            self.matrices.append(matrix)
        self.shares = [m.sum(axis=0) / POCKETS for m in self.matrices]
        self.df = len(self.cuts[0]) - 1


def _p_from(numbers_chi2: float, sectors_chi2: list[float], parts: _Partitions,
            games: int) -> Evidence:
    numbers_p = float(stats.chi2.sf(numbers_chi2, POCKETS - 1))
    best = int(np.argmax(sectors_chi2))
    sectors_p = min(1.0, float(stats.chi2.sf(sectors_chi2[best], parts.df)) * parts.size)
    p = min(1.0, 2 * min(numbers_p, sectors_p))
    return Evidence(games, float(numbers_chi2), numbers_p, float(sectors_chi2[best]), sectors_p,
                    best, p)


def evidence(counts: np.ndarray | list[int], sector_size: int = 9) -> Evidence:
    """The two tests on 37 pocket counts (indexed by number)."""
    parts = _PARTS.get(sector_size) or _partitions(sector_size)
    counts = np.asarray(counts, dtype=float)
    games = int(counts.sum())
    if games == 0:
        return Evidence(0, 0.0, 1.0, 0.0, 1.0, 0, 1.0)
    expected = games / POCKETS
    numbers_chi2 = float(((counts - expected) ** 2).sum() / expected)
    sector_chi2 = []
    for matrix, shares in zip(parts.matrices, parts.shares, strict=True):
        observed = counts @ matrix
        wanted = games * shares
        sector_chi2.append(float(((observed - wanted) ** 2 / wanted).sum()))
    return _p_from(numbers_chi2, sector_chi2, parts, games)


_PARTS: dict[int, _Partitions] = {}


def _partitions(size: int) -> _Partitions:
    _PARTS[size] = _Partitions(size)
    return _PARTS[size]


def critical_values(config: BiasConfig) -> tuple[float, float]:
    """Chi-square values beyond which each test alone passes the alert level (numbers, one
    sector rotation): the same decision as ``evidence(...).p < alert_p``, without p-values."""
    per_test = config.alert_p / 2
    parts = _PARTS.get(config.sector_size) or _partitions(config.sector_size)
    return (float(stats.chi2.isf(per_test, POCKETS - 1)),
            float(stats.chi2.isf(per_test / parts.size, parts.df)))


def first_alert(numbers: np.ndarray, config: BiasConfig = BiasConfig()) -> int | None:
    """How many games into ``numbers`` (a wheel's results in order) the monitor, checking
    after every game, would first raise its alert; None if it never would.

    Vectorised over the whole history (cumulative counts), for simulations; the same
    decision as :class:`BiasMonitor` (a test holds the two to agreeing).
    """
    numbers = np.asarray(numbers, dtype=np.int64)
    if numbers.size == 0:
        return None
    parts = _PARTS.get(config.sector_size) or _partitions(config.sector_size)
    numbers_crit, sector_crit = critical_values(config)
    onehot = np.zeros((numbers.size, POCKETS), dtype=np.int32)
    onehot[np.arange(numbers.size), numbers] = 1
    counts = np.cumsum(onehot, axis=0).astype(float)
    games = np.arange(1, numbers.size + 1, dtype=float)
    expected = games / POCKETS
    numbers_chi2 = (counts ** 2).sum(axis=1) / expected - games
    hit = numbers_chi2 > numbers_crit
    for matrix, shares in zip(parts.matrices, parts.shares, strict=True):
        wanted = np.outer(games, shares)
        chi2 = (((counts @ matrix) - wanted) ** 2 / wanted).sum(axis=1)
        hit |= chi2 > sector_crit
    hit[: config.min_games - 1] = False
    where = np.flatnonzero(hit)
    return int(where[0]) + 1 if where.size else None


class BiasMonitor:
    """One wheel's running tests. :meth:`add` each accepted number (from the journal, in
    order); it returns a :class:`BiasAlert` the first time the evidence passes the level.
    The alert then stands (near the level the evidence goes back and forth, and one alert is
    what a manager needs) until :meth:`reset`, e.g. after the wheel was serviced: a new
    monitoring period starts from zero games."""

    def __init__(self, wheel: str, config: BiasConfig = BiasConfig()) -> None:
        self.wheel = wheel
        self.config = config
        self.counts = np.zeros(POCKETS, dtype=np.int64)
        self.by_dealer: dict[str, np.ndarray] = {}
        self.by_direction: dict[str, np.ndarray] = {}
        self.alerting = False
        self._critical = critical_values(config)
        self._parts = _PARTS.get(config.sector_size) or _partitions(config.sector_size)

    @classmethod
    def from_spins(cls, wheel: str, spins: Iterable[Spin],
                   config: BiasConfig = BiasConfig()) -> BiasMonitor:
        monitor = cls(wheel, config)
        for spin in spins:
            monitor.add(spin)
        return monitor

    @property
    def games(self) -> int:
        return int(self.counts.sum())

    def add(self, spin: Spin | int) -> BiasAlert | None:
        if isinstance(spin, int):
            spin = Spin(spin)
        number = check_number(spin.number)
        self.counts[number] += 1
        for key, groups in ((spin.dealer, self.by_dealer), (spin.direction, self.by_direction)):
            if key is not None:
                groups.setdefault(key, np.zeros(POCKETS, dtype=np.int64))[number] += 1
        if self.alerting or self.games < self.config.min_games or not self._passes():
            return None
        self.alerting = True
        return BiasAlert(self.wheel, self.evidence(), self.hottest_sector(), self.config.alert_p)

    def reset(self) -> None:
        """Start a new monitoring period (the wheel was levelled, repaired or replaced)."""
        self.counts[:] = 0
        self.by_dealer.clear()
        self.by_direction.clear()
        self.alerting = False

    def _passes(self) -> bool:
        games = self.games
        expected = games / POCKETS
        numbers_chi2 = float((self.counts.astype(float) ** 2).sum() / expected - games)
        if numbers_chi2 > self._critical[0]:
            return True
        for matrix, shares in zip(self._parts.matrices, self._parts.shares, strict=True):
            wanted = games * shares
            if float((((self.counts @ matrix) - wanted) ** 2 / wanted).sum()) > self._critical[1]:
                return True
        return False

    def evidence(self) -> Evidence:
        return evidence(self.counts, self.config.sector_size)

    def hottest_sector(self) -> tuple[int, ...]:
        """The run of ``sector_size`` neighbouring pockets with the most games above its
        expectation (any starting pocket), in wheel order."""
        size = self.config.sector_size
        ring = np.array([self.counts[n] for n in WHEEL_ORDER] * 2, dtype=float)
        windows = np.convolve(ring, np.ones(size), mode="valid")[:POCKETS]
        start = int(np.argmax(windows))
        return tuple(WHEEL_ORDER[(start + i) % POCKETS] for i in range(size))

    def report(self) -> dict[str, Any]:
        """The bias report (JSON; schema ``roulette-bias/1``, docs/roulette.md)."""
        games = self.games
        cut = self._parts.cuts[0]
        return {
            "schema": REPORT_SCHEMA,
            "wheel": self.wheel,
            "games": games,
            "alert_p": self.config.alert_p,
            "min_games": self.config.min_games,
            "alerting": self.alerting,
            "evidence": self.evidence().to_json_dict(),
            "numbers": {str(n): int(self.counts[n]) for n in range(POCKETS)},
            "expected_per_number": games / POCKETS,
            "sectors": [{"pockets": list(run), "games": int(sum(self.counts[p] for p in run)),
                         "expected": games * len(run) / POCKETS} for run in cut],
            "hottest_sector": list(self.hottest_sector()),
            "by_dealer": _groups(self.by_dealer, self.config.sector_size),
            "by_direction": _groups(self.by_direction, self.config.sector_size),
        }


def _groups(groups: dict[str, np.ndarray], sector_size: int) -> dict[str, Any]:
    return {name: {"games": int(counts.sum()),
                   "evidence": evidence(counts, sector_size).to_json_dict()}
            for name, counts in sorted(groups.items())}


def biased_weights(sector: Iterable[int], factor: float) -> np.ndarray:
    """Pocket probabilities for a wheel whose ``sector`` pockets are each ``factor`` times as
    likely as the others (for simulations and tests)."""
    weights = np.ones(POCKETS)
    for pocket in sector:
        weights[check_number(pocket)] = factor
    probabilities: np.ndarray = weights / weights.sum()
    return probabilities
