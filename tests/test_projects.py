"""Whole projects in fixtures/projects: rules that need another file of the project (a model class,
a training loop, a sampler built elsewhere) must see it; markers may sit in any file."""

from __future__ import annotations

import pytest

from conftest import FIXTURES, codes_at
from torchdoctor.config import Config
from torchdoctor.engine import lint_source
from torchdoctor.project import ProjectIndex
from torchdoctor.rule import expected_findings, rules_by_code

PROJECTS = sorted(p for p in (FIXTURES / "projects").iterdir() if p.is_dir())


@pytest.mark.parametrize("project", PROJECTS, ids=lambda p: p.name)
def test_project_findings_match_markers(project):
    index = ProjectIndex()
    for path in sorted(project.rglob("*.py")):
        source = path.read_text()
        rules = [rules_by_code()[c] for c in Config(root=project).rules_for(path)]
        result = lint_source(source, str(path), rules, index)
        assert not result.internal_errors
        assert codes_at(result.findings) == sorted(expected_findings(source)), path.name
