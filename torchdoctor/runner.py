"""Lint many files: in parallel processes when there are many, in a stable order, with fixes."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import libcst as cst

from torchdoctor.engine import FileResult, Finding, apply_edits, lint_source, unreadable_file
from torchdoctor.tasks import Task
from torchdoctor.project import ProjectIndex
from torchdoctor.rule import rules_by_code
from torchdoctor.sources import read_source, write_source

PARALLEL_THRESHOLD = 24  # below this, starting worker processes costs more than it saves
MAX_FIX_ROUNDS = 8


@dataclass
class TaskResult:
    result: FileResult
    original: str | None = None  # set when fixes changed the file
    fixed_source: str | None = None
    fixed: list[Finding] = field(default_factory=list)
    from_cache: bool = False
    encoding: str = "utf-8"  # how the file was read, and how a fix is written back


_project: ProjectIndex | None = None


def _project_index() -> ProjectIndex:
    global _project
    if _project is None:
        _project = ProjectIndex()
    return _project


def run_task(task: Task) -> TaskResult:
    by_code = rules_by_code()
    rules = [by_code[c] for c in task.codes]
    try:
        source, encoding = read_source(task.path)
    except (OSError, UnicodeDecodeError, SyntaxError) as exc:
        return TaskResult(unreadable_file(task.path, exc))
    result = lint_source(source, task.path, rules, _project_index())
    if not task.fix or not any(f.fix and not f.suppressed for f in result.findings):
        return TaskResult(result)
    current, all_fixed = source, []
    for _ in range(MAX_FIX_ROUNDS):
        candidate, fixed = apply_edits(current, result.findings)
        if not fixed:
            break
        try:
            cst.parse_module(candidate)
        except cst.ParserSyntaxError:
            result.internal_errors.append(f"{task.path}: a fix produced invalid code; fixes were not applied")
            return TaskResult(lint_source(source, task.path, rules, _project_index()))
        current = candidate
        all_fixed.extend(fixed)
        result = lint_source(current, task.path, rules, _project_index())
    if current == source:
        return TaskResult(result)
    return TaskResult(result, original=source, fixed_source=current, fixed=all_fixed, encoding=encoding)


def default_jobs() -> int:
    return max(1, min(os.cpu_count() or 1, 8))


def run_tasks(tasks: list[Task], jobs: int | None = None) -> list[TaskResult]:
    """Results in the order of `tasks`, whatever the number of processes."""
    jobs = default_jobs() if jobs is None else max(1, jobs)
    if jobs == 1 or len(tasks) < PARALLEL_THRESHOLD:
        return [run_task(t) for t in tasks]
    from concurrent.futures import ProcessPoolExecutor  # only when there are enough files to share

    chunksize = max(1, len(tasks) // (jobs * 8))
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(run_task, tasks, chunksize=chunksize))


def write_fixes(results: list[TaskResult]) -> None:
    for r in results:
        if r.fixed_source is not None:
            write_source(r.result.path, r.fixed_source, r.encoding)
