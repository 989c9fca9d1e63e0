"""The `torchdoctor` command as users run it: exit codes, formats, noqa, config, fixes."""

from __future__ import annotations

import json
import textwrap

import jsonschema
import pytest

from conftest import FIXTURES, run_torchdoctor

BUGGY = textwrap.dedent(
    """\
    import torch


    def train(model, loader):
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for x, y in loader:
            loss = torch.nn.functional.mse_loss(model(x), y)
            loss.backward()
            opt.step()
    """
)
CLEAN = BUGGY.replace("        loss.backward()\n", "        opt.zero_grad()\n        loss.backward()\n")
CONTAINER = textwrap.dedent(
    """\
    import torch.nn as nn


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = [nn.Linear(2, 2), nn.Linear(2, 2)]
    """
)


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "train.py").write_text(BUGGY)
    (tmp_path / "clean.py").write_text(CLEAN)
    return tmp_path


def test_buggy_file_exits_1_with_ruff_style_line(cli, project):
    result = cli("lint", "train.py")
    assert result.exit_code == 1
    assert "train.py:9:9: TD001 optimizer 'opt' is stepped every iteration" in result.output
    assert "    9 |         opt.step()" in result.output  # source line with caret below
    assert "^^^^^^^^^^" in result.output
    assert "Found 1 finding (1 error) in 1 of 1 file." in result.output


def test_clean_file_exits_0(cli, project):
    result = cli("lint", "clean.py")
    assert result.exit_code == 0, result.output
    assert "All checks passed (1 file checked)." in result.output


def test_quiet_clean_prints_nothing(cli, project):
    result = cli("lint", "--quiet", "clean.py")
    assert result.exit_code == 0 and result.output == ""


def test_missing_path_is_usage_error(cli, project):
    result = cli("lint", "nope.py")
    assert result.exit_code == 2
    assert "torchdoctor: error: no such file or directory: nope.py" in result.stderr


def test_unknown_code_is_usage_error(cli, project):
    result = cli("lint", "--select", "TD999", "train.py")
    assert result.exit_code == 2
    assert "unknown rule code or prefix 'TD999'" in result.stderr


def test_bad_format_is_usage_error(cli, project):
    assert cli("lint", "--format", "xml", "train.py").exit_code == 2


def test_syntax_error_is_a_finding_and_others_still_lint(cli, project):
    (project / "broken.py").write_text("import torch\ndef f(:\n    loss.backward()\n")
    result = cli("lint", "--format", "json", ".")
    assert result.exit_code == 1
    data = json.loads(result.output)
    by_code = {(d["path"], d["code"]) for d in data}
    assert ("broken.py", "TD000") in by_code and ("train.py", "TD001") in by_code
    broken = next(d for d in data if d["code"] == "TD000")
    assert broken["line"] == 2 and broken["message"].startswith("syntax error")
    assert "Traceback" not in result.output + result.stderr


def test_undecodable_file_is_a_finding_and_others_still_lint(cli, project):
    """A macOS resource fork (`._train.py`) or a Latin-1 file with no coding line: TD000 at line 1."""
    (project / "._train.py").write_bytes(b"\x00\x05\x16\x07\xff\xfeMac OS X")
    (project / "latin.py").write_bytes("# -*- coding: latin-1 -*-\nname = 'caf\u00e9'\n".encode("latin-1"))
    result = cli("lint", "--format", "json", ".")
    assert result.exit_code == 1
    data = json.loads(result.output)
    unreadable = [d for d in data if d["code"] == "TD000"]
    assert [(d["path"], d["line"]) for d in unreadable] == [("._train.py", 1)]
    assert unreadable[0]["message"].startswith("cannot read the file: not valid UTF-8")
    assert ("train.py", "TD001") in {(d["path"], d["code"]) for d in data}
    assert "Traceback" not in result.output + result.stderr and result.stderr == ""


def test_syntax_error_in_file_no_rule_applies_to(cli, project):
    (project / "util.py").write_text("x = (1,\n")
    result = cli("lint", "util.py")
    assert result.exit_code == 1 and "TD000" in result.output


FINDING_SCHEMA = {
    "type": "array",
    "items": {
        "type": "object",
        "required": ["code", "name", "path", "line", "column", "end_line", "end_column", "severity", "message", "fix"],
        "properties": {
            "code": {"type": "string", "pattern": "^TD\\d{3}$"},
            "name": {"type": "string"},
            "path": {"type": "string"},
            "line": {"type": "integer", "minimum": 1},
            "column": {"type": "integer", "minimum": 1},
            "end_line": {"type": "integer", "minimum": 1},
            "end_column": {"type": "integer", "minimum": 1},
            "severity": {"enum": ["error", "warning", "info"]},
            "message": {"type": "string", "minLength": 1},
            "fix": {
                "oneOf": [
                    {"type": "null"},
                    {
                        "type": "object",
                        "required": ["description", "edits"],
                        "properties": {"edits": {"type": "array", "minItems": 1}},
                    },
                ]
            },
        },
    },
}


def test_json_format_schema(cli, project):
    (project / "net.py").write_text(CONTAINER)
    result = cli("lint", "--format", "json", "train.py", "net.py")
    data = json.loads(result.output)
    jsonschema.validate(data, FINDING_SCHEMA)
    assert [(d["path"], d["line"], d["code"]) for d in data] == [("net.py", 7, "TD003"), ("train.py", 9, "TD001")]
    assert data[0]["fix"]["edits"][0]["content"] == "nn.ModuleList([nn.Linear(2, 2), nn.Linear(2, 2)])"
    assert data[1]["fix"] is None


# The parts of the SARIF 2.1.0 schema that GitHub code scanning requires of an upload.
SARIF_SCHEMA = {
    "type": "object",
    "required": ["version", "runs"],
    "properties": {
        "version": {"const": "2.1.0"},
        "runs": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["tool", "results"],
                "properties": {
                    "tool": {
                        "type": "object",
                        "required": ["driver"],
                        "properties": {
                            "driver": {
                                "type": "object",
                                "required": ["name", "rules"],
                                "properties": {
                                    "rules": {
                                        "type": "array",
                                        "items": {
                                            "type": "object",
                                            "required": ["id", "shortDescription"],
                                            "properties": {
                                                "defaultConfiguration": {
                                                    "properties": {"level": {"enum": ["none", "note", "warning", "error"]}}
                                                }
                                            },
                                        },
                                    }
                                },
                            }
                        },
                    },
                    "results": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "required": ["ruleId", "message", "locations", "level"],
                            "properties": {
                                "level": {"enum": ["none", "note", "warning", "error"]},
                                "message": {"type": "object", "required": ["text"]},
                                "locations": {
                                    "type": "array",
                                    "minItems": 1,
                                    "items": {
                                        "type": "object",
                                        "required": ["physicalLocation"],
                                        "properties": {
                                            "physicalLocation": {
                                                "type": "object",
                                                "required": ["artifactLocation", "region"],
                                                "properties": {
                                                    "artifactLocation": {"type": "object", "required": ["uri"]},
                                                    "region": {
                                                        "type": "object",
                                                        "required": ["startLine"],
                                                        "properties": {
                                                            "startLine": {"type": "integer", "minimum": 1},
                                                            "startColumn": {"type": "integer", "minimum": 1},
                                                        },
                                                    },
                                                },
                                            }
                                        },
                                    },
                                },
                            },
                        },
                    },
                },
            },
        },
    },
}


def test_sarif_format(cli, project):
    result = cli("lint", "--format", "sarif", "train.py")
    assert result.exit_code == 1
    doc = json.loads(result.output)
    jsonschema.validate(doc, SARIF_SCHEMA)
    run = doc["runs"][0]
    (res,) = run["results"]
    assert res["ruleId"] == "TD001"
    assert run["tool"]["driver"]["rules"][res["ruleIndex"]]["id"] == "TD001"
    assert res["locations"][0]["physicalLocation"]["region"]["startLine"] == 9


def test_github_format(cli, project):
    result = cli("lint", "--format", "github", "train.py")
    assert result.output.startswith("::error title=torchdoctor (TD001),file=train.py,line=9,col=9,")
    assert "::TD001 optimizer 'opt'" in result.output


def test_select_ignore_and_prefixes(cli, project):
    (project / "net.py").write_text(CONTAINER)
    assert "TD003" not in cli("lint", "--ignore", "TD003", ".").output
    out = cli("lint", "--select", "TD003", ".").output
    assert "TD003" in out and "TD001" not in out
    assert cli("lint", "--select", "TD00", "--ignore", "missing-zero-grad,TD003", ".").exit_code == 0


def test_exit_zero_and_statistics(cli, project):
    (project / "net.py").write_text(CONTAINER)
    assert cli("lint", "--exit-zero", ".").exit_code == 0
    stats = cli("lint", "--statistics", ".")
    assert stats.exit_code == 1
    lines = stats.output.rstrip().splitlines()
    assert lines == ["     1  TD001  missing-zero-grad", "     1  TD003  module-in-plain-container  [*]"]


def test_noqa_suppression(cli, project):
    (project / "a.py").write_text(BUGGY.replace("opt.step()", "opt.step()  # noqa: TD003, TD001"))
    (project / "b.py").write_text(BUGGY.replace("opt.step()", "opt.step()  # noqa"))
    (project / "c.py").write_text(BUGGY.replace("opt.step()", "opt.step()  # noqa: TD003"))
    result = cli("lint", "--format", "json", "a.py", "b.py", "c.py")
    assert [d["path"] for d in json.loads(result.output)] == ["c.py"]
    shown = json.loads(cli("lint", "--format", "json", "--show-suppressed", "a.py", "b.py").output)
    assert [(d["path"], d["suppressed"]) for d in shown] == [("a.py", True), ("b.py", True)]
    assert cli("lint", "a.py", "b.py").exit_code == 0


def test_config_select_ignore_and_per_file_ignores(cli, project):
    (project / "pyproject.toml").write_text(
        '[tool.torchdoctor]\nignore = ["TD003"]\nper-file-ignores = { "scripts/*" = ["TD001"] }\n'
    )
    (project / "scripts").mkdir()
    (project / "scripts" / "t.py").write_text(BUGGY)
    (project / "net.py").write_text(CONTAINER)
    data = json.loads(cli("lint", "--format", "json", ".").output)
    assert [(d["path"], d["code"]) for d in data] == [("train.py", "TD001")]


def test_config_found_by_walking_up(cli, project, monkeypatch):
    (project / "pyproject.toml").write_text('[tool.torchdoctor]\nexclude = ["legacy"]\nignore = ["TD001"]\n')
    deep = project / "src" / "pkg"
    deep.mkdir(parents=True)
    (deep / "t.py").write_text(BUGGY)
    (project / "legacy").mkdir()
    (project / "legacy" / "net.py").write_text(CONTAINER)
    monkeypatch.chdir(deep)
    assert cli("lint", "t.py").exit_code == 0  # TD001 ignored by the config two folders up
    monkeypatch.chdir(project)
    assert cli("lint", ".").exit_code == 0  # legacy/ excluded
    assert cli("lint", "legacy/net.py").exit_code == 0  # excluded even when named explicitly


@pytest.mark.parametrize(
    "toml,message",
    [
        ('[tool.torchdoctor]\nselct = ["TD001"]\n', "unknown key(s) in [tool.torchdoctor]: selct"),
        ('[tool.torchdoctor]\nselect = ["TD777"]\n', "unknown rule code or prefix 'TD777'"),
        ('[tool.torchdoctor]\nignore = "TD001"\n', "`ignore` must be a list of strings"),
        ("[tool.torchdoctor\n", "not valid TOML"),
    ],
)
def test_config_errors_exit_2_in_one_line(cli, project, toml, message):
    (project / "pyproject.toml").write_text(toml)
    result = cli("lint", "train.py")
    assert result.exit_code == 2
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_explicit_config_option(cli, project):
    (project / "other.toml").write_text('[tool.torchdoctor]\nselect = ["TD003"]\n')
    assert cli("lint", "--config", "other.toml", "train.py").exit_code == 0
    assert cli("lint", "--config", "missing.toml", "train.py").exit_code == 2


def test_folders_skip_venvs_and_build_dirs(cli, project):
    for skipped in (".git", "build", "dist", "node_modules", ".venv"):
        (project / skipped).mkdir()
        (project / skipped / "t.py").write_text(BUGGY)
    (project / "myenv").mkdir()
    (project / "myenv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (project / "myenv" / "t.py").write_text(BUGGY)
    data = json.loads(cli("lint", "--format", "json", ".").output)
    assert [d["path"] for d in data] == ["train.py"]


def test_fix_and_diff(cli, project):
    (project / "net.py").write_text(CONTAINER)
    diff = cli("lint", "--diff", "net.py")
    assert "-        self.layers = [nn.Linear(2, 2), nn.Linear(2, 2)]" in diff.output
    assert "+        self.layers = nn.ModuleList([nn.Linear(2, 2), nn.Linear(2, 2)])" in diff.output
    assert (project / "net.py").read_text() == CONTAINER  # --diff writes nothing
    fixed = cli("lint", "--fix", "net.py")
    assert fixed.exit_code == 0, fixed.output
    assert "Fixed 1 finding in 1 file(s)." in fixed.stderr
    after = (project / "net.py").read_text()
    assert "nn.ModuleList([nn.Linear(2, 2), nn.Linear(2, 2)])" in after
    compile(after, "net.py", "exec")
    again = cli("lint", "--fix", "net.py")
    assert (project / "net.py").read_text() == after and "Fixed" not in again.stderr


def test_byte_order_mark_and_encoding_cookie_are_read_like_python(cli, project):
    """Windows editors save UTF-8 with a BOM; Python runs such files, so they are no syntax error,
    and a fix keeps the BOM (or a latin-1 cookie's encoding) as it was."""
    (project / "bom.py").write_bytes(b"\xef\xbb\xbf" + CONTAINER.encode())
    (project / "latin.py").write_bytes(("# -*- coding: latin-1 -*-\n# caf\xe9\n" + CONTAINER).encode("latin-1"))
    data = json.loads(cli("lint", "--format", "json", "--no-cache", "bom.py", "latin.py").output)
    assert sorted((d["path"], d["code"]) for d in data) == [("bom.py", "TD003"), ("latin.py", "TD003")]
    assert cli("lint", "--fix", "bom.py", "latin.py").exit_code == 0
    assert (project / "bom.py").read_bytes().startswith(b"\xef\xbb\xbf")
    assert "nn.ModuleList(" in (project / "bom.py").read_bytes().decode("utf-8-sig")
    assert "# caf\xe9" in (project / "latin.py").read_bytes().decode("latin-1")


def test_rules_and_explain(cli):
    listing = cli("rules")
    assert listing.exit_code == 0
    assert "TD001" in listing.output and "missing-zero-grad" in listing.output
    data = json.loads(cli("rules", "--format", "json").output)
    td003 = next(d for d in data if d["code"] == "TD003")
    assert td003["name"] == "module-in-plain-container" and td003["fixable"] is True
    doc = cli("explain", "TD001")
    for section in ("# TD001 missing-zero-grad", "## Why is this bad?", "## Example", "## Use instead", "## Fix safety"):
        assert section in doc.output
    assert cli("explain", "module-in-plain-container").exit_code == 0
    bad = cli("explain", "TD999")
    assert bad.exit_code == 2 and "unknown rule 'TD999'" in bad.stderr


def test_parallel_output_is_deterministic(cli, project):
    for i in range(40):
        (project / f"m{i:02d}.py").write_text(BUGGY if i % 3 else CONTAINER)
    serial = cli("lint", "--format", "json", "--no-cache", "-j", "1", ".").output
    parallel = cli("lint", "--format", "json", "--no-cache", "-j", "2", ".").output
    assert serial == parallel
    assert len(json.loads(serial)) == 41


def test_cache_reuses_and_invalidates(cli, project):
    first = cli("lint", "--format", "json", "train.py").output
    assert (project / ".torchdoctor_cache").is_dir()
    assert cli("lint", "--format", "json", "train.py").output == first
    (project / "train.py").write_text(CLEAN)
    assert json.loads(cli("lint", "--format", "json", "train.py").output) == []


def test_real_subprocess_never_imports_torch(project):
    """The lint path must stay light: torch is never imported, even when installed."""
    probe = (
        "import sys, runpy\n"
        "sys.argv = ['torchdoctor', 'lint', 'train.py']\n"
        "try:\n    runpy.run_module('torchdoctor', run_name='__main__')\n"
        "except SystemExit as e:\n    code = e.code\n"
        "print('TORCH', 'torch' in sys.modules, code)\n"
    )
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=project)
    assert "TORCH False 1" in out.stdout, out.stdout + out.stderr


def test_bundled_fixture_through_installed_command():
    proc = run_torchdoctor("lint", "--no-cache", str(FIXTURES / "scripts" / "cnn_classifier_fixed.py"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    proc = run_torchdoctor("lint", "--no-cache", "--quiet", str(FIXTURES / "scripts" / "cnn_classifier_buggy.py"))
    assert proc.returncode == 1 and "TD001" in proc.stdout and "Traceback" not in proc.stderr


def test_readme_example_output_is_what_the_tool_prints():
    """The README's 30-second example must stay true: every finding line it shows is printed."""
    from conftest import REPO

    readme = (REPO / "README.md").read_text()
    block = readme.split("## 30-second example", 1)[1].split("```", 2)[1]
    shown = [line for line in block.splitlines() if line.startswith("fixtures/scripts/")]
    assert shown
    result = run_torchdoctor("lint", "--no-cache", "fixtures/scripts/cnn_classifier_buggy.py", cwd=REPO)
    printed = result.stdout.splitlines()
    for line in shown:
        assert line in printed


def test_cache_invalidates_when_a_neighbour_changes_framework(tmp_path):
    """A metric that imports only its project's TensorFlow helpers has no PyTorch pass; once the helper
    module imports torch instead, the cached answer for the metric must not be reused. (Separate runs,
    as a user makes them: one process keeps its parsed project files.)"""
    import shutil

    repo = tmp_path / "repo"
    shutil.copytree(FIXTURES / "projects" / "mixed_frameworks", repo)
    lint = ("lint", "--format", "json", "--select", "TD006", "metrics/accuracy.py")
    assert json.loads(run_torchdoctor(*lint, cwd=repo).stdout) == []
    assert (repo / ".torchdoctor_cache").is_dir()
    helpers = repo / "gan_lib" / "eval_utils.py"
    helpers.write_text(helpers.read_text().replace("import tensorflow as tf", "import torch as tf"))
    assert [f["code"] for f in json.loads(run_torchdoctor(*lint, cwd=repo).stdout)] == ["TD006"]
