"""TD033: model.forward(x) instead of model(x): hooks are skipped."""

from __future__ import annotations

from torchdoctor.rule import Rule


class ForwardCalledDirectly(Rule):
    code = "TD033"
    name = "forward-called-directly"
    severity = "warning"
    summary = "model.forward(x) bypasses __call__: forward hooks, DDP synchronisation and autocast wrappers are skipped"
    rationale = """
        `model(x)` runs `nn.Module.__call__`, which runs forward pre/post hooks (used by DDP,
        FSDP, torch.compile, pruning, quantization observers and torchdoctor itself) around
        `forward`. Calling `model.forward(x)` skips all of them: a DDP model then does not
        synchronise gradients correctly, hooks-based tools see nothing.
    """
    bad = """
        import torch

        def evaluate(model, loader):
            with torch.no_grad():
                return [model.forward(x) for x in loader]  # expect: TD033
    """
    good = """
        import torch
        import torch.nn as nn

        def evaluate(model, loader):
            with torch.no_grad():
                return [model(x) for x in loader]

        class Wrapper(nn.Module):
            def __init__(self, inner):
                super().__init__()
                self.inner = inner

            def forward(self, x):
                return self.inner.forward(x) + super().forward(x)
    """
    fix_hint = "Call the module itself: `model(x)`."
    triggers = (".forward(",)

    def check(self, ctx):
        for call in ctx.facts.calls:
            if call.method != "forward" or call.receiver is None or call.receiver == "self":
                continue
            if call.function.name == "forward" or call.function.cls is not None and call.receiver.startswith("self."):
                continue  # inside a module's own forward chain, or a wrapper delegating to its submodule
            if not ctx.evaluation.is_model_name(call.receiver):
                continue
            inst = ctx.dataflow.instance_of(call.node.func.value, call.function, call.context.order)
            if inst is not None and inst.cls is not None and not ctx.training.is_module_class(inst.facts, inst.cls):
                continue  # MeshCNN's `model.forward()` on a plain wrapper object: no __call__ to skip
            yield ctx.report(call.node, f"`{call.dotted}(...)` skips nn.Module.__call__ (forward hooks, DDP and FSDP "
                                        f"logic); call `{call.receiver}(...)`")
