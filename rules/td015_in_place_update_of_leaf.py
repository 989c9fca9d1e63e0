"""TD015: in-place update of a leaf tensor that requires grad, outside torch.no_grad()."""

from __future__ import annotations

from torchdoctor.decorators import is_no_grad_name
from torchdoctor.rule import Rule


class InPlaceUpdateOfLeaf(Rule):
    code = "TD015"
    name = "in-place-update-of-leaf"
    severity = "error"
    summary = "w -= lr * w.grad on a leaf that requires grad, outside no_grad(): raises (or records the update)"
    rationale = """
        A hand-written update such as `w -= lr * w.grad` modifies a leaf tensor that requires
        grad in place; autograd refuses ("a leaf Variable that requires grad is being used in an
        in-place operation"). Wrapping it in `torch.no_grad()` (or updating `w.data`) says the
        update is not part of the graph.
    """
    bad = """
        import torch

        def sgd(w, b, data, lr=0.1):
            for x, y in data:
                loss = ((x @ w + b - y) ** 2).mean()
                loss.backward()
                w -= lr * w.grad  # expect: TD015
                b.sub_(lr * b.grad)  # expect: TD015
                w.grad = None
                b.grad = None
    """
    good = """
        import torch

        def sgd(w, b, data, lr=0.1):
            for x, y in data:
                loss = ((x @ w + b - y) ** 2).mean()
                loss.backward()
                with torch.no_grad():
                    w -= lr * w.grad
                    b.sub_(lr * b.grad)
                w.data.add_(-lr * w.grad)
                w.grad = None
                b.grad = None
    """
    fix_hint = "Do the update under `with torch.no_grad():` (or on `w.data`)."
    triggers = (".grad",)

    def check(self, ctx):
        training = ctx.training
        for fn in ctx.facts.functions:
            if any(is_no_grad_name(d) for d in fn.decorators):
                continue
            for a in fn.assigns:
                if a.augmented in ("SubtractAssign", "AddAssign") and len(a.targets) == 1 and "." not in a.targets[0] \
                        and training.updates_from_own_grad(a.targets[0], a.value) and not _no_grad(a.context):
                    yield ctx.report(a.node, f"in-place update of `{a.targets[0]}` (a leaf that requires grad) outside "
                                             "torch.no_grad(): autograd raises; wrap the update in `with torch.no_grad():`")
            for call in fn.calls:
                if call.method in ("add_", "sub_", "mul_") and call.receiver and "." not in call.receiver \
                        and training.updates_from_own_grad(call.receiver, call.node) and not _no_grad(call.context):
                    yield ctx.report(call.node, f"in-place `{call.receiver}.{call.method}(...)` on a leaf that requires "
                                                "grad outside torch.no_grad(): autograd raises; wrap it in `with torch.no_grad():`")


def _no_grad(context) -> bool:
    return any(is_no_grad_name(w) for w in context.withs)
