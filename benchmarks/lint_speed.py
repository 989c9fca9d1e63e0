"""Lint speed: torchdoctor against TorchFix and a bare libcst parse, on the same files, same machine.

    python benchmarks/lint_speed.py [EXTRA_PATH ...] [--torchfix-venv DIR] [--jobs N] [--skip-torchfix]

The corpus is real PyTorch code every machine with torch has: the folders of the installed
`torch` package listed in CORPUS (about 150k lines), plus any paths given. Every timing is a
cold process, measured in this run:

  * bare parse: `libcst.parse_module` over every file, in one process (one core), and the
    same split over N processes (the cores torchdoctor may use);
  * torchdoctor, every rule (`--select ALL --no-cache`), at 1x and 4x the corpus (4 copies);
  * torchdoctor second run over unchanged files (the result cache);
  * torchdoctor on one small file (what a pre-commit hook costs per commit);
  * TorchFix 0.7.0 (its own virtual environment: it pins an older libcst), one process as
    it runs by default.

It prints lines/s for each and the ratios the targets are stated in.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
import venv
from pathlib import Path

CORPUS = [
    "nn",
    "optim",
    "utils/data",
    "distributed/fsdp",
    "distributed/algorithms",
    "distributed/checkpoint",
    "amp",
    "autograd",
    "ao/quantization",
]
TORCHFIX = "torchfix==0.7.0"

_PARSE_WORKER = """
import sys, libcst
files = sys.argv[1:]
for f in files:
    with open(f, encoding="utf-8") as fh:
        src = fh.read()
    try:
        libcst.parse_module(src)
    except Exception:
        pass
"""


def torch_root() -> Path:
    out = subprocess.run([sys.executable, "-c", "import importlib.util as u; print(u.find_spec('torch').origin)"],
                         capture_output=True, text=True, check=True)
    return Path(out.stdout.strip()).parent


def collect(paths: list[Path]) -> list[Path]:
    files = []
    for p in paths:
        files.extend(sorted(p.rglob("*.py")) if p.is_dir() else [p])
    return files


def count_lines(files: list[Path]) -> int:
    return sum(len(f.read_bytes().splitlines()) for f in files)


def timed(cmd: list[str], **kw) -> tuple[float, subprocess.CompletedProcess]:
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, **kw)
    return time.perf_counter() - start, proc


def copy_corpus(folders: list[Path], dest: Path, copies: int) -> Path:
    for i in range(copies):
        for folder in folders:
            target = dest / f"copy{i}" / folder.as_posix().replace("/", "_")
            shutil.copytree(folder, target, ignore=shutil.ignore_patterns("__pycache__"))
    return dest


def bare_parse(files: list[Path], jobs: int) -> float:
    chunks = [[str(f) for f in files[i::jobs]] for i in range(jobs)]
    start = time.perf_counter()
    procs = [subprocess.Popen([sys.executable, "-c", _PARSE_WORKER, *chunk]) for chunk in chunks]
    for p in procs:
        p.wait()
    return time.perf_counter() - start


def torchdoctor(paths: list[Path], jobs: int, cache_dir: Path | None) -> float:
    cmd = [sys.executable, "-m", "torchdoctor", "lint", "--select", "ALL", "--exit-zero", "--quiet",
           "--format", "json", "-j", str(jobs)]
    cmd += ["--no-cache"] if cache_dir is None else []
    seconds, proc = timed(cmd + [str(p) for p in paths], cwd=cache_dir)
    if proc.returncode != 0:
        sys.exit(f"torchdoctor failed: {proc.stderr[-2000:]}")
    return seconds


def ensure_torchfix(venv_dir: Path) -> Path | None:
    python = venv_dir / "bin" / "python"
    if not python.exists():
        venv.create(venv_dir, with_pip=True)
        proc = subprocess.run([str(python), "-m", "pip", "install", "-q", TORCHFIX], capture_output=True, text=True)
        if proc.returncode != 0:
            print(f"could not install {TORCHFIX}: {proc.stderr[-500:]}")
            return None
    return venv_dir / "bin" / "torchfix"


def row(label: str, lines: int, seconds: float, base: float | None = None) -> None:
    rate = lines / seconds
    extra = f"  {rate / base:6.2f}x" if base else ""
    print(f"  {label:<48} {seconds:8.2f} s {rate:10,.0f} lines/s{extra}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("extra", nargs="*", type=Path)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--torchfix-venv", type=Path, default=Path(tempfile.gettempdir()) / "torchdoctor-bench-torchfix")
    parser.add_argument("--skip-torchfix", action="store_true")
    args = parser.parse_args()

    root = torch_root()
    folders = [root / c for c in CORPUS] + args.extra
    files = collect(folders)
    lines = count_lines(files)
    print(f"corpus: {len(files)} files, {lines:,} lines (torch at {root}); {args.jobs} processes; python {sys.version.split()[0]}")

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        parse1 = bare_parse(files, 1)
        parse_n = bare_parse(files, args.jobs)
        td = torchdoctor(folders, args.jobs, None)
        td1 = torchdoctor(folders, 1, None)
        four = copy_corpus(folders, tmp / "x4", 4)
        td4 = torchdoctor([four], args.jobs, None)
        cache_home = tmp / "cached"
        cache_home.mkdir()
        first = torchdoctor(folders, args.jobs, cache_home)
        second = torchdoctor(folders, args.jobs, cache_home)
        one_file = root / "nn" / "modules" / "flatten.py"
        singles = sorted(timed([sys.executable, "-m", "torchdoctor", "lint", "--no-cache", str(one_file)])[0] for _ in range(5))
        tf = None
        if not args.skip_torchfix:
            exe = ensure_torchfix(args.torchfix_venv)
            if exe is not None:
                tf, _ = timed([str(exe), *[str(p) for p in folders]])

    print("\nthroughput (cold processes):")
    row("libcst.parse_module, 1 process", lines, parse1)
    row(f"libcst.parse_module, {args.jobs} processes", lines, parse_n)
    row("torchdoctor, every rule, 1 process", lines, td1)
    row(f"torchdoctor, every rule, {args.jobs} processes", lines, td)
    row(f"torchdoctor, every rule, 4x corpus, {args.jobs} processes", 4 * lines, td4)
    row("torchdoctor, first run filling the cache", lines, first)
    row("torchdoctor, second run over unchanged files", lines, second)
    if tf is not None:
        row(f"{TORCHFIX}, default (1 process)", lines, tf)
    print("\nratios:")
    if tf is not None:
        print(f"  torchdoctor / TorchFix lines/s:                    {tf / td:6.1f}x   (target >= 10x)")
    print(f"  torchdoctor / bare parse, same {args.jobs} processes:       {parse_n / td:6.2f}    (target >= 0.5)")
    print(f"  torchdoctor 1 process / bare parse 1 process:      {parse1 / td1:6.2f}")
    print(f"  4x corpus time / 1x corpus time:                   {td4 / td:6.2f}    (linear: 4.0)")
    print(f"  first run / second run (cache):                    {first / second:6.1f}x   (target >= 50x)")
    print(f"  one file, cold process (median of 5):              {singles[2]:6.3f} s (target < 0.3 s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
