"""Fuzz every file decoder outside input reaches: any bytes in, only the decoder's own error out.

Three decoders read files an operator or a simulator hands over:

* the ``shoe run`` configuration (TOML) -> ``load_run_config`` -> only :class:`ConfigError`;
* a table profile (TOML) -> ``load_profile`` -> only :class:`ConfigError` (``ProfileError``);
* a shoe file (card codes) -> ``read_shoe_file`` / ``parse_shoe`` -> only
  :class:`ShoeFileError` / :class:`CardCodeError`.

Each is fed arbitrary bytes, valid documents with a few bytes changed (to get past the TOML
parser), and structured documents: the real keys with values of every TOML type, written by the
small TOML writer below (which is checked to round-trip through ``tomllib``, so a structured
example never silently degrades into a test of the parser's error path). What a decoder accepts
must also be usable by what is built from it (the link's timings, a profile's odds and
settlement, a replay), since a value that passes validation and fails at start is the same bug.

Budgets are fixed and modest for CI (``max_examples=200``); ``bench/fuzz_files.py`` runs the same
decoders under atheris, coverage-guided, for as long as wanted. Bugs found so far are pinned
below with ``@example`` and in the decoders' own tests.
"""

from __future__ import annotations

import datetime as dt
import math
import re
import tomllib
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

from shoe_controller.cards import (
    Card,
    format_shoe,
    new_shoe,
    parse_shoe,
    read_shoe_file,
)
from shoe_controller.config import (
    DURABILITIES,
    KNOWN_KEYS,
    LOG_LEVELS,
    MIN_PIN_ITERATIONS,
    RESERVED_ACTORS,
    TABLE_DOWN_POLICIES,
    RunConfig,
    hash_pin,
    load_run_config,
)
from shoe_controller.errors import CardCodeError, ConfigError, ShoeError, ShoeFileError
from shoe_controller.games.baccarat.odds import exact_odds, full_shoe
from shoe_controller.games.baccarat.profile import (
    FACTS,
    ROUNDINGS,
    Profile,
    ProfileError,
    load_profile,
    profile_from_toml,
    read_profile_text,
)
from shoe_controller.games.baccarat.replay import replay_shoe
from shoe_controller.games.baccarat.settlement import settle
from shoe_controller.games.baccarat.shoe_procedure import RoundComplete, ShoeDealer
from shoe_controller.table.runtime import link_config

FUZZ = settings(
    max_examples=200,
    deadline=None,
    # One file per test, rewritten by every example: the fixture is safe to share.
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
DOCS = Path(__file__).resolve().parents[2] / "docs"
PROFILES = Path(__file__).resolve().parents[2] / "shoe_controller/games/baccarat/profiles"


# -- a small TOML writer (every TOML type; keys always quoted) --------------------------------


def toml_string(text: str) -> str:
    out = ['"']
    for char in text:
        if char in '"\\':
            out.append("\\" + char)
        elif ord(char) < 0x20 or ord(char) == 0x7F:
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(char)
    out.append('"')
    return "".join(out)


def toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return toml_string(value)
    if isinstance(value, (dt.datetime, dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(item) for item in value) + "]"
    if isinstance(value, dict):
        pairs = (f"{toml_string(k)} = {toml_value(v)}" for k, v in value.items())
        return "{" + ", ".join(pairs) + "}"
    raise TypeError(f"no TOML form for {value!r}")


def toml_document(data: dict[str, Any]) -> str:
    text = "".join(f"{toml_string(key)} = {toml_value(value)}\n" for key, value in data.items())
    assert repr(tomllib.loads(text)) == repr(data), "the test's TOML writer is wrong"
    return text


def test_the_toml_writer_round_trips() -> None:
    data = {
        "s": 'a"\\\x00\x7f\u00e9\U0001f0a1',
        "i": -(2**70),
        "f": [1e300, -0.0, 5e-324, float("inf")],
        "t": {"d": dt.date(1, 2, 3), "dt": dt.datetime(2024, 5, 1, 12, 0, 0, 1, dt.UTC)},
        "e": [[], {}],
        "b": False,
        "lt": dt.time(23, 59, 59, 999999),
    }
    toml_document(data)


scalars = st.one_of(
    st.booleans(),
    st.integers(),
    st.floats(),
    st.text(max_size=20),
    st.datetimes(timezones=st.none() | st.just(dt.UTC)).map(lambda d: d.replace(fold=0)),
    st.dates(),
    st.times().map(lambda t: t.replace(fold=0)),
)
toml_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=10,
)
keys = st.text(max_size=12)


def mutated(seeds: list[bytes]) -> st.SearchStrategy[bytes]:
    """A valid document with a few byte ranges replaced, inserted or deleted."""

    @st.composite
    def build(draw: st.DrawFn) -> bytes:
        data = bytearray(draw(st.sampled_from(seeds)))
        for _ in range(draw(st.integers(1, 4))):
            start = draw(st.integers(0, len(data)))
            end = draw(st.integers(start, min(len(data), start + 8)))
            data[start:end] = draw(st.binary(max_size=8))
        return bytes(data)

    return build()


# -- the run configuration ---------------------------------------------------------------------

PIN_HASH = hash_pin("246810", salt=bytes(16), iterations=MIN_PIN_ITERATIONS)
CONFIG_SEEDS = [
    (DOCS / "config.md")
    .read_text(encoding="utf-8")
    .split("```toml\n", 1)[1]
    .split("```")[0]
    .encode(),
    b'device = "loop://"\nprofile = "p"\njournal = "j.db"\nheartbeat_seconds = 0.5\n'
    b'link_timeout_seconds = 1.0\n[supervisors]\nalice = "' + PIN_HASH.encode() + b'"\n',
]
numbers = st.one_of(
    st.floats(),
    st.integers(),
    st.sampled_from([0, 0.25, 0.5, 0.6, 1, 1.0, 2, 1e308, 5e-324, 10**400, -(10**400)]),
)
paths = st.one_of(
    st.sampled_from(["j.db", "~/j.db", "~nosuchuser4711/j.db", "a\x00b.db", "", " ", "/"]),
    st.text(max_size=12),
)
supervisor_ids = st.one_of(
    st.sampled_from(
        ["alice", "bob.2", "alice\n", "a" * 65, "", *RESERVED_ACTORS, "TIMER", "Table_System"]
    ),
    st.text(max_size=8),
)
pin_hashes = st.one_of(
    st.just(PIN_HASH),
    st.just(PIN_HASH + "\n"),
    st.just(hash_pin("246810", salt=bytes(16), iterations=1000)),
    st.sampled_from(["4711", "pbkdf2_sha256$x$y$z", ""]),
    toml_values,
)
PLAUSIBLE: dict[str, st.SearchStrategy[Any]] = {
    "device": st.sampled_from(
        [
            "/dev/ttyACM0",
            "usb://1a86:7523",
            "usb://1a86:75",
            "socket://127.0.0.1:7000",
            "loop://",
            "",
            "dev\x00ice",
        ]
    ),
    "profile": st.sampled_from(["punto-banco-8d", "x.toml", ""]),
    "journal": paths,
    "betting_seconds": numbers,
    "shoes": st.integers() | st.sampled_from([0, 1, 10**300]),
    "log_json": st.booleans(),
    "log_level": st.sampled_from([*LOG_LEVELS, "INFO", "loud", ""]),
    "heartbeat_seconds": numbers,
    "link_timeout_seconds": numbers,
    "durability": st.sampled_from([*DURABILITIES, "FULL", "sometimes"]),
    "table_id": st.text(max_size=10),
    "supervisors": st.dictionaries(supervisor_ids, pin_hashes, max_size=3),
    "table_url": st.sampled_from(["ws://h:1/t", "wss://games.example.com/t", "wss://", "http://x"]),
    "table_token": st.sampled_from(["t7-3f9c2a61d0b4", "short", ""]),
    "table_key_file": paths,
    "journal_key_file": paths,
    "table_ca_file": paths,
    "table_down_policy": st.sampled_from([*TABLE_DOWN_POLICIES, "Keep-Dealing", "panic"]),
    "metrics": st.sampled_from(["9108", ":9108", "0.0.0.0:9108", "[::1]:9108", "x", ""])
    | st.integers(),
    "mqtt": st.sampled_from(["mqtt://127.0.0.1:1883", "mqtts://broker.example.com",
                             "mqtt://user@h:1", "mqtt://u:secret@h", "http://h", "mqtt://", ""]),
    "mqtt_prefix": st.sampled_from(["shoe", "floor/pit-3", "a/#", "$SYS", "a//b", ""]),
    "mqtt_protocol": st.sampled_from(["5", "3.1.1", "3", 5]),
    "mqtt_password_file": paths,
    "mqtt_ca_file": paths,
    "mqtt_cert_file": paths,
    "mqtt_key_file": paths,
    "pit": st.sampled_from(["pit-3", "Salon Privé", "a/b", "+", ""]) | st.text(max_size=10),
    "wheel": st.fixed_dictionaries({}, optional={
        "name": st.sampled_from(["wheel-3", "", "\x00"]),
        "baudrate": st.sampled_from([9600, 9601, 115200, True]),
        "host_starts": st.sampled_from([True, False, "yes"]),
        "poll_interval": st.sampled_from([0.5, 0.01, -1, float("nan"), "x"]),
        "confirmations": st.sampled_from([1, 2, 4, True]),
        "confirm_window": numbers,
        "status_timeout": numbers,
        "direction": st.sampled_from(["alternate", "sideways"]),
        "bias_alert_p": st.sampled_from([1e-4, 0.0, 2, "p"]),
        "bias_min_games": st.sampled_from([370, 3, 10**300]),
        "bias_sector_size": st.sampled_from([9, 1, 40]),
        "tilt": toml_values,
    }) | toml_values,
    "games": st.integers() | st.sampled_from([0, 1, 10**300]),
}
config_documents = st.fixed_dictionaries(
    {},
    optional={key: st.one_of(PLAUSIBLE[key], toml_values) for key in KNOWN_KEYS}
    | {"betting_secs": toml_values, "": toml_values},
)
# Mostly valid: the required keys always right, the rest from the plausible values, so that
# many load and what is built from them (the link) is exercised, not only the refusals.
near_valid_config_documents = st.fixed_dictionaries(
    {"device": st.just("loop://"), "profile": st.just("p"), "journal": st.just("j.db")},
    optional={
        key: PLAUSIBLE[key] for key in KNOWN_KEYS if key not in ("device", "profile", "journal")
    }
    | {"heartbeat_seconds": st.floats(1e-3, 10), "link_timeout_seconds": st.floats(1e-3, 30)},
)
_SUPERVISOR_ID = re.compile(r"[A-Za-z0-9_.-]{1,64}")


def one_problem_a_line(error: ConfigError, path: Path) -> None:
    """The documented form: a count, then one ``FILE: key: reason`` a line (or one line)."""
    lines = str(error).split("\n")
    if len(lines) > 1:
        assert lines[0] == f"{len(lines) - 1} problem(s) in the run configuration:", lines[0]
        assert all(line.startswith(f"  {path}: ") for line in lines[1:]), lines
    else:
        assert lines[0].startswith(f"{path}: "), lines[0]


def actor_key(name: str) -> str:
    return re.sub("[-_.]", "", name.lower())


def check_run_config(path: Path) -> None:
    """Load ``path``: a ConfigError, or a config whose parts all build."""
    try:
        config = load_run_config(path, {})
    except ConfigError as error:
        one_problem_a_line(error, path)
        event("refused" if "problem(s)" in str(error) else "refused: not TOML")
        return
    event("loaded")
    assert isinstance(config, RunConfig)
    link_config(config)  # what ``shoe run`` builds from it must not fail at start
    reserved = {actor_key(name) for name in RESERVED_ACTORS}
    for name in config.supervisors:
        assert _SUPERVISOR_ID.fullmatch(name), name
        assert actor_key(name) not in reserved, name
    for value in (config.journal, config.table_key_file, config.table_ca_file,
                  config.journal_key_file):
        assert value is None or "\x00" not in str(value)
    for value in (
        config.device,
        config.profile,
        config.table_id,
        config.table_url,
        config.table_token,
    ):
        assert value is None or value.isprintable(), value


@FUZZ
@given(data=st.binary(max_size=2000))
@example(data=b'device = "\xff"')  # not UTF-8: was a UnicodeDecodeError
@example(data=b"device = " + b"[" * 3000)  # deep nesting: was a RecursionError
@example(data=b"shoes = " + b"9" * 5000)  # over Python's int-string limit: was a ValueError
@example(data=b"heartbeat_seconds = " + b"9" * 400)  # too large for a float: OverflowError
@example(data=b'journal = "~nosuchuser4711/j.db"')  # unknown user: was a RuntimeError
def test_run_config_any_bytes(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "table.toml"
    path.write_bytes(data)
    check_run_config(path)


@FUZZ
@given(data=mutated(CONFIG_SEEDS))
def test_run_config_mutated_documents(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "table.toml"
    path.write_bytes(data)
    check_run_config(path)


@FUZZ
@given(document=config_documents)
@example(
    document={
        "device": "loop://",
        "profile": "p",
        "journal": "j.db",
        "heartbeat_seconds": 0.5,
        "link_timeout_seconds": 0.6,
    }
)  # LinkConfig refused
@example(
    document={
        "device": "loop://",
        "profile": "p",
        "journal": "j.db",
        "supervisors": {"alice\n": PIN_HASH},
    }
)  # '$' matched before the newline
@example(document={"device": "loop://", "profile": "p", "journal": "j\x00.db"})
def test_run_config_structured(tmp_path: Path, document: dict[str, Any]) -> None:
    path = tmp_path / "table.toml"
    path.write_text(toml_document(document), encoding="utf-8")
    check_run_config(path)


@FUZZ
@given(document=near_valid_config_documents)
def test_run_config_near_valid(tmp_path: Path, document: dict[str, Any]) -> None:
    path = tmp_path / "table.toml"
    path.write_text(toml_document(document), encoding="utf-8")
    check_run_config(path)


# -- table profiles ------------------------------------------------------------------------------

PROFILE_SEEDS = [path.read_bytes() for path in sorted(PROFILES.glob("*.toml"))]
decimals = st.one_of(
    st.sampled_from(
        [
            "0.95",
            "1",
            "8",
            "0.05",
            "1e999999",
            "1e-999999",
            "1e999999999",
            "NaN",
            "-1",
            "0",
            "1.0000000000000000000000000000001",
            "1_000",
            " 2 ",
            "0x10",
        ]
    ),
    st.decimals().map(str),
    st.integers(),
    st.floats(),
)
facts = st.one_of(st.sampled_from(FACTS), toml_values)
exception_tables = st.fixed_dictionaries(
    {"when": facts},
    optional={"result": st.just("push") | toml_values, "pays": decimals | toml_values},
)
bet_tables = st.fixed_dictionaries(
    {"wins_on": facts, "pays": decimals},
    optional={
        "commission": decimals | toml_values,
        "rounding": st.sampled_from(list(ROUNDINGS)) | toml_values,
        "pushes_on": st.lists(facts, max_size=3) | toml_values,
        "exceptions": st.lists(exception_tables, max_size=2) | toml_values,
        "description": st.text(max_size=5) | toml_values,
        "extra": toml_values,
    },
)
profile_documents = st.fixed_dictionaries(
    {"bets": st.dictionaries(st.text(max_size=8), bet_tables | toml_values, max_size=3)},
    optional={
        "name": st.text(max_size=8) | toml_values,
        "description": st.text(max_size=8) | toml_values,
        "source": toml_values,
        "decks": st.integers(0, 65) | toml_values,
        "cut_card": st.integers(-1, 3400) | toml_values,
        "last_round": st.sampled_from(["finish-and-one-more", "finish-current"]) | toml_values,
        "rounding": st.sampled_from(list(ROUNDINGS)) | toml_values,
        "allow_player_edge": st.booleans() | toml_values,
        "burn": st.fixed_dictionaries(
            {},
            optional={
                "procedure": st.sampled_from(["turn-and-burn", "fixed"]) | toml_values,
                "count": st.integers(-1, 3400) | toml_values,
            },
        )
        | toml_values,
        "colour": toml_values,
    },
)


def check_profile(path: Path) -> None:
    """Load ``path``: a ConfigError, or a profile whose odds, replay and settlement all work."""
    try:
        profile = load_profile(path)
    except ConfigError as error:
        assert isinstance(error, ProfileError)
        assert all(
            "\n" not in problem and problem.startswith(f"{path}: ") for problem in error.problems
        ), error.problems
        event("refused: not TOML" if "TOML" in str(error) or "UTF-8" in str(error) else "refused")
        return
    event("loaded")
    assert isinstance(profile, Profile)
    # The text kept in the journal, validated again at replay, gives the same profile.
    assert profile_from_toml(read_profile_text(path), str(path)) == profile
    for bet in exact_odds(full_shoe(profile.decks), profile).bets.values():
        float(bet.house_edge)  # what `shoe odds` prints
    try:
        records = list(replay_shoe(new_shoe(profile.decks, seed=7), profile))
    except ShoeError:
        return
    assert records[-1]["type"] == "shoe_end"
    dealer = ShoeDealer(profile.shoe_rules)
    for card in new_shoe(profile.decks, seed=7):
        rounds = [e for e in dealer.feed_card(card) if isinstance(e, RoundComplete)]
        if rounds:
            settle(rounds[0].result, {name: Decimal("123.45") for name in profile.bets}, profile)
            return
        if dealer.finished:
            return


@FUZZ
@given(data=st.binary(max_size=2000))
@example(data=b'name = "\xff"')
@example(data=b"decks = " + b"{a=" * 2000)
@example(data=b"decks = " + b"9" * 5000)
def test_profile_any_bytes(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "table.toml"
    path.write_bytes(data)
    check_profile(path)


@FUZZ
@given(data=mutated(PROFILE_SEEDS))
def test_profile_mutated_documents(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "table.toml"
    path.write_bytes(data)
    check_profile(path)


@FUZZ
@given(document=profile_documents)
@example(
    document={"allow_player_edge": True, "bets": {"b": {"wins_on": "banker", "pays": "1e999999"}}}
)
@example(document={"bets": {"b": {"wins_on": "banker", "pays": "1e999999999"}}})
@example(document={"bets": {"b": {"wins_on": "banker", "pays": "1e-999999"}}})
def test_profile_structured(tmp_path: Path, document: dict[str, Any]) -> None:
    path = tmp_path / "table.toml"
    path.write_text(toml_document(document), encoding="utf-8")
    check_profile(path)


@FUZZ
@given(
    text=st.text(max_size=300) | mutated(PROFILE_SEEDS).map(lambda b: b.decode("utf-8", "replace"))
)
@example(text="decks = " + "[" * 3000)
def test_journalled_profile_text(text: str) -> None:
    """A profile's text as the journal keeps it (re-validated on replay): only ProfileError."""
    try:
        profile = profile_from_toml(text, "<journalled profile>")
    except ProfileError:
        return
    exact_odds(full_shoe(profile.decks), profile)


# -- shoe files ---------------------------------------------------------------------------------

_CARD_CODE = re.compile(r"(?:[A2-9TJQK]|10)[SHDC]", re.IGNORECASE | re.ASCII)


def reference_tokens(text: str) -> list[tuple[int, str]]:
    """The format as docs/cards.py state it, independently: (line number, token) in order."""
    found = []
    for number, line in enumerate(text.split("\n"), start=1):
        found.extend((number, token) for token in line.split("#", 1)[0].split())
    return found


def check_shoe_text(text: str) -> None:
    try:
        cards = parse_shoe(text, "shoe.txt")
    except (ShoeFileError, CardCodeError) as exc:
        event("refused")
        bad = [(n, t) for n, t in reference_tokens(text) if not _CARD_CODE.fullmatch(t)]
        assert bad, f"refused a valid shoe: {exc}"
        number, token = bad[0]
        assert str(exc).startswith(f"shoe.txt:{number}: bad card code {token!r}"), (
            str(exc),
            bad[0],
        )
        return
    event("loaded")
    tokens = [t for _, t in reference_tokens(text)]
    assert all(_CARD_CODE.fullmatch(t) for t in tokens), tokens  # nothing else is accepted
    assert len(cards) == len(tokens)
    assert [c.code for c in cards] == [t.upper().replace("10", "T") for t in tokens]
    assert parse_shoe(format_shoe(cards)) == cards
    try:
        list(replay_shoe(cards, load_profile("punto-banco-8d")))
    except ShoeError:
        pass


shoe_alphabet = st.sampled_from(
    list("A23456789TJQKSHDCshdc10 \t\r\n#x")
    + ["\x0c", "\x1c", "\u0131", "\u017f", "\u212a", "\ufeff"]
)
shoe_texts = st.one_of(
    st.text(max_size=400),
    st.text(shoe_alphabet, max_size=400),
    st.lists(
        st.sampled_from([c.code for c in new_shoe(1, seed=3)] + ["10h", "as", "#x\n", "\n"]),
        max_size=120,
    ).map(" ".join),
)


@FUZZ
@given(text=shoe_texts)
@example(text="A\u017f")  # long s upper-cases to S: was accepted as the ace of spades
@example(text="AS\x1cKD")  # \x1c is a line break to splitlines() but not to an editor
def test_shoe_text(text: str) -> None:
    check_shoe_text(text)


@FUZZ
@given(data=st.binary(max_size=1000) | shoe_texts.map(lambda t: t.encode("utf-8", "surrogatepass")))
@example(data=b"\xef\xbb\xbfAS KD")  # a UTF-8 byte-order mark, as Notepad writes
@example(data=b"\xef")  # half a byte-order mark: was read as an empty shoe (found by atheris)
def test_shoe_file_any_bytes(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "shoe.txt"
    path.write_bytes(data)
    try:
        cards = read_shoe_file(path)
    except (ShoeFileError, CardCodeError):
        return
    text = data.decode("utf-8-sig")  # what loads is UTF-8 ...
    assert cards == parse_shoe(text.replace("\r\n", "\n").replace("\r", "\n"))  # ... read whole
    assert all(isinstance(card, Card) for card in cards)


@pytest.mark.parametrize("data", [b"\xef", b"\xef\xbb", b"AS\n\xef\xbb"])
def test_a_partial_byte_order_mark_is_not_utf8(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "shoe.txt"
    path.write_bytes(data)
    with pytest.raises(ShoeFileError, match="cannot read shoe file"):
        read_shoe_file(path)
    assert [c.code for c in parse_shoe("AS\r\nKD\r9H")] == ["AS", "KD", "9H"]


def test_a_bom_starts_a_shoe_file_like_nothing(tmp_path: Path) -> None:
    path = tmp_path / "shoe.txt"
    path.write_bytes(b"\xef\xbb\xbfAS KD\n")
    assert [c.code for c in read_shoe_file(path)] == ["AS", "KD"]


@pytest.mark.parametrize("token", ["A\u017f", "K\u017f", "\uff21S", "AS\u0301"])
def test_only_ascii_card_codes(token: str) -> None:
    with pytest.raises(ShoeFileError):
        parse_shoe(token)


def test_line_numbers_count_newlines_only() -> None:
    # splitlines() also broke lines at \x0c, \x1c, \x85, \u2028...: "line 3" was really line 1.
    with pytest.raises(ShoeFileError, match=r"^shoe\.txt:2: bad card code 'XX'"):
        parse_shoe("AS\x0cKD\x1c9H\nXX\n", "shoe.txt")
    assert [c.code for c in parse_shoe("AS\x0cKD\x1c9H\r\n10c")] == ["AS", "KD", "9H", "TC"]
