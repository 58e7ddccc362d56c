"""The table's state diagram, generated from the machine definition itself (Mermaid).

``python -m shoe_controller.table.diagram`` prints it; the README embeds the output between
``<!-- state-diagram -->`` markers and a test fails when the two drift apart
(``python -m shoe_controller.table.diagram --update-readme README.md`` rewrites the README).
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from transitions.extensions import HierarchicalGraphMachine

from shoe_controller.table.game import Game
from shoe_controller.table.machine import ALARM_STATES, ALARM_TRANSITIONS, machine_definition

BEGIN, END = "<!-- state-diagram -->", "<!-- /state-diagram -->"


class _GraphState(HierarchicalGraphMachine.state_cls):  # type: ignore[name-defined,misc]
    separator = "."


class _GraphMachine(HierarchicalGraphMachine):  # type: ignore[misc]
    state_cls = _GraphState


def _mermaid(states: list, transitions: list, initial: str, title: str) -> str:
    class Model:
        pass

    model = Model()
    _GraphMachine(
        model=model, states=states, transitions=transitions, initial=initial,
        auto_transitions=False, graph_engine="mermaid", title=title,
    )
    text = str(model.get_graph().draw(None))  # type: ignore[attr-defined]
    # Mermaid ids may not contain dots; keep the dotted names as labels.
    text = re.sub(r"(?<=[\w])\.(?=[a-z_])", "__", text)
    text = re.sub(r'state "([^"]+)" as (\S+)', lambda m: f'state "{m[1]}" as {m[2]}', text)
    # Drop the live-state colouring: the README shows the machine, not one moment of it.
    lines = [line for line in text.splitlines()
             if not line.strip().startswith(("classDef", "Class "))]
    return "\n".join(line.rstrip() for line in lines if line.strip()) + "\n"


def table_diagram(game: Game) -> str:
    states, transitions = machine_definition(game)
    return _mermaid(states, transitions, "no_shoe", "Table (shoe life and rounds)")


def alarm_diagram() -> str:
    return _mermaid(list(ALARM_STATES), list(ALARM_TRANSITIONS), "ok", "Error latch")


def readme_block(game: Game) -> str:
    return (f"{BEGIN}\n```mermaid\n{table_diagram(game)}```\n\n```mermaid\n{alarm_diagram()}```\n"
            f"{END}")


def update_readme(path: Path, game: Game) -> bool:
    text = path.read_text(encoding="utf-8")
    start, end = text.index(BEGIN), text.index(END) + len(END)
    new = text[:start] + readme_block(game) + text[end:]
    path.write_text(new, encoding="utf-8")
    return new != text


def main(argv: list[str] | None = None) -> int:
    from shoe_controller.games.registry import create_game

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--update-readme", type=Path)
    parser.add_argument("--profile", default="punto-banco-8d")
    args = parser.parse_args(argv)
    game = create_game(args.profile)
    if args.update_readme:
        update_readme(args.update_readme, game)
    else:
        sys.stdout.write(table_diagram(game) + "\n" + alarm_diagram())
    return 0


if __name__ == "__main__":
    sys.exit(main())
