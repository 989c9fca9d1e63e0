"""A unit of lint work, as the CLI hands it to the runner or the cache (no heavy imports)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Task:
    path: str
    codes: tuple[str, ...]  # the rules selected for this file
    fix: bool = False
