"""`[tool.torchdoctor]` in pyproject.toml: found by walking up from each linted path.

Rule selection follows ruff: the default set is every `error` and `warning`
rule; `select` replaces it, `extend-select` adds to it, `ignore` removes from
it, `per-file-ignores` removes per path; `--select` on the command line
replaces the configured selection and `--ignore` adds to the ignores.
Unknown keys, codes and value types are errors, never silently ignored.
"""

from __future__ import annotations

import fnmatch
import os
import tomllib
from functools import lru_cache
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from torchdoctor.rule import RuleInfo, catalog

KNOWN_KEYS = {"select", "extend-select", "ignore", "exclude", "per-file-ignores", "cache-dir"}


class ConfigError(Exception):
    """A user-caused configuration problem: reported in one line, exit code 2."""


@dataclass(frozen=True)
class Config:
    root: Path
    source: Path | None = None  # the pyproject.toml it came from
    select: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    cache_dir: str | None = None

    def rules_for(
        self,
        path: Path,
        cli_select: tuple[str, ...] | None = None,
        cli_ignore: tuple[str, ...] = (),
    ) -> tuple[str, ...]:
        """The codes of the rules that apply to `path`."""
        extra: tuple[str, ...] = ()
        if self.per_file_ignores:
            relative = self.relative(path)
            extra = tuple(c for pattern, codes in self.per_file_ignores if _path_matches(relative, pattern) for c in codes)
        return _selected(self.select, self.extend_select, self.ignore, cli_select, cli_ignore, extra)

    def relative(self, path: Path) -> str:
        # os.path.abspath, not Path.resolve: resolving symlinks costs a stat per path component per file
        absolute = os.path.abspath(path)
        root = _abs_root(self.root)
        if absolute == root or absolute.startswith(root + os.sep):
            return PurePosixPath(os.path.relpath(absolute, root)).as_posix()
        return path.as_posix()

    def excludes(self, path: Path) -> bool:
        relative = self.relative(path)
        return any(_path_matches(relative, pattern) for pattern in self.exclude)

    def fingerprint(self) -> str:
        """What the result cache must be invalidated by."""
        return repr((self.select, self.extend_select, self.ignore, self.per_file_ignores))


@lru_cache(maxsize=256)
def _selected(select, extend_select, ignore, cli_select, cli_ignore, extra_ignore) -> tuple[str, ...]:
    """Rule selection, computed once per distinct combination (not once per file)."""
    rules = catalog()
    chosen_by = cli_select if cli_select else select
    if chosen_by:
        chosen = {r.code for r in rules if any(_matches(r, s) for s in chosen_by)}
    else:
        chosen = {r.code for r in rules if r.severity in ("error", "warning")}
    if not cli_select:
        chosen |= {r.code for r in rules if any(_matches(r, s) for s in extend_select)}
    ignores = tuple(ignore) + tuple(cli_ignore) + tuple(extra_ignore)
    return tuple(r.code for r in rules if r.code in chosen and not any(_matches(r, i) for i in ignores))


@lru_cache(maxsize=64)
def _abs_root(root: Path) -> str:
    return os.path.abspath(root)


def _matches(rule: RuleInfo, selector: str) -> bool:
    return selector == "ALL" or rule.code.startswith(selector) or selector == rule.name


def _path_matches(relative: str, pattern: str) -> bool:
    pattern = pattern.rstrip("/")
    if fnmatch.fnmatch(relative, pattern) or fnmatch.fnmatch(relative, f"{pattern}/*"):
        return True
    if "/" not in pattern:  # a bare name matches any path component, like `tests` or `*_test.py`
        return any(fnmatch.fnmatch(part, pattern) for part in relative.split("/"))
    return False


def validate_selectors(selectors: tuple[str, ...] | list[str], where: str) -> tuple[str, ...]:
    rules = catalog()
    out = []
    for s in selectors:
        if not isinstance(s, str):
            raise ConfigError(f"{where}: expected rule codes as strings, got {s!r}")
        s = s.strip()
        normalized = s if s == "ALL" or "-" in s else s.upper()
        if not any(_matches(r, normalized) for r in rules):
            raise ConfigError(f"{where}: unknown rule code or prefix {s!r} (see `torchdoctor rules`)")
        out.append(normalized)
    return tuple(out)


def _string_list(table: dict, key: str, where: str) -> tuple[str, ...]:
    value = table.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}: `{key}` must be a list of strings, got {value!r}")
    return tuple(value)


def load_config(pyproject: Path) -> Config:
    """Read `[tool.torchdoctor]` from one pyproject.toml."""
    where = str(pyproject)
    try:
        data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"config file not found: {where}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{where}: not valid TOML: {exc}") from None
    table = data.get("tool", {}).get("torchdoctor", {})
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: [tool.torchdoctor] must be a table")
    unknown = sorted(set(table) - KNOWN_KEYS)
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) in [tool.torchdoctor]: {', '.join(unknown)} (known: {', '.join(sorted(KNOWN_KEYS))})")
    ctx = f"{where} [tool.torchdoctor]"
    select = validate_selectors(_string_list(table, "select", ctx), ctx) if "select" in table else None
    pfi = table.get("per-file-ignores", {})
    if not isinstance(pfi, dict):
        raise ConfigError(f"{ctx}: `per-file-ignores` must be a table of pattern = [codes]")
    per_file = tuple(
        (pattern, validate_selectors(_string_list(pfi, pattern, ctx), f"{ctx} per-file-ignores"))
        for pattern in sorted(pfi)
    )
    cache_dir = table.get("cache-dir")
    if cache_dir is not None and not isinstance(cache_dir, str):
        raise ConfigError(f"{ctx}: `cache-dir` must be a string")
    return Config(
        root=pyproject.parent,
        source=pyproject,
        select=select,
        extend_select=validate_selectors(_string_list(table, "extend-select", ctx), ctx),
        ignore=validate_selectors(_string_list(table, "ignore", ctx), ctx),
        exclude=_string_list(table, "exclude", ctx),
        per_file_ignores=per_file,
        cache_dir=cache_dir,
    )


@dataclass
class ConfigFinder:
    """The nearest pyproject.toml with a [tool.torchdoctor] table above each path, cached per folder."""

    explicit: Config | None = None
    _by_folder: dict[str, Config] = field(default_factory=dict)

    def for_path(self, path: Path) -> Config:
        if self.explicit is not None:
            return self.explicit
        absolute = os.path.abspath(path)
        key = absolute if path.suffix != ".py" and os.path.isdir(absolute) else os.path.dirname(absolute)
        return self._for_folder(key)

    def _for_folder(self, folder: str) -> Config:
        """Walk up until a folder already known or a pyproject.toml with our table; remember every step."""
        visited = []
        config = None
        current = folder
        while True:
            if current in self._by_folder:
                config = self._by_folder[current]
                break
            visited.append(current)
            pyproject = os.path.join(current, "pyproject.toml")
            if os.path.isfile(pyproject) and _has_table(Path(pyproject)):
                config = load_config(Path(pyproject))
                break
            parent = os.path.dirname(current)
            if parent == current:
                config = Config(root=Path.cwd())
                break
            current = parent
        for seen in visited:
            self._by_folder[seen] = config
        return config


def _has_table(pyproject: Path) -> bool:
    try:
        text = pyproject.read_text(encoding="utf-8")
    except OSError:
        return False
    return "[tool.torchdoctor" in text
