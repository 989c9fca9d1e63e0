"""`torchdoctor run script.py`: run a script exactly as `python script.py` would, watched.

Same `sys.argv`, `__name__ == "__main__"`, `sys.path[0]`, exit code and exceptions;
every module and optimizer the script creates is watched through global hooks,
with no edit to the user's code. The report is written even when the run crashes.
"""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

from torchdoctor.runtime.watcher import Watch


def run_watched(target: str, args: list[str], *, as_module: bool, output: str | None, fmt: str,
                checks: list[str] | None, skip: list[str], every: int) -> int:
    """Returns the script's exit code; re-raises its exceptions after reporting."""
    old_argv, old_path0 = sys.argv[:], sys.path[0] if sys.path else None
    sys.argv = [target, *args]
    if not as_module:
        script_dir = str(Path(target).resolve().parent)
        if sys.path:
            sys.path[0] = script_dir
        else:
            sys.path.insert(0, script_dir)
    session = Watch(None, every=every, checks=checks, skip=skip, report=output, quiet=(fmt == "json"))
    code = 0
    try:
        with session:
            try:
                if as_module:
                    runpy.run_module(target, run_name="__main__", alter_sys=True)
                else:
                    runpy.run_path(target, run_name="__main__")
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
                if exc.code is not None and not isinstance(exc.code, int):
                    print(exc.code, file=sys.stderr)
    finally:
        sys.argv = old_argv
        if old_path0 is not None and sys.path:
            sys.path[0] = old_path0
        if fmt == "json" and output is None:
            import json

            from torchdoctor.runtime.findings import report_document

            print(json.dumps(report_document(session.findings, session.steps, session.device_description()), indent=2))
    return code
