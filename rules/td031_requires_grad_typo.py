"""TD031: `require_grad` / `requires_grads` instead of `requires_grad`."""

from __future__ import annotations

import libcst as cst

from torchdoctor.rule import Rule

_TYPOS = {"require_grad", "requires_grads", "require_grads", "requieres_grad", "requires_gradient"}


class RequiresGradTypo(Rule):
    code = "TD031"
    name = "requires-grad-typo"
    severity = "error"
    summary = "`require_grad`/`requires_grads` is a typo for `requires_grad`: silently does nothing"
    rationale = """
        Tensors accept new Python attributes, so `p.require_grad = False` sets a meaningless
        attribute and the parameter keeps training (or, with `True`, a tensor meant to be learned
        never gets a gradient). As a keyword, `torch.zeros(3, require_grad=True)` raises. Either
        way the intent was `requires_grad`.
    """
    bad = """
        import torch

        def freeze(model):
            for p in model.backbone.parameters():
                p.require_grad = False  # expect: TD031
            return torch.zeros(3, requires_grads=True)  # expect: TD031
    """
    good = """
        import torch

        def freeze(model):
            for p in model.backbone.parameters():
                p.requires_grad = False
            return torch.zeros(3, requires_grad=True)
    """
    fixed = """
        import torch

        def freeze(model):
            for p in model.backbone.parameters():
                p.requires_grad = False
            return torch.zeros(3, requires_grad=True)
    """
    fix_hint = "Spell it `requires_grad`."
    triggers = tuple(_TYPOS)

    def check(self, ctx):
        finder = _TypoFinder()
        ctx.facts.module.visit(finder)  # only files that contain a typo get here (trigger words)
        for node in finder.found:
            if isinstance(node, cst.Attribute):
                typo = node.attr.value
                new = node.with_changes(attr=cst.Name("requires_grad"))
            else:
                typo = node.keyword.value
                new = node.with_changes(keyword=cst.Name("requires_grad"))
            yield ctx.report(node, f"`{typo}` is a typo for `requires_grad`: as an attribute it silently does nothing, "
                                   "as a keyword it raises", replace=(node, new))


class _TypoFinder(cst.CSTVisitor):
    def __init__(self) -> None:
        self.found: list[cst.CSTNode] = []

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value in _TYPOS:
            self.found.append(node)

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None and node.keyword.value in _TYPOS:
            self.found.append(node)
