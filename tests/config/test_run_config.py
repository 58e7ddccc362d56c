"""shoe_controller.config: the `shoe run` TOML file, overrides, validation and PIN hashes."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shoe_controller.config import (
    MIN_PIN_DIGITS,
    MIN_PIN_ITERATIONS,
    RESERVED_ACTORS,
    TABLE_DOWN_POLICIES,
    RunConfig,
    check_pin,
    durability_warning,
    hash_pin,
    load_run_config,
)
from shoe_controller.errors import ConfigError

FAST = MIN_PIN_ITERATIONS  # the smallest accepted work factor keeps the tests quick
ALICE = hash_pin("471100", salt=bytes(range(16)), iterations=FAST)


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "table.toml"
    path.write_text(text, encoding="utf-8")
    return path


VALID = f"""
device = "socket://127.0.0.1:7000"
profile = "punto-banco-8d"
journal = "journals/table-7.db"
betting_seconds = 20
shoes = 3
log_json = true
log_level = "DEBUG"
heartbeat_seconds = 0.25
link_timeout_seconds = 1.5
durability = "normal"
table_id = "table-7"

[supervisors]
alice = "{ALICE}"
"""


def problems_of(path: Path | None, overrides: dict[str, object] | None = None) -> list[str]:
    with pytest.raises(ConfigError) as info:
        load_run_config(path, overrides or {})
    lines = str(info.value).splitlines()
    assert lines[0] == f"{len(lines) - 1} problem(s) in the run configuration:"
    return [line.strip() for line in lines[1:]]


def test_a_valid_file_gives_every_value(tmp_path: Path) -> None:
    config = load_run_config(write(tmp_path, VALID), {})
    assert config == RunConfig(
        device="socket://127.0.0.1:7000",
        profile="punto-banco-8d",
        journal=tmp_path / "journals/table-7.db",  # relative to the file, not the cwd
        betting_seconds=20.0,
        shoes=3,
        log_json=True,
        log_level="debug",
        heartbeat_seconds=0.25,
        link_timeout_seconds=1.5,
        durability="normal",
        table_id="table-7",
        supervisors={"alice": ALICE},
    )
    assert isinstance(config.betting_seconds, float)


def test_defaults_and_command_line_only(tmp_path: Path) -> None:
    config = load_run_config(
        None, {"device": "usb://1a2b:3C4d", "profile": "ez", "journal": "j.db", "shoes": None}
    )
    assert config.journal == Path("j.db")
    assert (config.betting_seconds, config.shoes, config.log_json) == (15.0, None, False)
    assert (config.log_level, config.durability, config.table_id) == ("info", "full", "table-1")
    assert (config.heartbeat_seconds, config.link_timeout_seconds) == (0.5, 2.0)
    assert dict(config.supervisors) == {}


def test_overrides_win_and_none_means_not_given(tmp_path: Path) -> None:
    path = write(tmp_path, VALID)
    config = load_run_config(
        path, {"device": "loop://", "journal": "/tmp/x.db", "shoes": None, "log_json": False}
    )
    assert config.device == "loop://"
    assert config.journal == Path("/tmp/x.db")
    assert config.shoes == 3  # None: the file's value stays
    assert config.log_json is False


def test_config_is_frozen(tmp_path: Path) -> None:
    config = load_run_config(write(tmp_path, VALID), {})
    with pytest.raises(AttributeError):
        config.device = "x"  # type: ignore[misc]
    with pytest.raises(TypeError):
        config.supervisors["mallory"] = "x"  # type: ignore[index]


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ('device = ""', "device: must not be empty"),
        ("device = 5", "device: must be a string, got a number (5)"),
        ('device = "usb://12ab:34"', "device: a USB device is usb://VID:PID"),
        ('profile = ["a"]', "profile: must be a string, got a list"),
        ("journal = 3", "journal: must be a file path (a string)"),
        ("betting_seconds = -1", "betting_seconds: must be >= 0, got -1"),
        ('betting_seconds = "15"', "betting_seconds: must be a number of seconds"),
        ("betting_seconds = nan", "betting_seconds: must be finite"),
        ("shoes = 0", "shoes: must be at least 1"),
        ("shoes = 1.5", "shoes: must be a whole number of shoes"),
        ("shoes = true", "shoes: must be a whole number of shoes, got a boolean"),
        ('log_json = "yes"', "log_json: must be true or false, got a string ('yes')"),
        ('log_level = "verbose"', "log_level: must be one of debug, info, warning, error"),
        ("heartbeat_seconds = 0", "heartbeat_seconds: must be > 0, got 0"),
        ("link_timeout_seconds = 0.4", "link_timeout_seconds: must be at least 2 x heartbeat"),
        ("link_timeout_seconds = 0.6", "link_timeout_seconds: must be at least 2 x heartbeat"),
        ('durability = "sometimes"', "durability: must be one of full, normal"),
        ('table_id = " "', "table_id: must not be empty"),
        ('supervisors = "alice"', "supervisors: must be a table of id = PIN hash"),
    ],
)
def test_each_bad_value_is_named_with_file_and_key(
    tmp_path: Path, line: str, expected: str
) -> None:
    base = 'device = "loop://"\nprofile = "p"\njournal = "j.db"\n'
    key = line.split(" =")[0]
    text = "\n".join(x for x in base.splitlines() if not x.startswith(key + " ")) + "\n" + line
    path = write(tmp_path, text)
    problems = problems_of(path)
    assert len(problems) == 1, problems
    assert problems[0].startswith(f"{path}: {expected}"), problems[0]


def test_all_problems_are_reported_together(tmp_path: Path) -> None:
    path = write(tmp_path, 'profil = "x"\nshoes = 0\nlog_level = "loud"\n')
    problems = problems_of(path)
    assert f"{path}: profil: unknown key (did you mean 'profile'?)" in problems
    for key in ("device", "profile", "journal"):
        assert f"{path}: {key}: required (set it in the file or with --{key})" in problems
    assert any(p.startswith(f"{path}: shoes:") for p in problems)
    assert any(p.startswith(f"{path}: log_level:") for p in problems)
    assert len(problems) == 6


@pytest.mark.parametrize(
    ("key", "suggestion"),
    [
        ("betting_secs", "betting_seconds"),
        ("log-json", "log_json"),
        ("durabilty", "durability"),
        ("heartbeat", "heartbeat_seconds"),
    ],
)
def test_unknown_keys_suggest_the_closest(tmp_path: Path, key: str, suggestion: str) -> None:
    path = write(tmp_path, f'"{key}" = 1\n' + VALID)
    assert problems_of(path) == [f"{path}: {key}: unknown key (did you mean {suggestion!r}?)"]


def test_unknown_key_without_a_close_match(tmp_path: Path) -> None:
    path = write(tmp_path, VALID.replace("[supervisors]", "colour = 1\n[supervisors]"))
    assert problems_of(path) == [f"{path}: colour: unknown key"]


def test_override_problems_name_the_command_line(tmp_path: Path) -> None:
    problems = problems_of(write(tmp_path, VALID), {"betting_seconds": -2.0, "camera": "x"})
    assert "command line: betting_seconds: must be >= 0, got -2.0" in problems
    assert "command line: camera: unknown key" in problems


def test_missing_required_without_a_file(tmp_path: Path) -> None:
    assert problems_of(None, {"device": "loop://"}) == [
        "command line: profile: required (set it in the file or with --profile)",
        "command line: journal: required (set it in the file or with --journal)",
    ]


def test_unreadable_files_are_clear(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no such configuration file"):
        load_run_config(tmp_path / "missing.toml", {})
    with pytest.raises(ConfigError, match=r"table.toml: not valid TOML: .*line 1"):
        load_run_config(write(tmp_path, "device = \n"), {})


def test_plain_text_pins_are_refused_with_how_to_hash(tmp_path: Path) -> None:
    path = write(tmp_path, VALID.replace(f'alice = "{ALICE}"', 'alice = "4711"\nbob = 1234'))
    problems = problems_of(path)
    assert problems[0].startswith(f"{path}: supervisors.alice: looks like a plain-text PIN")
    assert "shoe hash-pin" in problems[0]
    assert problems[1].startswith(f"{path}: supervisors.bob: must be a PIN hash string")


def test_weak_or_malformed_pin_hashes_are_refused(tmp_path: Path) -> None:
    weak = hash_pin("135790", iterations=1000)
    path = write(tmp_path, VALID.replace(ALICE, weak) + 'bob = "pbkdf2_sha256$x$y$z"\n')
    problems = problems_of(path)
    assert "supervisors.alice: 1000 PBKDF2 iterations are too few" in problems[0]
    assert "supervisors.bob: not a valid pbkdf2_sha256$<iterations>" in problems[1]


def test_pin_hash_round_trip() -> None:
    stored = hash_pin("246800", iterations=FAST)
    assert stored.startswith(f"pbkdf2_sha256${FAST}$")
    assert check_pin(stored, "246800")
    assert not check_pin(stored, "246801")
    assert not check_pin(stored, "")
    assert not check_pin("garbage", "246800")
    assert not check_pin(stored + "\n", "246800")  # the whole value, not a prefix
    assert hash_pin("246800", iterations=FAST) != stored  # a fresh salt every time
    assert check_pin(ALICE, "471100")
    with pytest.raises(ConfigError, match="must not be empty"):
        hash_pin("")


def test_the_example_in_the_docs_is_valid(tmp_path: Path) -> None:
    doc = (Path(__file__).resolve().parents[2] / "docs/config.md").read_text(encoding="utf-8")
    example = doc.split("```toml\n", 1)[1].split("```", 1)[0]
    path = write(tmp_path, example)
    config = load_run_config(path, {})
    assert config.journal == tmp_path / "journals/table-7.db"
    assert check_pin(config.supervisors["alice"], "258046")
    assert check_pin(config.supervisors["bob"], "147036")
    documented = {line.split("`")[1] for line in doc.splitlines() if line.startswith("| `")}
    tables = {"supervisors", "wheel"}
    assert documented == set(RunConfig.__dataclass_fields__) - tables | {f"[{t}]" for t in tables}


def test_hash_pin_command(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``python -m shoe_controller.config hash-pin`` is ``shoe hash-pin``: at a terminal the
    PIN is asked twice without echo; the config's PIN rule refuses a short one."""
    import getpass
    import io
    import sys

    from shoe_controller import config

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    answers = iter(["975310", "975310", "975310", "999999", "9753"])
    monkeypatch.setattr(sys, "stdin", Terminal())
    monkeypatch.setattr(getpass, "getpass", lambda prompt: next(answers))
    monkeypatch.setattr(config, "PIN_ITERATIONS", FAST)
    monkeypatch.setattr(config.hash_pin, "__defaults__", (None, FAST))
    assert config._hash_pin_command(["hash-pin"]) == 0
    assert check_pin(capsys.readouterr().out.strip(), "975310")
    assert config._hash_pin_command(["hash-pin"]) == 1
    assert "differ" in capsys.readouterr().err
    assert config._hash_pin_command(["hash-pin"]) == 1  # refused before it asks again
    err = capsys.readouterr().err
    assert "at least 6 digits" in err and "9753" not in err
    with pytest.raises(SystemExit) as usage:
        config._hash_pin_command(["hash-pin", "--no-such-option"])
    assert usage.value.code == 2


# -- the link's timings: validated by building the link's own settings -------------------------


def test_link_timeout_just_above_the_heartbeat_is_refused_in_the_file(tmp_path: Path) -> None:
    # Passed validation before, then LinkConfig raised with a traceback at start.
    path = write(tmp_path, VALID.replace("heartbeat_seconds = 0.25", "heartbeat_seconds = 0.5")
                 .replace("link_timeout_seconds = 1.5", "link_timeout_seconds = 0.6"))
    assert problems_of(path) == [
        f"{path}: link_timeout_seconds: must be at least 2 x heartbeat_seconds (0.6 < 2 x 0.5)"
    ]


def test_a_heartbeat_alone_is_checked_against_the_default_timeout(tmp_path: Path) -> None:
    base = 'device = "loop://"\nprofile = "p"\njournal = "j.db"\n'
    path = write(tmp_path, base + "heartbeat_seconds = 1.5\n")
    assert problems_of(path) == [
        f"{path}: link_timeout_seconds: must be at least 2 x heartbeat_seconds (2.0 < 2 x 1.5)"
    ]
    assert problems_of(None, {"device": "loop://", "profile": "p", "journal": "j.db",
                              "heartbeat_seconds": 1.5}) == [
        "command line: link_timeout_seconds: must be at least 2 x heartbeat_seconds (2.0 < 2 x 1.5)"
    ]


@settings(max_examples=200, deadline=None)
@given(
    heartbeat=st.floats(1e-6, 1e6) | st.sampled_from([0.5, 1.0, 2.0]),
    timeout=st.floats(1e-6, 1e6) | st.sampled_from([0.6, 1.0, 0.999, 2.0]),
)
def test_the_file_passes_exactly_when_the_link_can_be_built(
    heartbeat: float, timeout: float
) -> None:
    from firmware_protocol.link import LinkConfig
    from shoe_controller.table.runtime import link_config

    overrides = {"device": "loop://", "profile": "p", "journal": "j.db",
                 "heartbeat_seconds": heartbeat, "link_timeout_seconds": timeout}
    try:
        LinkConfig(heartbeat_interval=heartbeat, link_timeout=timeout)
        link_ok = True
    except ValueError:
        link_ok = False
    try:
        config = load_run_config(None, overrides)
    except ConfigError as exc:
        assert not link_ok, exc
        assert "link_timeout_seconds" in str(exc) or "heartbeat_seconds" in str(exc)
        return
    assert link_ok
    assert link_config(config) == config.link_config()  # what `shoe run` builds


# -- supervisors: PIN rule and reserved ids ----------------------------------------------------


def test_min_pin_digits() -> None:
    assert MIN_PIN_DIGITS == 6
    assert check_pin(hash_pin("000000", iterations=FAST), "000000")
    assert check_pin(hash_pin("12345678901234", iterations=FAST), "12345678901234")


@pytest.mark.parametrize(
    ("pin", "message"),
    [
        ("", "must not be empty"),
        ("12345", "at least 6 digits, got 5"),
        ("4711", "at least 6 digits, got 4"),
        ("12345a", "digits only"),
        ("123 456", "digits only"),
        (" 123456", "digits only"),
        ("\u0661\u0662\u0663\u0664\u0665\u0666", "digits only"),  # Arabic-Indic: not 0-9
        ("\u00b2\u00b3\u00b9456", "digits only"),  # superscripts are str.isdigit() too
    ],
)
def test_hash_pin_refuses_short_or_non_digit_pins(pin: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message) as info:
        hash_pin(pin, iterations=FAST)
    if pin:
        assert pin not in str(info.value)  # a PIN is never echoed


@pytest.mark.parametrize(
    "name",
    ["table-system", "table_system", "Table_System", "TABLE.SYSTEM", "tablesystem", "timer",
     "Timer", "camera", "scanner", "supervisor", "system", "controller", "shoe", "dealer",
     "admin", "ROOT"],
)
def test_reserved_actor_names_are_refused_as_supervisor_ids(tmp_path: Path, name: str) -> None:
    path = write(tmp_path, VALID + f'"{name}" = "{ALICE}"\n')
    (problem,) = problems_of(path)
    assert problem.startswith(f"{path}: supervisors.{name}: {name!r} is reserved"), problem


def test_the_reserved_names_cover_every_actor_the_controller_uses() -> None:
    assert {"table-system", "table_system", "timer", "camera", "scanner", "system",
            "controller", "shoe", "dealer", "supervisor", "admin"} <= set(RESERVED_ACTORS)
    from shoe_controller.table import controller, inputs

    assert controller.TABLE_SYSTEM in RESERVED_ACTORS
    assert inputs.BettingCommand.__dataclass_fields__["origin"].default in RESERVED_ACTORS
    assert inputs.CardDrawn.__dataclass_fields__["source"].default in RESERVED_ACTORS


def test_ordinary_ids_near_reserved_ones_are_fine(tmp_path: Path) -> None:
    text = VALID + "".join(f'{name} = "{ALICE}"\n' for name in ("timer2", "shoe-boss", "systems"))
    assert set(load_run_config(write(tmp_path, text), {}).supervisors) == {
        "alice", "timer2", "shoe-boss", "systems"}


def test_a_supervisor_id_is_matched_whole(tmp_path: Path) -> None:
    # '$' in the old pattern also matched before a final newline.
    path = write(tmp_path, VALID + f'"bob\\n" = "{ALICE}"\n"carol " = "{ALICE}"\n')
    assert problems_of(path) == [
        f"{path}: supervisors.'bob\\n': supervisor id must be 1-64 letters, digits, '.', '_', '-'",
        f"{path}: supervisors.'carol ': supervisor id must be 1-64 letters, digits, '.', '_', '-'",
    ]
    path = write(tmp_path, VALID.replace(f'alice = "{ALICE}"', f'alice = "{ALICE}\\n"'))
    (problem,) = problems_of(path)
    assert "supervisors.alice: not a valid pbkdf2_sha256" in problem


# -- durability --------------------------------------------------------------------------------


def test_durability_warning_names_the_risk(tmp_path: Path) -> None:
    config = load_run_config(write(tmp_path, VALID), {})
    assert config.durability == "normal"
    warning = durability_warning(config)
    assert warning is not None
    for words in ("fsync", "acknowledged to the shoe before it is on disk", "power cut",
                  'durability = "full"'):
        assert words in warning
    assert durability_warning(load_run_config(write(tmp_path, VALID), {"durability": "full"})) \
        is None


# -- what the file decoder must survive (found by tests/fuzz/test_file_decoders_fuzz.py) -------


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b'device = "\xff"\n', "not UTF-8 text (byte 0xff at offset 10)"),
        (b"device = " + b"[" * 3000, "not valid TOML: arrays or tables nested too deeply"),
        (b"shoes = " + b"9" * 5000, "not valid TOML: Exceeds the limit (4300 digits)"),
    ],
)
def test_files_that_crashed_the_reader_are_config_errors(
    tmp_path: Path, data: bytes, expected: str
) -> None:
    path = tmp_path / "table.toml"
    path.write_bytes(data)
    with pytest.raises(ConfigError) as info:
        load_run_config(path, {})
    assert str(info.value).startswith(f"{path}: {expected}"), str(info.value)


def test_a_byte_order_mark_is_ignored(tmp_path: Path) -> None:
    path = tmp_path / "table.toml"
    path.write_bytes(b"\xef\xbb\xbf" + VALID.encode())
    assert load_run_config(path, {}).device == "socket://127.0.0.1:7000"


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("heartbeat_seconds = " + "9" * 400,
         "heartbeat_seconds: must be finite, got a number (with about 400 digits)"),  # Overflow
        ('journal = "~nosuchuser4711/j.db"', "journal: cannot expand '~nosuchuser4711/j.db'"),
        ('journal = "j\\u0000.db"',  # a NUL would fail only at start, in the OS call
         "journal: must not contain control or invisible characters, got '\\x00' at position 1"),
        ('device = "/dev/tty\\nACM0"', "device: must not contain control or invisible"),
        ('table_id = "table\\u200b7"', "table_id: must not contain control or invisible"),
        ('"bad\\nkey" = 1', "'bad\\nkey': unknown key"),  # one problem, one line
    ],
)
def test_values_that_crashed_or_passed_wrongly(tmp_path: Path, line: str, expected: str) -> None:
    base = 'device = "loop://"\nprofile = "p"\njournal = "j.db"\n'
    key = line.split(" =")[0]
    text = "\n".join(x for x in base.splitlines() if not x.startswith(key + " ")) + "\n" + line
    path = write(tmp_path, text)
    problems = problems_of(path)
    assert len(problems) == 1, problems
    assert problems[0].startswith(f"{path}: {expected}"), problems[0]


def test_table_down_policies_are_defined_here() -> None:
    assert TABLE_DOWN_POLICIES == ("keep-dealing", "stop-after-round")
