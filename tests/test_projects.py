"""Whole projects in fixtures/projects: rules that need another file of the project (a model class,
a training loop, a sampler built elsewhere) must see it; markers may sit in any file."""

from __future__ import annotations

import pytest

from conftest import FIXTURES, codes_at
from torchdoctor.config import Config
from torchdoctor.engine import lint_source
from torchdoctor.project import PROJECT_MARKERS, ProjectIndex
from torchdoctor.rule import expected_findings, rules_by_code

PROJECTS = sorted(p for p in (FIXTURES / "projects").iterdir() if p.is_dir())


@pytest.mark.parametrize("project", PROJECTS, ids=lambda p: p.name)
def test_project_findings_match_markers(project):
    index = ProjectIndex()
    for path in sorted(project.rglob("*.py")):
        source = path.read_text()
        rules = [rules_by_code()[c] for c in Config(root=project).rules_for(path)]
        result = lint_source(source, str(path), rules, index)
        assert not result.internal_errors
        assert codes_at(result.findings) == sorted(expected_findings(source)), path.name


def test_package_star_import_resolves_without_a_project_marker(tmp_path):
    """A downloaded archive has no `.git`, `pyproject.toml` or `setup.py`: the root falls back to each
    file's folder, yet `from models.blocks import *` inside `models/` still names the package the file
    sits in (KPConv's `models/architectures.py`), so `torch` arrives through the star."""
    models = tmp_path / "archive" / "models"
    models.mkdir(parents=True)
    (models / "blocks.py").write_text("import torch\nimport torch.nn as nn\n")
    arch = models / "arch.py"
    source = (
        "from models.blocks import *\n\n\n"
        "class Net(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.fc = nn.Linear(4, 3)\n"
        "        self.criterion = torch.nn.CrossEntropyLoss()\n\n"
        "    def loss(self, outputs, labels):\n"
        "        outputs = torch.softmax(outputs, dim=-1)\n"
        "        return self.criterion(outputs, labels)  # expect: TD002\n"
    )
    arch.write_text(source)
    assert not any((folder / marker).exists() for folder in (models, *models.parents) for marker in PROJECT_MARKERS)
    result = lint_source(source, str(arch), [rules_by_code()["TD002"]], ProjectIndex())
    assert codes_at(result.findings) == sorted(expected_findings(source))
