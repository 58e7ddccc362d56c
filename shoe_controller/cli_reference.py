"""The README's command reference, generated from the ``shoe`` parsers so it cannot drift.

``python -m shoe_controller.cli_reference`` prints it; the README embeds it between
``<!-- cli-reference -->`` markers, and a test fails when the two differ
(``python -m shoe_controller.cli_reference --update-readme README.md`` rewrites the README),
the way the state diagram is kept (``shoe_controller.table.diagram``).

What it shows is ``--help`` itself: a table of commands, then every command's and
sub-command's help text, formatted at a fixed width so the output does not depend on the
terminal it was made in.
"""

from __future__ import annotations

import argparse
import functools
import sys
from pathlib import Path

from shoe_controller.cli import HelpFormatter, build_parser, iter_parsers

BEGIN, END = "<!-- cli-reference -->", "<!-- /cli-reference -->"
WIDTH = 100
"""Columns the help is wrapped at (the README's code blocks; a terminal's is its own)."""


def commands() -> list[tuple[str, str, argparse.ArgumentParser]]:
    """``("shoe journal verify", one-line help, parser)`` for every command that does
    something (the leaves of the tree), in the order ``shoe --help`` lists them."""
    leaves = []
    helps: dict[tuple[str, ...], str] = {}
    for path, parser in iter_parsers(build_parser()):
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        for sub in subs:  # the one-line help ``shoe --help`` shows beside each name
            helps.update({(*path, c.dest): c.help or "" for c in sub._choices_actions})
        if path and not subs:
            parser.formatter_class = functools.partial(HelpFormatter, width=WIDTH)
            leaves.append((" ".join(("shoe", *path)), helps.get(path, ""), parser))
    return leaves


def reference() -> str:
    """The Markdown between the markers (without them)."""
    rows = ["| Command | Purpose |", "|---|---|"]
    sections = []
    for name, purpose, parser in commands():
        anchor = name.replace(" ", "-")
        rows.append(f"| [`{name}`](#{anchor}) | {purpose} |")
        sections.append(f"#### {name}\n\n```text\n{parser.format_help().rstrip()}\n```\n")
    return "\n".join(rows) + "\n\n" + "\n".join(sections)


def readme_block() -> str:
    return f"{BEGIN}\n{reference()}{END}"


def update_readme(path: Path) -> bool:
    """Rewrite the block between the markers in ``path``; True if it changed."""
    text = path.read_text(encoding="utf-8")
    start, end = text.index(BEGIN), text.index(END) + len(END)
    new = text[:start] + readme_block() + text[end:]
    path.write_text(new, encoding="utf-8")
    return new != text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--update-readme", type=Path, metavar="README",
                        help="rewrite the block between the markers in this file")
    args = parser.parse_args(argv)
    if args.update_readme:
        update_readme(args.update_readme)
    else:
        sys.stdout.write(reference())
    return 0


if __name__ == "__main__":
    sys.exit(main())
