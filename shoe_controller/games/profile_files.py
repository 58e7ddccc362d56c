"""Where table profiles are found, for every game: by name in ``SHOE_PROFILE_PATH``'s
directories and then the game's packaged ones, or by a path; and how a profile file is read.

Each game keeps its own validation (``profile_from_toml``); finding and reading the file is the
same for all of them, and written once here.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from shoe_controller.config import toml_text
from shoe_controller.errors import ConfigError

PROFILE_PATH_ENV = "SHOE_PROFILE_PATH"


def user_profile_dirs() -> list[Path]:
    """The directories named by ``SHOE_PROFILE_PATH`` (``os.pathsep``-separated), in order."""
    return [Path(p) for p in os.environ.get(PROFILE_PATH_ENV, "").split(os.pathsep) if p]


def looks_like_path(name_or_path: str | os.PathLike[str]) -> bool:
    """Whether a profile was given by a file path (``x.toml``, ``dir/x``) rather than a name."""
    text = os.fspath(name_or_path)
    return text.endswith(".toml") or os.sep in text or "/" in text


def profile_files(packaged: Path,
                  accept: Callable[[Path], bool] = lambda path: True) -> dict[str, Path]:
    """Profile name -> file: the user directories' files that ``accept`` takes (a game's own,
    where other games' profiles may sit beside them), then ``packaged``; a user file shadows a
    packaged one of the same name."""
    found: dict[str, Path] = {}
    for directory in [*user_profile_dirs(), packaged]:
        if directory.is_dir():
            for path in sorted(directory.glob("*.toml")):
                if path.stem not in found and (directory == packaged or accept(path)):
                    found[path.stem] = path
    return dict(sorted(found.items()))


def read_profile_text(path: Path) -> str:
    """A profile file's text, read once: UTF-8, a leading byte-order mark dropped.

    Validate and keep (journal) this same text with the game's ``profile_from_toml``, rather
    than reading the file a second time: the file may change in between. Raises the games'
    :class:`~shoe_controller.games.baccarat.profile.ProfileError`.
    """
    from shoe_controller.games.baccarat.profile import ProfileError

    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ProfileError([f"{path}: cannot read profile: {exc.strerror or exc}"]) from exc
    try:
        return toml_text(raw)
    except ConfigError as exc:
        raise ProfileError([f"{path}: {exc}"]) from None
