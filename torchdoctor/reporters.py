"""Output formats for lint findings: text (ruff-style), json, sarif, github."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import IO

from torchdoctor import __version__
from torchdoctor.results import Finding

FORMATS = ("text", "json", "sarif", "github")
_SARIF_LEVEL = {"error": "error", "warning": "warning", "info": "note"}
_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}


class _PlainConsole:
    """What `render_text` needs of rich's Console, for piped output: no styling, no rich import."""

    _MARKUP = re.compile(r"\[/?[a-z ]*\]")

    def __init__(self, out: IO[str]) -> None:
        self.out = out

    def print(self, text: str) -> None:
        self.out.write(self._MARKUP.sub("", text).replace("\x00", "[") + "\n")


def _escape(text: str) -> str:
    """User text keeps its brackets: they are hidden from the markup stripper."""
    return text.replace("[", "\x00")


def render_text(findings: list[Finding], out: IO[str], color: bool, files: int, quiet: bool, sources: dict[str, list[str]]) -> None:
    """`path:line:col: CODE message`, then the source line with a caret under the column."""
    if color:
        from rich.console import Console
        from rich.markup import escape

        console = Console(file=out, force_terminal=True, highlight=False, soft_wrap=True)
    else:  # piped: plain text, and rich is not even imported (a pre-commit run pays for every import)
        console, escape = _PlainConsole(out), _escape
    for f in findings:
        console.print(
            f"[bold]{escape(f.path)}[/]:{f.line}:{f.column}: [{_STYLE[f.severity]}]{f.code}[/] {escape(f.message)}"
            + (" [dim](fixable with --fix)[/]" if f.fix else "")
        )
        if quiet:
            continue
        lines = sources.get(f.path)
        if lines and 0 < f.line <= len(lines):
            text = lines[f.line - 1].rstrip("\n").expandtabs(4)
            width = max(1, (f.end_column - f.column) if f.end_line == f.line else len(text) - f.column + 1)
            console.print(f"[dim]{f.line:>5} |[/] {escape(text)}")
            console.print(f"[dim]      |[/] {' ' * (f.column - 1)}[{_STYLE[f.severity]}]{'^' * width}[/]")
    if not quiet or findings:
        console.print(summary_line(findings, files))


def summary_line(findings: list[Finding], files: int) -> str:
    if not findings:
        return f"All checks passed ({files} file{'s' if files != 1 else ''} checked)."
    by_sev = Counter(f.severity for f in findings)
    parts = [f"{by_sev[s]} {s}{'s' if by_sev[s] != 1 else ''}" for s in ("error", "warning", "info") if by_sev[s]]
    fixable = sum(1 for f in findings if f.fix)
    files_with = len({f.path for f in findings})
    text = (
        f"Found {len(findings)} finding{'s' if len(findings) != 1 else ''} ({', '.join(parts)}) "
        f"in {files_with} of {files} file{'s' if files != 1 else ''}."
    )
    if fixable:
        text += f" {fixable} fixable with `--fix`."
    return text


def render_statistics(findings: list[Finding], out: IO[str]) -> None:
    counts = Counter((f.code, f.name) for f in findings)
    fixable = Counter(f.code for f in findings if f.fix)
    for (code, name), n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        out.write(f"{n:>6}  {code}  {name}{'  [*]' if fixable[code] else ''}\n")


def render_json(findings: list[Finding], out: IO[str]) -> None:
    json.dump([f.to_dict() for f in findings], out, indent=2)
    out.write("\n")


def render_github(findings: list[Finding], out: IO[str]) -> None:
    level = {"error": "error", "warning": "warning", "info": "notice"}
    for f in findings:
        message = f"{f.code} {f.message}".replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
        out.write(
            f"::{level[f.severity]} title=torchdoctor ({f.code}),file={f.path},line={f.line},"
            f"col={f.column},endLine={f.end_line},endColumn={f.end_column}::{message}\n"
        )


def sarif_document(findings: list[Finding]) -> dict:
    """SARIF 2.1.0, as GitHub code scanning reads it."""
    from torchdoctor.rule import all_rules

    rules = all_rules()
    index = {r.code: i for i, r in enumerate(rules)}
    descriptors = [
        {
            "id": r.code,
            "name": r.name,
            "shortDescription": {"text": r.summary},
            "fullDescription": {"text": " ".join(r.rationale.split())},
            "helpUri": f"https://github.com/torchdoctor/torchdoctor/blob/main/docs/rules/{r.code}.md",
            "help": {"text": r.fix_hint},
            "defaultConfiguration": {"level": _SARIF_LEVEL[r.severity]},
            "properties": {"tags": [r.severity]},
        }
        for r in rules
    ]
    results = []
    for f in findings:
        result = {
            "ruleId": f.code,
            "level": _SARIF_LEVEL[f.severity],
            "message": {"text": f.message},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": {"uri": Path(f.path).as_posix(), "uriBaseId": "%SRCROOT%"},
                        "region": {
                            "startLine": f.line,
                            "startColumn": f.column,
                            "endLine": f.end_line,
                            "endColumn": f.end_column,
                        },
                    }
                }
            ],
        }
        if f.code in index:
            result["ruleIndex"] = index[f.code]
        results.append(result)
    return {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "torchdoctor",
                        "version": __version__,
                        "informationUri": "https://github.com/torchdoctor/torchdoctor",
                        "rules": descriptors,
                    }
                },
                "results": results,
            }
        ],
    }


def render_sarif(findings: list[Finding], out: IO[str]) -> None:
    json.dump(sarif_document(findings), out, indent=2)
    out.write("\n")
