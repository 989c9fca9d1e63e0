"""Every rule, tested from its own module: bad example flagged at the marked lines, good one silent,
fix reproduces `fixed` and is idempotent; plus the per-rule fixture files in fixtures/rules/<code>/."""

from __future__ import annotations

import libcst as cst
import pytest

from conftest import FIXTURES, codes_at, lint_text
from torchdoctor.engine import apply_edits, lint_source
from torchdoctor.project import ProjectIndex
from torchdoctor.rule import all_rules, expected_findings

RULES = all_rules()


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_bad_example_is_flagged_at_marked_lines(rule):
    source = rule.example("bad")
    expected = [e for e in expected_findings(source) if e[1] == rule.code]
    assert expected, f"{rule.code}: the bad example marks no line with `# expect: {rule.code}`"
    assert codes_at(lint_text(source, select=(rule.code,))) == sorted(expected)


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_good_example_is_silent(rule):
    assert lint_text(rule.example("good"), select=(rule.code,)) == []


@pytest.mark.parametrize("rule", [r for r in RULES if r.fixed is not None], ids=lambda r: r.code)
def test_fix_turns_bad_into_fixed_and_is_idempotent(rule):
    source = rule.without_markers(rule.example("bad"))
    findings = lint_text(source, select=(rule.code,))
    assert any(f.fix for f in findings), f"{rule.code} claims a fix but offered none"
    fixed, _ = apply_edits(source, findings)
    assert fixed == rule.example("fixed")
    cst.parse_module(fixed)
    assert lint_text(fixed, select=(rule.code,)) == []


def _rule_fixture_files():
    for rule in RULES:
        folder = FIXTURES / "rules" / rule.code
        for path in sorted(folder.glob("*.py")) if folder.is_dir() else []:
            yield pytest.param(rule, path, id=f"{rule.code}/{path.name}")


@pytest.mark.parametrize("rule,path", list(_rule_fixture_files()))
def test_rule_fixture(rule, path):
    """`bad_*.py` must carry markers and be flagged exactly there; `good_*.py` must carry none."""
    source = path.read_text()
    expected = sorted(e for e in expected_findings(source) if e[1] == rule.code)
    if path.name.startswith("bad"):
        assert expected, f"{path} is a bad fixture without `# expect: {rule.code}` markers"
    else:
        assert path.name.startswith("good") and not expected
    result = lint_source(source, str(path), [rule], ProjectIndex())
    assert not result.internal_errors
    assert codes_at(f for f in result.findings if not f.suppressed) == expected


def test_every_rule_has_fixtures_beyond_its_examples():
    missing = [r.code for r in RULES if not list((FIXTURES / "rules" / r.code).glob("bad_*.py"))]
    assert not missing, f"rules without bad fixtures: {missing}"
    missing = [r.code for r in RULES if not list((FIXTURES / "rules" / r.code).glob("good_*.py"))]
    assert not missing, f"rules without good fixtures: {missing}"


def test_unwrapped_model_is_named_as_written():
    """`model = model.module` rebinds the same network: the message says `model.eval()`, not an unwrap
    chain expanded from the name's own alias."""
    path = FIXTURES / "rules" / "TD005" / "bad_generate_after_unwrapping_ddp.py"
    (finding,) = lint_text(path.read_text(), select=("TD005",))
    assert "call `model.eval()` first" in finding.message
