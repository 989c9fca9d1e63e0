"""TD016: class-index targets converted to float before CrossEntropyLoss/NLLLoss."""

from __future__ import annotations

import libcst as cst

from torchdoctor.facts import argument, dotted_name
from torchdoctor.rule import Rule

_LOSSES = {"torch.nn.CrossEntropyLoss", "torch.nn.functional.cross_entropy", "torch.nn.NLLLoss", "torch.nn.functional.nll_loss"}
_SOFT = ("one_hot", "softmax", "mix", "smooth", "soft", "prob", "onehot", "teacher", "label_dist")


class FloatClassTargets(Rule):
    code = "TD016"
    name = "float-class-targets"
    severity = "error"
    summary = "Class-index targets converted to float before CrossEntropyLoss/NLLLoss"
    rationale = """
        `CrossEntropyLoss` reads an integer (long) target as class indices and a float target
        as class probabilities. `y.float()` on class indices makes NLLLoss raise ("expected
        scalar type Long") and makes CrossEntropyLoss raise on a shape mismatch, or, when the
        shapes happen to agree, silently treat the labels as probabilities. Keep class indices
        as `torch.long`.
    """
    bad = """
        import torch.nn as nn
        import torch.nn.functional as F

        def step(model, x, y):
            criterion = nn.CrossEntropyLoss()
            loss = criterion(model(x), y.float())  # expect: TD016
            labels = y.float()
            return loss + F.nll_loss(model(x).log_softmax(-1), labels)  # expect: TD016
    """
    good = """
        import torch
        import torch.nn as nn
        import torch.nn.functional as F

        def step(model, x, y, num_classes):
            criterion = nn.CrossEntropyLoss()
            loss = criterion(model(x), y.long())
            soft = F.one_hot(y, num_classes).float() * 0.9 + 0.1 / num_classes
            mixed_targets = y.float()
            return loss + criterion(model(x), soft) + criterion(model(x), mixed_targets)
    """
    fix_hint = "Pass class indices as `torch.long` (`y.long()`); use float targets only for class probabilities."
    triggers = (".float()", "float32", "FloatTensor")

    def check(self, ctx):
        flow = ctx.dataflow
        for call in ctx.facts.calls:
            if flow.loss_called(call) not in _LOSSES:
                continue
            target = argument(call.node, 1, "target")
            if target is None:
                continue
            shown = dotted_name(target)
            if shown is not None:
                if any(w in shown.lower() for w in _SOFT):
                    continue
                held = flow.value_of(shown, call.function, call.context.order)
                target = held[0] if held is not None else target
            if _float_conversion_of_labels(target):
                yield ctx.report(call.node, f"the target `{ctx.code(target)}` is converted to float: "
                                            "CrossEntropyLoss/NLLLoss expect class indices as torch.long (a float "
                                            "target means class probabilities); use `.long()`")


def _float_conversion_of_labels(node) -> bool:
    """`y.float()`, `y.to(torch.float32)`, `y.type(torch.FloatTensor)` of a plain label tensor."""
    if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)):
        return False
    method = node.func.attr.value
    receiver = node.func.value
    if not isinstance(receiver, (cst.Name, cst.Attribute)):
        return False  # `F.one_hot(y, n).float()`, `(y == k).float()`: probabilities or masks
    name = (dotted_name(receiver) or "").lower()
    if any(w in name for w in _SOFT) or not any(w in name for w in ("label", "target", "y", "cls", "class", "gt")):
        return False
    if method == "float" and not node.args:
        return True
    if method in ("to", "type") and node.args:
        kind = dotted_name(node.args[0].value) or ""
        return kind.endswith(("float32", "float", "FloatTensor", "float64", "double"))
    return False
