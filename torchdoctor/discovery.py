"""Which files `torchdoctor lint PATH...` looks at."""

from __future__ import annotations

import os
from pathlib import Path

from torchdoctor.config import ConfigFinder

SKIPPED_FOLDERS = {
    ".git", ".hg", ".svn", ".venv", "venv", ".tox", ".nox", ".eggs", ".mypy_cache", ".pytest_cache",
    ".ruff_cache", ".torchdoctor_cache", "__pycache__", "__pypackages__", "build", "dist",
    "node_modules", "site-packages", ".ipynb_checkpoints", "_build", "buck-out",
}


class PathNotFound(Exception):
    pass


def discover(paths: list[Path], configs: ConfigFinder) -> list[Path]:
    """Python files under `paths`, sorted, without skipped folders and configured excludes.

    Files named explicitly are linted unless the configuration excludes them, so a
    pre-commit run that passes every staged file still honours `exclude`.
    """
    found: set[Path] = set()
    for path in paths:
        if not path.exists():
            raise PathNotFound(str(path))
        if path.is_file():
            if not configs.for_path(path).excludes(path):
                found.add(path)
            continue
        for folder, dirnames, filenames in os.walk(path):
            here = Path(folder)
            dirnames[:] = sorted(
                d for d in dirnames
                if d not in SKIPPED_FOLDERS
                and not (here / d / "pyvenv.cfg").exists()
                and not configs.for_path(here / d).excludes(here / d)
            )
            for name in filenames:
                if name.endswith(".py"):
                    file = here / name
                    if not configs.for_path(file).excludes(file):
                        found.add(file)
    return sorted(found)
