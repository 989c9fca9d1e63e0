"""Report torchdoctor's findings per rule on a folder of real-world code (the regression corpus).

    python benchmarks/corpus_report.py /path/to/corpus [--select ALL] [--show TD001] [--json out.json]

Prints, per rule, how many findings and in how many files; `--show CODE` lists each finding of
that rule with its source line, for judging true and false positives by hand. The corpus itself
(public projects) is never committed.
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
import time
from pathlib import Path

from torchdoctor.config import ConfigFinder, validate_selectors
from torchdoctor.discovery import discover
from torchdoctor.runner import run_tasks
from torchdoctor.tasks import Task
from torchdoctor.rule import all_rules


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--select", default="ALL")
    parser.add_argument("--show", action="append", default=[])
    parser.add_argument("--json", type=Path)
    parser.add_argument("--jobs", type=int, default=None)
    args = parser.parse_args()

    codes = validate_selectors(tuple(args.select.split(",")), "--select")
    rules = [r.code for r in all_rules() if any(r.code.startswith(c) or c == "ALL" for c in codes)]
    files = discover([args.folder], ConfigFinder())
    start = time.perf_counter()
    results = run_tasks([Task(str(f), tuple(rules)) for f in files], args.jobs)
    elapsed = time.perf_counter() - start
    lines = sum(len(f.read_bytes().splitlines()) for f in files)
    findings = [f for r in results for f in r.result.findings if not f.suppressed]
    errors = [e for r in results for e in r.result.internal_errors]

    by_rule = collections.Counter(f.code for f in findings)
    files_by_rule = collections.defaultdict(set)
    for f in findings:
        files_by_rule[f.code].add(f.path)
    print(f"{len(files)} files, {lines} lines, {elapsed:.1f}s, {len(errors)} internal errors")
    for e in errors[:20]:
        print("  internal:", e)
    for code in sorted(by_rule):
        print(f"{code}: {by_rule[code]} findings in {len(files_by_rule[code])} files")
    for code in args.show:
        print(f"\n== {code}")
        for f in findings:
            if f.code == code:
                try:
                    text = Path(f.path).read_text().splitlines()[f.line - 1].strip()
                except (OSError, IndexError):
                    text = ""
                print(f"{f.path}:{f.line}: {text}\n    {f.message}")
    if args.json:
        args.json.write_text(json.dumps([f.to_dict() for f in findings], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
