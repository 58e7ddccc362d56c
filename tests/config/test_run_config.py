"""shoe_controller.config: the `shoe run` TOML file, overrides, validation and PIN hashes."""

from __future__ import annotations

from pathlib import Path

import pytest

from shoe_controller.config import (
    MIN_PIN_ITERATIONS,
    RunConfig,
    check_pin,
    hash_pin,
    load_run_config,
)
from shoe_controller.errors import ConfigError

FAST = MIN_PIN_ITERATIONS  # the smallest accepted work factor keeps the tests quick
ALICE = hash_pin("4711", salt=bytes(range(16)), iterations=FAST)


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
        ("link_timeout_seconds = 0.4", "link_timeout_seconds: must be longer than heartbeat"),
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
    assert "python -m shoe_controller.config hash-pin" in problems[0]
    assert problems[1].startswith(f"{path}: supervisors.bob: must be a PIN hash string")


def test_weak_or_malformed_pin_hashes_are_refused(tmp_path: Path) -> None:
    weak = hash_pin("1", iterations=1000)
    path = write(tmp_path, VALID.replace(ALICE, weak) + 'bob = "pbkdf2_sha256$x$y$z"\n')
    problems = problems_of(path)
    assert "supervisors.alice: 1000 PBKDF2 iterations are too few" in problems[0]
    assert "supervisors.bob: not a valid pbkdf2_sha256$<iterations>" in problems[1]


def test_pin_hash_round_trip() -> None:
    stored = hash_pin("2468", iterations=FAST)
    assert stored.startswith(f"pbkdf2_sha256${FAST}$")
    assert check_pin(stored, "2468")
    assert not check_pin(stored, "2469")
    assert not check_pin(stored, "")
    assert not check_pin("garbage", "2468")
    assert hash_pin("2468", iterations=FAST) != stored  # a fresh salt every time
    assert check_pin(ALICE, "4711")
    with pytest.raises(ConfigError, match="must not be empty"):
        hash_pin("")


def test_the_example_in_the_docs_is_valid(tmp_path: Path) -> None:
    doc = (Path(__file__).resolve().parents[2] / "docs/config.md").read_text(encoding="utf-8")
    example = doc.split("```toml\n", 1)[1].split("```", 1)[0]
    path = write(tmp_path, example)
    config = load_run_config(path, {})
    assert config.journal == tmp_path / "journals/table-7.db"
    assert check_pin(config.supervisors["alice"], "2580")
    assert check_pin(config.supervisors["bob"], "1470")
    documented = {line.split("`")[1] for line in doc.splitlines() if line.startswith("| `")}
    assert documented == set(RunConfig.__dataclass_fields__) - {"supervisors"} | {"[supervisors]"}


def test_hash_pin_command(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from shoe_controller import config

    answers = iter(["9753", "9753", "9753", "9999"])
    monkeypatch.setattr(config.getpass, "getpass", lambda prompt: next(answers))
    monkeypatch.setattr(config, "PIN_ITERATIONS", FAST)
    monkeypatch.setattr(config.hash_pin, "__defaults__", (None, FAST))
    assert config._hash_pin_command(["hash-pin"]) == 0
    assert check_pin(capsys.readouterr().out.strip(), "9753")
    assert config._hash_pin_command(["hash-pin"]) == 1
    assert "differ" in capsys.readouterr().err
    assert config._hash_pin_command([]) == 2
