"""The pre-commit hook, run for real: a temporary git repository whose .pre-commit-config.yaml
points at a local copy of this repository, then `pre-commit run` on a buggy and a clean file."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from conftest import REPO
from test_cli import BUGGY, CLEAN


def git(*args, cwd):
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True, env=env)


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory):
    """This repository's tracked files as they are now (uncommitted edits included), committed."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    dest = tmp_path_factory.mktemp("torchdoctor-hook")
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=REPO, capture_output=True, text=True, check=True)
    for rel in listed.stdout.splitlines():
        src = REPO / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    git("init", "-q", cwd=dest)
    git("add", "-A", cwd=dest)
    git("commit", "-qm", "snapshot", cwd=dest)
    rev = git("rev-parse", "HEAD", cwd=dest).stdout.strip()
    return dest, rev


def test_precommit_hook_flags_buggy_file_and_passes_clean(hook_repo, tmp_path):
    hook_path, rev = hook_repo
    user = tmp_path / "user"
    user.mkdir()
    git("init", "-q", cwd=user)
    (user / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {hook_path}\n    rev: {rev}\n    hooks:\n      - id: torchdoctor\n"
    )
    (user / "train.py").write_text(BUGGY)
    (user / "clean.py").write_text(CLEAN)
    git("add", "-A", cwd=user)
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "cache"), "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    run = lambda *files: subprocess.run(
        [sys.executable, "-m", "pre_commit", "run", "--files", *files], cwd=user, capture_output=True, text=True, env=env, timeout=600
    )
    bad = run("train.py", "clean.py")
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "train.py:9:9: TD001" in bad.stdout
    assert "clean.py" not in bad.stdout.split("TD001", 1)[1]
    good = run("clean.py")
    assert good.returncode == 0, good.stdout + good.stderr
    assert "Passed" in good.stdout
