from pathlib import Path

from shoe_controller.games.registry import create_game
from shoe_controller.table.diagram import readme_block

README = Path(__file__).resolve().parents[2] / "README.md"


def test_readme_shows_the_machine_as_it_is() -> None:
    assert readme_block(create_game("punto-banco-8d")) in README.read_text(encoding="utf-8"), (
        "README state diagram is stale: run "
        "python -m shoe_controller.table.diagram --update-readme README.md"
    )
