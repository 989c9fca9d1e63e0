"""Whole training scripts in fixtures/scripts: the buggy ones give exactly the marked findings
with the default rule set, the fixed ones none."""

from __future__ import annotations

import pytest

from conftest import FIXTURES, codes_at
from torchdoctor.config import Config
from torchdoctor.engine import lint_source
from torchdoctor.project import ProjectIndex
from torchdoctor.rule import expected_findings, rules_by_code

SCRIPTS = sorted((FIXTURES / "scripts").glob("*.py"))


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: p.name)
def test_script_findings_match_markers(path):
    source = path.read_text()
    expected = sorted(expected_findings(source))
    unknown = {code for _, code in expected if code not in rules_by_code()}
    assert not unknown, f"markers name rules that do not exist: {unknown}"
    if path.stem.endswith("_buggy"):
        assert expected, "a buggy script must mark its bugs"
    else:
        assert path.stem.endswith("_fixed") and not expected
    rules = [rules_by_code()[c] for c in Config(root=FIXTURES).rules_for(path)]
    result = lint_source(source, str(path), rules, ProjectIndex())
    assert not result.internal_errors
    assert codes_at(result.findings) == expected


def test_every_buggy_script_has_a_fixed_twin():
    buggy = {p.stem.removesuffix("_buggy") for p in SCRIPTS if p.stem.endswith("_buggy")}
    fixed = {p.stem.removesuffix("_fixed") for p in SCRIPTS if p.stem.endswith("_fixed")}
    assert buggy == fixed and len(buggy) >= 3
