"""Rule documentation, generated from the rule modules (the single source of truth).

`docs/rules/TDxxx.md` are written by `python -m torchdoctor.docs`; a test fails
when they are stale.
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

from torchdoctor.rule import Rule, all_rules


def rule_markdown(rule: type[Rule]) -> str:
    fix_safety = (
        "A safe fix is available: `torchdoctor lint --fix` applies it; `--diff` shows it first."
        if rule.fixed is not None
        else "No automatic fix: the change depends on intent. The message says what to change."
    )
    parts = [
        f"# {rule.code} {rule.name}",
        "",
        f"Severity: **{rule.severity}**" + ("" if rule.severity != "info" else " (off by default; enable with `--select " + rule.code + "`)"),
        "",
        "## What it does",
        "",
        rule.summary + ".",
        "",
        "## Why is this bad?",
        "",
        textwrap.dedent(rule.rationale).strip(),
        "",
        "## Example",
        "",
        "```python",
        rule.without_markers(rule.example("bad")).rstrip(),
        "```",
        "",
        "## Use instead",
        "",
        "```python",
        rule.example("good").rstrip(),
        "```",
        "",
        "## How to fix",
        "",
        rule.fix_hint,
        "",
        "## Fix safety",
        "",
        fix_safety,
    ]
    if rule.fixed is not None:
        parts += ["", "With the fix applied, the example reads:", "", "```python", rule.example("fixed").rstrip(), "```"]
    parts += [
        "",
        "## Suppressing",
        "",
        f"Add `# noqa: {rule.code}` to the flagged line, or list `{rule.code}` under `ignore` or `per-file-ignores` in `[tool.torchdoctor]`.",
        "",
    ]
    return "\n".join(parts)


def rules_index_markdown() -> str:
    rows = ["# Rules", "", "| code | name | severity | fixable | what it flags |", "|---|---|---|---|---|"]
    for r in all_rules():
        rows.append(f"| [{r.code}]({r.code}.md) | {r.name} | {r.severity} | {'yes' if r.fixed else ''} | {r.summary} |")
    return "\n".join(rows) + "\n"


def expected_docs() -> dict[str, str]:
    docs = {f"{r.code}.md": rule_markdown(r) for r in all_rules()}
    docs["README.md"] = rules_index_markdown()
    return docs


def expected_catalog() -> str:
    import json

    from torchdoctor.rule import catalog_entries

    return json.dumps(catalog_entries(all_rules()), indent=1) + "\n"


def catalog_path() -> Path:
    import torchdoctor.rules

    return Path(torchdoctor.rules.__path__[0]) / "catalog.json"


def write_docs(folder: Path) -> list[str]:
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in expected_docs().items():
        target = folder / name
        if not target.exists() or target.read_text(encoding="utf-8") != text:
            target.write_text(text, encoding="utf-8")
            written.append(name)
    return written


if __name__ == "__main__":
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("docs/rules")
    changed = write_docs(out)
    if not catalog_path().exists() or catalog_path().read_text(encoding="utf-8") != expected_catalog():
        catalog_path().write_text(expected_catalog(), encoding="utf-8")
        changed.append(str(catalog_path()))
    print(f"{len(changed)} file(s) written")
