"""The rule format and the registry that discovers the rule pack.

A rule is one module in `rules/` (shipped as `torchdoctor.rules`) holding one
`Rule` subclass: its code, name, severity, message, rationale, a bad and a good
example, and its check. Tests and docs are generated from those attributes, so
adding a rule means adding one file.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
import textwrap
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, ClassVar, Iterable, Iterator

if TYPE_CHECKING:
    import libcst as cst

    from torchdoctor.context import LintContext

SEVERITIES = ("error", "warning", "info")
EXPECT_MARKER = re.compile(r"\s*# expect: (TD\d{3}(?:, TD\d{3})*)\s*$")


@dataclass(frozen=True)
class Report:
    """What a check yields: the node to flag, the message, and an optional safe fix."""

    node: cst.CSTNode
    message: str
    replace: tuple[cst.CSTNode, cst.CSTNode] | None = None  # (old node, new node)


class Rule:
    """Base class of every rule. Subclasses fill in the class attributes and `check`."""

    code: ClassVar[str]
    name: ClassVar[str]
    severity: ClassVar[str]  # "error" | "warning" | "info"
    summary: ClassVar[str]  # one line for `torchdoctor rules`
    rationale: ClassVar[str]  # why it matters: the "Why is this bad?" section
    bad: ClassVar[str]  # lines carrying `# expect: TDxxx` must be flagged, nothing else
    good: ClassVar[str]  # must stay silent
    fixed: ClassVar[str | None] = None  # what `--fix` turns `bad` into, for fixable rules
    fix_hint: ClassVar[str]  # what to change, for the docs and `explain`
    # Source snippets at least one of which must appear in a file for the rule to possibly fire;
    # files mentioning none are not even parsed for this rule. Empty means always run.
    triggers: ClassVar[tuple[str, ...]] = ()

    @property
    def fixable(self) -> bool:
        return self.fixed is not None

    def check(self, ctx: "LintContext") -> Iterable[Report]:
        raise NotImplementedError

    @classmethod
    def example(cls, which: str) -> str:
        return textwrap.dedent(getattr(cls, which)).lstrip("\n")

    @staticmethod
    def without_markers(source: str) -> str:
        return "\n".join(EXPECT_MARKER.sub("", line) for line in source.splitlines()) + "\n"


def expected_findings(source: str) -> list[tuple[int, str]]:
    """(line, code) pairs marked in a fixture with a trailing `# expect: TD001, TD005` comment."""
    out = []
    for lineno, line in enumerate(source.splitlines(), 1):
        m = EXPECT_MARKER.search(line)
        if m:
            out.extend((lineno, code.strip()) for code in m.group(1).split(","))
    return out


@lru_cache(maxsize=1)
def all_rules() -> tuple[type[Rule], ...]:
    """Every rule in the pack, sorted by code. Discovery is automatic: one file, one rule."""
    import torchdoctor.rules as pack

    found: list[type[Rule]] = []
    for info in sorted(pkgutil.iter_modules(pack.__path__), key=lambda m: m.name):
        if not info.name.startswith("td"):
            continue
        module = importlib.import_module(f"{pack.__name__}.{info.name}")
        rules = [
            obj
            for obj in vars(module).values()
            if isinstance(obj, type) and issubclass(obj, Rule) and obj is not Rule and obj.__module__ == module.__name__
        ]
        if len(rules) != 1:
            raise RuntimeError(f"rule module {info.name} must define exactly one Rule, found {len(rules)}")
        rule = rules[0]
        _validate(rule, info.name)
        found.append(rule)
    found.sort(key=lambda r: r.code)
    codes = [r.code for r in found]
    if len(set(codes)) != len(codes):
        raise RuntimeError(f"duplicate rule codes: {codes}")
    return tuple(found)


def _validate(rule: type[Rule], module_name: str) -> None:
    for attr in ("code", "name", "severity", "summary", "rationale", "bad", "good", "fix_hint"):
        if not getattr(rule, attr, None):
            raise RuntimeError(f"rule {module_name} lacks {attr}")
    if rule.severity not in SEVERITIES:
        raise RuntimeError(f"rule {rule.code}: bad severity {rule.severity!r}")
    expected_module = f"{rule.code.lower()}_{rule.name.replace('-', '_')}"
    if module_name != expected_module:
        raise RuntimeError(f"rule {rule.code} lives in {module_name}.py; name the file {expected_module}.py")


@dataclass(frozen=True)
class RuleInfo:
    """What selection, configuration and listings need of a rule, without importing it."""

    code: str
    name: str
    severity: str
    summary: str
    fixable: bool


CATALOG_FILE = "catalog.json"


def catalog_entries(rules: Iterable[type[Rule]]) -> list[dict]:
    return [
        {"code": r.code, "name": r.name, "severity": r.severity, "summary": r.summary, "fixable": r.fixed is not None}
        for r in rules
    ]


@lru_cache(maxsize=1)
def catalog() -> tuple[RuleInfo, ...]:
    """The rule pack's catalog, generated from the rule modules (`python -m torchdoctor.docs`) and
    checked for staleness by the tests. Reading it costs a file read; importing the rules costs
    libcst (a tenth of a second), which a cached run over unchanged files never needs."""
    import json
    import os

    import torchdoctor.rules as pack

    try:
        with open(os.path.join(pack.__path__[0], CATALOG_FILE), encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        data = catalog_entries(all_rules())
    return tuple(RuleInfo(**entry) for entry in data)


def rules_by_code() -> dict[str, type[Rule]]:
    return {r.code: r for r in all_rules()}


def rule_by_code_or_name(key: str) -> type[Rule] | None:
    for r in all_rules():
        if key.upper() == r.code or key == r.name:
            return r
    return None


def iter_codes() -> Iterator[str]:
    return (r.code for r in all_rules())
