"""What linting produces: findings, fixes, per-file results. Light on purpose: the result cache
loads these without importing libcst, so a run over unchanged files starts in a blink."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field


def content_hash(source: str) -> str:
    return hashlib.blake2b(source.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


@dataclass(frozen=True)
class Edit:
    start: int  # character offsets into the source
    end: int
    content: str
    line: int
    column: int
    end_line: int
    end_column: int


@dataclass(frozen=True)
class Fix:
    description: str
    edits: tuple[Edit, ...]

    def to_dict(self) -> dict:
        return {
            "description": self.description,
            "edits": [
                {
                    "content": e.content,
                    "location": {"line": e.line, "column": e.column},
                    "end_location": {"line": e.end_line, "column": e.end_column},
                }
                for e in self.edits
            ],
        }


@dataclass
class Finding:
    code: str
    name: str
    severity: str
    path: str
    line: int  # 1-based
    column: int  # 1-based
    end_line: int
    end_column: int
    message: str
    fix: Fix | None = None
    suppressed: bool = False

    def sort_key(self):
        return (self.path, self.line, self.column, self.code, self.message)

    def to_dict(self) -> dict:
        return {
            "code": self.code,
            "name": self.name,
            "severity": self.severity,
            "path": self.path,
            "line": self.line,
            "column": self.column,
            "end_line": self.end_line,
            "end_column": self.end_column,
            "message": self.message,
            "fix": self.fix.to_dict() if self.fix else None,
            "suppressed": self.suppressed,
        }


@dataclass
class FileResult:
    path: str
    findings: list[Finding] = field(default_factory=list)
    internal_errors: list[str] = field(default_factory=list)
    dependencies: dict[str, str] = field(default_factory=dict)  # other project files consulted -> hash
