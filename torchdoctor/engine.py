"""Lint one file: parse once, compute facts once, run every selected rule.

Positions are resolved only for files that have findings: most files have
none, and libcst's position provider walks the whole tree.
"""

from __future__ import annotations

import re
from contextlib import nullcontext
from pathlib import Path
from typing import Iterable, Sequence

import libcst as cst

from torchdoctor.context import LintContext
from torchdoctor.facts import FileFacts
from torchdoctor.project import ProjectIndex
from torchdoctor.results import Edit, FileResult, Finding, Fix
from torchdoctor.rule import Report, Rule

__all__ = ["Edit", "FileResult", "Finding", "Fix", "lint_source", "apply_edits", "applicable_rules"]

SYNTAX_ERROR = ("TD000", "syntax-error", "error")
_NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Z]+\d+(?:\s*,\s*[A-Z]+\d+)*))?", re.IGNORECASE)


def applicable_rules(source: str, rules: Sequence[type[Rule]]) -> list[type[Rule]]:
    """Rules that could fire on this source, judged by their trigger words alone."""
    return [r for r in rules if not r.triggers or any(t in source for t in r.triggers)]


def lint_source(
    source: str,
    path: str,
    rules: Sequence[type[Rule]],
    project: ProjectIndex | None = None,
) -> FileResult:
    result = FileResult(path)
    active = applicable_rules(source, rules)
    if not active:
        _report_syntax_error_cheaply(source, path, result)
        return result
    try:
        module = cst.parse_module(source)
    except cst.ParserSyntaxError as exc:
        # CPython's own parser places and words syntax errors best; libcst's is the fallback.
        if not _report_syntax_error_cheaply(source, path, result):
            result.findings.append(_syntax_finding(path, exc.raw_line, exc.raw_column + 1, exc.message))
        return result
    except RecursionError:
        result.internal_errors.append(f"{path}: too deeply nested to parse")
        return result
    facts = FileFacts(module, source, path)
    if project is not None:
        project.consulted.clear()
    ctx = LintContext(facts, project)
    reports: list[tuple[type[Rule], Report]] = []
    with project.lending(facts) if project is not None else nullcontext():
        for rule in active:
            try:
                reports.extend((rule, r) for r in rule().check(ctx) or ())
            except Exception as exc:  # one broken rule must not stop the run
                result.internal_errors.append(f"{path}: internal error in {rule.code} ({rule.name}): {type(exc).__name__}: {exc}")
    if project is not None:
        result.dependencies = {str(p): h for p, h in project.consulted.items() if str(p) != str(Path(path).resolve())}
    if reports:
        result.findings = _locate(module, source, path, reports)
    return result


def _report_syntax_error_cheaply(source: str, path: str, result: FileResult) -> bool:
    """Report a syntax error found by CPython's parser (fast, no libcst tree); True if one was."""
    try:
        compile(source, path, "exec", flags=0x400, dont_inherit=True)  # ast.PyCF_ONLY_AST
    except SyntaxError as exc:
        result.findings.append(_syntax_finding(path, exc.lineno or 1, exc.offset or 1, exc.msg))
        return True
    except (ValueError, RecursionError, MemoryError):
        pass
    return False


def _syntax_finding(path: str, line: int, column: int, message: str, what: str = "syntax error") -> Finding:
    first_line = message.strip().splitlines()[0] if message.strip() else "invalid syntax"
    code, name, severity = SYNTAX_ERROR
    return Finding(code, name, severity, path, line, column, line, column, f"{what}: {first_line}")


def unreadable_file(path: str, exc: Exception) -> FileResult:
    """A file that cannot be read or decoded (a macOS `._name.py` resource fork, a Latin-1 file without
    an encoding line): a TD000 finding at its first line, like a file that does not parse."""
    result = FileResult(path)
    if isinstance(exc, (UnicodeDecodeError, SyntaxError)):
        reason = "not valid UTF-8, and no `# -*- coding: ... -*-` line names another encoding"
    else:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    result.findings.append(_syntax_finding(path, 1, 1, reason, "cannot read the file"))
    return result


def _locate(module: cst.Module, source: str, path: str, reports: list[tuple[type[Rule], Report]]) -> list[Finding]:
    from libcst.metadata import MetadataWrapper, PositionProvider  # only files with findings need positions

    positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    lines = source.splitlines()
    offsets = _line_offsets(source)
    findings = []
    seen = set()
    for rule, report in reports:
        pos = positions.get(report.node)
        if pos is None:
            continue
        key = (rule.code, pos.start.line, pos.start.column, report.message)
        if key in seen:
            continue
        seen.add(key)
        fix = None
        if report.replace is not None:
            old, new = report.replace
            old_pos = positions.get(old)
            if old_pos is not None:
                edit = Edit(
                    offsets[old_pos.start.line - 1] + old_pos.start.column,
                    offsets[old_pos.end.line - 1] + old_pos.end.column,
                    module.code_for_node(new),
                    old_pos.start.line,
                    old_pos.start.column + 1,
                    old_pos.end.line,
                    old_pos.end.column + 1,
                )
                fix = Fix(rule.fix_hint.split(". ")[0].rstrip("."), (edit,))
        finding = Finding(
            rule.code,
            rule.name,
            rule.severity,
            path,
            pos.start.line,
            pos.start.column + 1,
            pos.end.line,
            pos.end.column + 1,
            report.message,
            fix,
        )
        finding.suppressed = _suppressed(lines, finding)
        findings.append(finding)
    findings.sort(key=Finding.sort_key)
    return findings


def _line_offsets(source: str) -> list[int]:
    offsets = [0]
    for line in source.splitlines(keepends=True):
        offsets.append(offsets[-1] + len(line))
    return offsets


def _suppressed(lines: list[str], finding: Finding) -> bool:
    for lineno in {finding.line, finding.end_line}:
        if not 0 < lineno <= len(lines):
            continue
        m = _NOQA.search(lines[lineno - 1])
        if m is None:
            continue
        codes = m.group("codes")
        if codes is None:
            return True
        if finding.code in {c.strip().upper() for c in codes.split(",")}:
            return True
    return False


def apply_edits(source: str, findings: Iterable[Finding]) -> tuple[str, list[Finding]]:
    """Apply non-overlapping fixes of unsuppressed findings; returns the new source and what was fixed."""
    chosen: list[tuple[Edit, Finding]] = []
    taken: list[tuple[int, int]] = []
    for f in sorted(findings, key=Finding.sort_key):
        if f.fix is None or f.suppressed:
            continue
        if any(not (e.end <= s or e.start >= t) for e in f.fix.edits for s, t in taken):
            continue  # overlaps an edit already chosen: the next round gets it
        for e in f.fix.edits:
            chosen.append((e, f))
            taken.append((e.start, e.end))
    fixed = []
    for edit, finding in sorted(chosen, key=lambda pair: pair[0].start, reverse=True):
        source = source[: edit.start] + edit.content + source[edit.end :]
        if finding not in fixed:
            fixed.append(finding)
    return source, fixed
