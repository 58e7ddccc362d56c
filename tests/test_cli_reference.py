"""The README's command reference is what ``--help`` says, and ``--help`` says it well."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from shoe_controller.cli import build_parser, iter_parsers
from shoe_controller.cli_reference import commands, readme_block

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_command_reference_is_the_help() -> None:
    assert readme_block() in README.read_text(encoding="utf-8"), (
        "README command reference is stale: run "
        "python -m shoe_controller.cli_reference --update-readme README.md"
    )


def test_every_command_is_in_the_reference() -> None:
    names = {name for name, _, _ in commands()}
    assert {"shoe demo", "shoe journal verify", "shoe journal export", "shoe journal recall",
            "shoe vision enroll", "shoe table-sim", "shoe hash-pin"} <= names
    text = README.read_text(encoding="utf-8")
    for name, purpose, _ in commands():
        assert f"#### {name}\n" in text and purpose, name


def _leaf_ids() -> list[str]:
    return [name for name, _, _ in commands()]


@pytest.mark.parametrize("name", _leaf_ids())
def test_every_option_is_explained(name: str) -> None:
    """Help on every option and argument; metavars are words, never argparse's upper-cased
    dest (``--profile PROFILE``, ``--journal JOURNAL``): ``NAME``, ``FILE``, ``SECONDS``..."""
    (parser,) = [p for n, _, p in commands() if n == name]
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        label = "/".join(action.option_strings) or action.dest
        assert action.help, f"{name} {label}: no help"
        if action.option_strings and action.nargs != 0 and action.choices is None:
            assert action.metavar, f"{name} {label}: shows argparse's {action.dest.upper()}"


def test_help_shows_defaults_one_way() -> None:
    """``(default: X)`` after the help, never argparse's ``(default: None)`` noise."""
    for path, parser in iter_parsers(build_parser()):
        text = parser.format_help()
        assert "(default: None)" not in text and "(default: False)" not in text, path
        assert "(default: )" not in text, path
    (journal_recall,) = [p for n, _, p in commands() if n == "shoe journal recall"]
    assert "how many rounds (default: 10)" in " ".join(journal_recall.format_help().split())
