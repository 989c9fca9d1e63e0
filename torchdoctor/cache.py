"""A content-hash cache of lint results, so a second run over unchanged files is nearly free.

An entry is keyed by the file's content, its selected rules, the configuration
and the torchdoctor version; it also records the hashes of the other project
files the rules consulted (a model class in `models.py`), and is stale as soon
as any of them changes.
"""

from __future__ import annotations

import hashlib
import os
import pickle
from pathlib import Path

from torchdoctor import __version__
from typing import TYPE_CHECKING

from torchdoctor.config import ConfigFinder
from torchdoctor.results import content_hash

if TYPE_CHECKING:
    from torchdoctor.runner import Task, TaskResult

CACHE_FOLDER = ".torchdoctor_cache"


class ResultCache:
    def __init__(self, folder: Path, salt: str) -> None:
        self.folder = folder
        self.salt = salt
        self.file = folder / f"lint-{__version__}-v2.pickle"
        self.entries: dict[str, tuple[str, object]] = self._load()
        self._dirty = False
        self._hashes: dict[str, str | None] = {}

    @classmethod
    def for_configs(cls, configs: ConfigFinder, files: list[Path]) -> "ResultCache":
        config = configs.for_path(files[0]) if files else configs.for_path(Path.cwd())
        root = config.root if config.source is not None else Path.cwd()
        folder = Path(config.cache_dir) if config.cache_dir else root / CACHE_FOLDER
        if not folder.is_absolute():
            folder = root / folder
        return cls(folder, _rules_fingerprint())

    def _load(self) -> dict:
        try:
            with open(self.file, "rb") as fh:
                data = pickle.load(fh)
            return data if isinstance(data, dict) else {}
        except (OSError, pickle.PickleError, EOFError, AttributeError, ImportError, ValueError):
            return {}

    def _key(self, task: Task, source_hash: str) -> str:
        raw = f"{self.salt}|{task.codes}|{source_hash}"
        return hashlib.blake2b(raw.encode(), digest_size=16).hexdigest()

    def run(self, tasks: list[Task], jobs: int | None) -> list[TaskResult]:
        results: list[TaskResult | None] = [None] * len(tasks)
        misses: list[int] = []
        keys: list[str | None] = [None] * len(tasks)
        stamps: list[tuple | None] = [None] * len(tasks)
        for i, task in enumerate(tasks):
            path = os.path.abspath(task.path)
            entry = self.entries.get(path)
            digest = self._unchanged_digest(path, entry)
            if digest is None:
                try:
                    digest = content_hash(Path(task.path).read_bytes().decode("utf-8"))
                except (OSError, UnicodeDecodeError):
                    misses.append(i)
                    continue
            stamps[i] = (_stamp(path), digest)
            keys[i] = self._key(task, digest)
            if entry is not None and entry[0] == keys[i] and self._dependencies_unchanged(entry[1]):
                results[i] = _CachedResult(entry[1])
                if entry[2:] != stamps[i]:
                    self.entries[path] = (keys[i], entry[1], *stamps[i])
                    self._dirty = True
            else:
                misses.append(i)
        fresh = []
        if misses:
            from torchdoctor.runner import run_tasks  # libcst and the rules load only when something changed

            fresh = run_tasks([tasks[i] for i in misses], jobs)
        for i, result in zip(misses, fresh):
            results[i] = result
            if keys[i] is not None and not result.result.internal_errors:
                self.entries[os.path.abspath(tasks[i].path)] = (keys[i], result.result, *stamps[i])
                self._dirty = True
        if self._dirty:
            self._save()
        return results  # type: ignore[return-value]

    @staticmethod
    def _unchanged_digest(path: str, entry) -> str | None:
        """The content hash recorded for this file, if its size and mtime say it was not touched since
        (git's index trick: reading and hashing every file is the slow part of a cached run)."""
        if entry is None or len(entry) < 4:
            return None
        stamp = _stamp(path)
        return entry[3] if stamp is not None and stamp == entry[2] else None

    def _dependencies_unchanged(self, result) -> bool:
        """Every other project file the result depended on still has the content it had (hashed once per run)."""
        return all(_hash_of(path, self._hashes) == digest for path, digest in result.dependencies.items())

    def _save(self) -> None:
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            ignore = self.folder / ".gitignore"
            if not ignore.exists():
                ignore.write_text("# created by torchdoctor\n*\n")
            import tempfile

            fd, tmp = tempfile.mkstemp(dir=self.folder, suffix=".tmp")
            with os.fdopen(fd, "wb") as fh:
                pickle.dump(self.entries, fh, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, self.file)
        except OSError:
            pass  # a read-only tree still lints; it just does not cache


def _stamp(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size)


class _CachedResult:
    """A cached FileResult in the shape of a runner TaskResult (no fixes: --fix never uses the cache)."""

    def __init__(self, result) -> None:
        self.result = result
        self.original = self.fixed_source = None
        self.fixed: list = []
        self.from_cache = True


def _hash_of(path: str, memo: dict[str, str | None]) -> str | None:
    if path not in memo:
        try:
            memo[path] = content_hash(Path(path).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError):
            memo[path] = None
    return memo[path]


def _rules_fingerprint() -> str:
    """Changes when any rule or engine module changes, not only with the version number."""
    import importlib.util

    import torchdoctor

    digest = hashlib.blake2b(digest_size=16)
    rules = importlib.util.find_spec("torchdoctor.rules")
    folders = [Path(torchdoctor.__file__).parent]
    if rules is not None and rules.submodule_search_locations:
        folders += [Path(p) for p in rules.submodule_search_locations]
    for folder in folders:
        for file in sorted(folder.glob("*.py")):
            stat = file.stat()
            digest.update(f"{file.name}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    return f"{__version__}:{digest.hexdigest()}"
