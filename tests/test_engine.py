"""The engine's shared facts and its robustness: aliases, loops, internal errors, the project index."""

from __future__ import annotations

import textwrap

import libcst as cst

from conftest import lint_text
from torchdoctor.engine import lint_source
from torchdoctor.facts import FileFacts
from torchdoctor.project import ProjectIndex
from torchdoctor.rule import Rule, rules_by_code


def facts_of(source: str) -> FileFacts:
    source = textwrap.dedent(source)
    return FileFacts(cst.parse_module(source), source)


def test_import_aliases_resolve_to_qualified_names():
    f = facts_of(
        """
        import torch
        import torch.nn as nn
        from torch import nn as tnn
        from torch.nn import CrossEntropyLoss as CE
        import torch.nn.functional as F
        a = nn.CrossEntropyLoss()
        b = tnn.CrossEntropyLoss()
        c = CE()
        d = F.cross_entropy(x, y)
        e = torch.nn.functional.cross_entropy(x, y)
        g = unknown.CrossEntropyLoss()
        """
    )
    names = [c.qualname for c in f.calls]
    assert names == [
        "torch.nn.CrossEntropyLoss", "torch.nn.CrossEntropyLoss", "torch.nn.CrossEntropyLoss",
        "torch.nn.functional.cross_entropy", "torch.nn.functional.cross_entropy", None,
    ]


def test_functions_classes_loops_and_contexts():
    f = facts_of(
        """
        import torch

        class Trainer:
            def fit(self, loader):
                for epoch in range(3):
                    for x in loader:
                        with torch.no_grad():
                            self.model(x)

                    def inner():
                        return 1
        """
    )
    assert list(f.classes["Trainer"].methods) == ["fit"]
    fit = f.classes["Trainer"].methods["fit"]
    assert [l.targets for l in fit.loops] == [("epoch",), ("x",)]
    call = next(c for c in f.calls if c.dotted == "self.model")
    assert call.context.withs == ("torch.no_grad",)
    assert call.context.loop is fit.loops[1] and fit.loops[1].parent is fit.loops[0]
    no_grad = next(c for c in f.calls if c.dotted == "torch.no_grad")
    assert no_grad.context.withs == ()  # the context manager runs outside its own block
    range_call = next(c for c in f.calls if c.dotted == "range")
    assert range_call.context.loops == ()  # a for-loop's iterable is evaluated once
    assert "inner" in fit.nested and fit.nested["inner"].qualname == "Trainer.fit.<locals>.inner"


class _Broken(Rule):
    code, name, severity = "TD001", "missing-zero-grad", "error"
    summary = rationale = bad = good = fix_hint = "x"

    def check(self, ctx):
        raise ValueError("boom")


def test_internal_error_in_a_rule_is_reported_and_others_still_run():
    source = "import torch.nn as nn\nclass M(nn.Module):\n    def __init__(self):\n        self.l = [nn.Linear(1, 1)]\n"
    result = lint_source(source, "m.py", [_Broken, rules_by_code()["TD003"]], ProjectIndex())
    assert result.internal_errors == ["m.py: internal error in TD001 (missing-zero-grad): ValueError: boom"]
    assert [f.code for f in result.findings] == ["TD003"]


def test_project_index_sees_module_base_class_in_another_file(tmp_path):
    (tmp_path / "pyproject.toml").write_text("")
    pkg = tmp_path / "models"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("from .base import BaseBlock\n")
    (pkg / "base.py").write_text("import torch.nn as nn\n\nclass BaseBlock(nn.Module):\n    pass\n")
    train = tmp_path / "train.py"
    source = textwrap.dedent(
        """
        import torch.nn as nn
        from models import BaseBlock

        class Block(BaseBlock):
            def __init__(self):
                super().__init__()
                self.parts = [nn.Linear(2, 2)]
        """
    )
    train.write_text(source)
    index = ProjectIndex()
    result = lint_source(source, str(train), [rules_by_code()["TD003"]], index)
    assert [(f.line, f.code) for f in result.findings] == [(8, "TD003")]
    assert str((pkg / "base.py").resolve()) in result.dependencies
    # Without the project (a plain helper base class), nothing is assumed.
    (pkg / "base.py").write_text("class BaseBlock:\n    pass\n")
    assert lint_source(source, str(train), [rules_by_code()["TD003"]], ProjectIndex()).findings == []


def test_package_kept_in_a_subfolder_of_the_project_resolves(tmp_path):
    """`from depthpkg.layers import Projector` inside metric/depthpkg/models/net.py: the package's root
    is metric/, which the project's scripts put on sys.path (Depth-Anything's metric_depth/zoedepth)."""
    (tmp_path / "pyproject.toml").write_text("")
    pkg = tmp_path / "metric" / "depthpkg"
    (pkg / "models").mkdir(parents=True)
    (pkg / "layers.py").write_text(
        "import torch.nn as nn\n\nclass Projector(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(4, 4)\n"
    )
    net = pkg / "models" / "net.py"
    source = textwrap.dedent(
        """
        import torch.nn as nn
        from depthpkg.layers import Projector

        class Net(nn.Module):
            def __init__(self, widths):
                super().__init__()
                self.projectors = [Projector() for w in widths]
        """
    )
    net.write_text(source)
    index = ProjectIndex()
    assert index.module_file(net, "depthpkg.layers") == (pkg / "layers.py").resolve()
    result = lint_source(source, str(net), [rules_by_code()["TD003"]], index)
    assert [(f.line, f.code) for f in result.findings] == [(8, "TD003")]


def test_noqa_on_flagged_line_only():
    src = """
    import torch.nn as nn
    class M(nn.Module):
        def __init__(self):
            self.a = [nn.Linear(1, 1)]  # noqa: TD003
            self.b = [nn.Linear(1, 1)]  # noqa: TD001
    """
    assert [f.line for f in lint_text(src, select=("TD003",))] == [6]


def test_origins_of_a_recursive_function_are_memoised(monkeypatch):
    """`collate` calls itself once per element kind: following its parameter back through every call
    site, ten levels deep, would ask 6**10 questions; each distinct question is answered once."""
    from torchdoctor.dataflow import DataFlow

    sites = "\n".join(f"            if kind == {i}:\n                out.extend(collate(batch, kind - 1))" for i in range(6))
    f = facts_of(
        f"""
        def collate(batch, kind):
            out = []
{sites}
            for item in batch:
                out.append(item)
            return out
        """
    )
    asked = []
    real = DataFlow._origins
    monkeypatch.setattr(DataFlow, "_origins", lambda self, *a: asked.append(a) or real(self, *a))
    flow = DataFlow(f)
    collate = f.toplevel_functions["collate"]
    loop = collate.loops[0]
    assert set(flow.origins(loop.node.iter, collate, loop.order)) == {None}
    assert len(asked) < 50


def test_test_files_are_told_by_path():
    from torchdoctor.facts import is_test_file

    for path in ("proj/tests/helpers.py", "proj/test_model.py", "proj/model_test.py", "proj/conftest.py",
                 "allennlp/common/testing/model_test_case.py"):
        assert is_test_file(path), path
    for path in ("proj/train.py", "proj/tools/evaluate.py", "proj/contest.py", "proj/latest_model.py"):
        assert not is_test_file(path), path
