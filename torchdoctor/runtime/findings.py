"""What the runtime companion reports: findings, the JSON report and the terminal summary."""

from __future__ import annotations

import json
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, Any

SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}


@dataclass
class RuntimeFinding:
    check: str  # the check id users filter by: "device-mismatch", "grad-explosion", ...
    severity: str  # "error" | "warning" | "info"
    message: str  # what happened, where, since when, what to change
    module: str | None = None  # qualified name inside the watched model: "encoder.layers.3.attn"
    step: int | None = None  # optimizer step at which it was first seen
    details: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def report_document(findings: list[RuntimeFinding], steps: int, device: str) -> dict[str, Any]:
    import torch

    return {
        "findings": [f.to_dict() for f in sorted_findings(findings)],
        "steps": steps,
        "torch": torch.__version__,
        "device": device,
    }


def sorted_findings(findings: list[RuntimeFinding]) -> list[RuntimeFinding]:
    return sorted(findings, key=lambda f: (SEVERITY_ORDER.get(f.severity, 9), f.step if f.step is not None else -1, f.check))


def write_report(path: str | Path, findings: list[RuntimeFinding], steps: int, device: str) -> None:
    Path(path).write_text(json.dumps(report_document(findings, steps, device), indent=2, default=str) + "\n")


def print_summary(findings: list[RuntimeFinding], steps: int, device: str, out: IO[str] | None = None) -> None:
    """A short rich summary on stderr: one block per finding, then a count."""
    from rich.console import Console
    from rich.markup import escape

    out = out or sys.stderr
    console = Console(file=out, highlight=False, soft_wrap=True)
    style = {"error": "bold red", "warning": "yellow", "info": "cyan"}
    header = f"torchdoctor watched {steps} step{'s' if steps != 1 else ''} on {device}"
    if not findings:
        console.print(f"[green]{escape(header)}: no findings.[/]")
        return
    console.print(f"[bold]{escape(header)}: {len(findings)} finding{'s' if len(findings) != 1 else ''}[/]")
    for f in sorted_findings(findings):
        where = f" in [bold]{escape(f.module)}[/]" if f.module else ""
        when = f" (step {f.step})" if f.step is not None else ""
        console.print(f"  [{style.get(f.severity, 'white')}]{f.check}[/]{where}{when}: {escape(f.message)}")
