"""Shared helpers: lint a snippet through the real engine, run the real CLI."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from torchdoctor.cli import main
from torchdoctor.engine import lint_source
from torchdoctor.project import ProjectIndex
from torchdoctor.rule import all_rules, rules_by_code

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "fixtures"


def lint_text(source: str, select: tuple[str, ...] | None = None, path: str = "<string>"):
    """Findings (unsuppressed) for a snippet, with every rule or the selected ones."""
    rules = [rules_by_code()[c] for c in select] if select else list(all_rules())
    result = lint_source(textwrap.dedent(source), path, rules, ProjectIndex())
    assert not result.internal_errors, result.internal_errors
    return [f for f in result.findings if not f.suppressed]


def codes_at(findings) -> list[tuple[int, str]]:
    return sorted((f.line, f.code) for f in findings)


@pytest.fixture
def cli():
    """The real click command in-process; chdir with monkeypatch where the folder matters."""
    runner = CliRunner()
    return lambda *args: runner.invoke(main, list(args), catch_exceptions=False)


def run_torchdoctor(*args: str, cwd: Path | None = None, env=None) -> subprocess.CompletedProcess:
    """The installed command in a real subprocess, as a user or pre-commit runs it."""
    return subprocess.run(
        [sys.executable, "-m", "torchdoctor", *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=120
    )
