"""`torchdoctor run` as a user runs it: a real subprocess, the script behaving as under `python`."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytest.importorskip("torch")

from conftest import FIXTURES  # noqa: E402

SCRIPT = FIXTURES / "runtime" / "train_tiny.py"


def run(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "torchdoctor", "run", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=300)


def test_run_passes_argv_and_reports_findings(tmp_path):
    report = tmp_path / "report.json"
    proc = run("--output", str(report), str(SCRIPT), "4", "--flag")
    assert proc.returncode == 0, proc.stderr
    assert "trained 4 steps, argv=['4', '--flag']" in proc.stdout
    assert "unregistered-module" in proc.stderr
    data = json.loads(report.read_text())
    assert data["steps"] == 4
    assert [f["check"] for f in data["findings"]] == ["unregistered-module"]
    assert data["findings"][0]["module"] == "Net.heads[0]"


def test_run_keeps_the_scripts_exit_code():
    proc = run(str(SCRIPT), "2", "--exit3")
    assert proc.returncode == 3


def test_run_crash_propagates_with_traceback_and_report_is_written(tmp_path):
    report = tmp_path / "r.json"
    proc = run("--output", str(report), str(SCRIPT), "2", "--crash")
    assert proc.returncode == 1
    assert "Traceback" in proc.stderr and "RuntimeError: boom from the user's script" in proc.stderr
    assert json.loads(report.read_text())["steps"] == 2


def test_run_json_to_stdout():
    proc = run("--format", "json", str(SCRIPT), "1")
    doc = json.loads(proc.stdout.split("argv=['1']\n", 1)[1])
    assert doc["findings"][0]["check"] == "unregistered-module"


def test_run_module_mode(tmp_path):
    pkg = tmp_path / "mypkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "train.py").write_text(SCRIPT.read_text())
    proc = run("-m", "mypkg.train", "1", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "trained 1 steps" in proc.stdout


def test_run_usage_errors():
    assert run("nope.py").returncode == 2
    proc = run("--checks", "bogus", str(SCRIPT))
    assert proc.returncode == 2 and "unknown check id(s): bogus" in proc.stderr
