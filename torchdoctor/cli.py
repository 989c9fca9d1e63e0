"""The `torchdoctor` command: lint, rules, explain, run.

Exit codes: 0 no findings; 1 findings (a file that does not parse counts);
2 usage or configuration error. The lint path never imports torch.
"""

from __future__ import annotations

import difflib
import json
import sys
from pathlib import Path

import click

from torchdoctor import __version__

EXIT_CLEAN, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2


def _fail(message: str) -> "click.exceptions.Exit":
    click.echo(f"torchdoctor: error: {message}", err=True)
    return click.exceptions.Exit(EXIT_USAGE)


def _split_codes(values: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(c.strip() for v in values for c in v.split(",") if c.strip())


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="torchdoctor")
def main() -> None:
    """torchdoctor: find the bugs that make a PyTorch model train without learning."""


@main.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["text", "json", "sarif", "github"]), default="text", show_default=True)
@click.option("--select", multiple=True, help="Rule codes, prefixes or names to enable (comma-separated); replaces the configured set.")
@click.option("--ignore", multiple=True, help="Rule codes, prefixes or names to disable (comma-separated).")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when there are findings.")
@click.option("--statistics", is_flag=True, help="Print counts per rule instead of each finding.")
@click.option("-q", "--quiet", is_flag=True, help="Findings only: no source context, no summary when clean.")
@click.option("--fix", is_flag=True, help="Apply safe fixes to the files.")
@click.option("--diff", is_flag=True, help="Show the safe fixes as a diff without writing them.")
@click.option("--show-suppressed", is_flag=True, help="Also show findings silenced by `# noqa`.")
@click.option("--config", "config_path", type=click.Path(path_type=Path), help="Use this pyproject.toml instead of searching.")
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=None, help="Worker processes (default: CPU count, at most 8).")
@click.option("--no-cache", is_flag=True, help="Ignore and do not write the result cache.")
@click.option("--color/--no-color", default=None, help="Force colored text output on or off.")
def lint(paths, fmt, select, ignore, exit_zero, statistics, quiet, fix, diff, show_suppressed, config_path, jobs, no_cache, color):
    """Lint PyTorch training code in PATHS (files or folders; default: the current folder)."""
    from torchdoctor.config import ConfigError, ConfigFinder, load_config, validate_selectors
    from torchdoctor.discovery import PathNotFound, discover
    from torchdoctor.tasks import Task

    try:
        explicit = load_config(config_path) if config_path else None
        configs = ConfigFinder(explicit)
        cli_select = validate_selectors(_split_codes(select), "--select") if select else None
        cli_ignore = validate_selectors(_split_codes(ignore), "--ignore")
        files = discover(list(paths) or [Path(".")], configs)
        tasks = [
            Task(str(f), configs.for_path(f).rules_for(f, cli_select, cli_ignore), fix or diff)
            for f in files
        ]
    except ConfigError as exc:
        raise _fail(str(exc))
    except PathNotFound as exc:
        raise _fail(f"no such file or directory: {exc}")

    from torchdoctor.cache import ResultCache

    cache = None if no_cache or fix or diff else ResultCache.for_configs(configs, files)
    if cache is not None:
        results = cache.run(tasks, jobs)
    else:
        from torchdoctor.runner import run_tasks

        results = run_tasks(tasks, jobs)

    for r in results:
        for message in r.result.internal_errors:
            click.echo(f"torchdoctor: {message}", err=True)
    if diff:
        for r in results:
            if r.fixed_source is not None:
                sys.stdout.writelines(
                    difflib.unified_diff(
                        r.original.splitlines(keepends=True),
                        r.fixed_source.splitlines(keepends=True),
                        f"a/{r.result.path}",
                        f"b/{r.result.path}",
                    )
                )
    if fix:
        from torchdoctor.runner import write_fixes

        write_fixes(results)
        fixed = sum(len(r.fixed) for r in results)
        if fixed:
            click.echo(f"Fixed {fixed} finding{'s' if fixed != 1 else ''} in {sum(1 for r in results if r.fixed)} file(s).", err=True)

    findings = [f for r in results for f in r.result.findings if show_suppressed or not f.suppressed]
    from torchdoctor import reporters

    out = sys.stdout
    if statistics:
        reporters.render_statistics(findings, out)
    elif fmt == "json":
        reporters.render_json(findings, out)
    elif fmt == "sarif":
        reporters.render_sarif(findings, out)
    elif fmt == "github":
        reporters.render_github(findings, out)
    elif not diff:
        use_color = out.isatty() if color is None else color
        sources = _sources_of(findings) if not quiet else {}
        reporters.render_text(findings, out, use_color, len(files), quiet, sources)
    active = [f for f in findings if not f.suppressed]
    sys.exit(EXIT_CLEAN if exit_zero or not active else EXIT_FINDINGS)


def _sources_of(findings) -> dict[str, list[str]]:
    from torchdoctor.sources import read_source

    sources = {}
    for path in {f.path for f in findings}:
        try:
            sources[path] = read_source(path)[0].splitlines()
        except (OSError, UnicodeDecodeError, SyntaxError):
            pass
    return sources


@main.command(name="rules")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def list_rules(fmt):
    """List every rule: code, name, severity, fixable, what it flags."""
    from torchdoctor.rule import catalog

    rules = catalog()
    if fmt == "json":
        click.echo(json.dumps(
            [{"code": r.code, "name": r.name, "severity": r.severity, "fixable": r.fixable, "summary": r.summary} for r in rules],
            indent=2,
        ))
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(box=None, header_style="bold", pad_edge=False)
    for column in ("code", "name", "severity", "fix", "what it flags"):
        table.add_column(column, overflow="fold")
    for r in rules:
        table.add_row(r.code, r.name, r.severity, "yes" if r.fixable else "", r.summary)
    Console(width=None if sys.stdout.isatty() else 160).print(table)


@main.command()
@click.argument("code")
def explain(code):
    """Print the full documentation of one rule (code or name)."""
    from torchdoctor.docs import rule_markdown
    from torchdoctor.rule import rule_by_code_or_name

    rule = rule_by_code_or_name(code)
    if rule is None:
        raise _fail(f"unknown rule {code!r} (see `torchdoctor rules`)")
    text = rule_markdown(rule)
    if sys.stdout.isatty():
        from rich.console import Console
        from rich.markdown import Markdown

        Console().print(Markdown(text))
    else:
        click.echo(text)


@main.command(context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="text: a summary on stderr; json: the report on stdout (unless --output).")
@click.option("--output", "-o", type=click.Path(dir_okay=False), help="Write the JSON report here.")
@click.option("-m", "module", is_flag=True, help="Run a module, like `python -m`.")
@click.option("--checks", help="Only these check ids (comma-separated).")
@click.option("--skip", help="Skip these check ids (comma-separated).")
@click.option("--every", type=click.IntRange(min=1), default=50, show_default=True, help="Steps between sampled checks.")
@click.argument("target")
@click.argument("script_args", nargs=-1, type=click.UNPROCESSED)
def run(fmt, output, module, checks, skip, every, target, script_args):
    """Run a training script (as `python script.py ARGS`) with the runtime checks watching it."""
    if not module and not Path(target).is_file():
        raise _fail(f"no such file: {target}")
    try:
        import torch  # noqa: F401
    except ImportError:
        raise _fail("`torchdoctor run` needs torch: pip install 'torchdoctor[runtime]'")
    from torchdoctor.runtime.checks import check_ids
    from torchdoctor.runtime.run import run_watched

    wanted = [c.strip() for c in checks.split(",") if c.strip()] if checks else None
    skipped = [c.strip() for c in skip.split(",") if c.strip()] if skip else []
    unknown = sorted((set(wanted or []) | set(skipped)) - check_ids())
    if unknown:
        raise _fail(f"unknown check id(s): {', '.join(unknown)} (known: {', '.join(sorted(check_ids()))})")
    code = run_watched(target, list(script_args), as_module=module, output=output, fmt=fmt,
                       checks=wanted, skip=skipped, every=every)
    sys.exit(code)


if __name__ == "__main__":
    main()
