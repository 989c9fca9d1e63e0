"""docs/rules/ is generated from the rule modules; it must never be stale."""

from conftest import REPO
from torchdoctor.docs import catalog_path, expected_catalog, expected_docs
from torchdoctor.rule import all_rules


def test_rule_docs_are_up_to_date():
    folder = REPO / "docs" / "rules"
    stale = [
        name for name, text in expected_docs().items()
        if not (folder / name).is_file() or (folder / name).read_text(encoding="utf-8") != text
    ]
    assert not stale, f"regenerate with `python -m torchdoctor.docs`: stale {stale}"
    extra = {p.name for p in folder.glob("*.md")} - set(expected_docs())
    assert not extra, f"docs for rules that no longer exist: {extra}"


def test_every_rule_has_a_page_with_all_sections():
    for rule in all_rules():
        page = (REPO / "docs" / "rules" / f"{rule.code}.md").read_text()
        for section in ("## What it does", "## Why is this bad?", "## Example", "## Use instead", "## Fix safety"):
            assert section in page, (rule.code, section)
        assert "# expect:" not in page


def test_rule_catalog_is_up_to_date():
    """Selection and the cache read the catalog instead of importing every rule: it must match them."""
    assert catalog_path().read_text(encoding="utf-8") == expected_catalog(), "regenerate with `python -m torchdoctor.docs`"
