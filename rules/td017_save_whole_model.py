"""TD017: torch.save of a whole module instead of its state_dict()."""

from __future__ import annotations

from torchdoctor.facts import dotted_name, positional_args
from torchdoctor.rule import Rule


class SaveWholeModel(Rule):
    code = "TD017"
    name = "save-whole-model"
    severity = "warning"
    summary = "torch.save(model, ...) pickles the whole module instead of its state_dict()"
    rationale = """
        Saving a module pickles its class by import path: the checkpoint breaks as soon as the
        class is renamed, moved or edited, loading it runs arbitrary code (so it cannot be
        loaded with `weights_only=True`), and it drags along whatever the module references.
        `state_dict()` is a plain mapping of tensors that any version of the code can load.
    """
    bad = """
        import torch
        import torch.nn as nn

        def checkpoint(path):
            model = nn.Sequential(nn.Linear(4, 4), nn.ReLU())
            torch.save(model, path)  # expect: TD017
    """
    good = """
        import torch
        import torch.nn as nn

        def checkpoint(path, optimizer, epoch):
            model = nn.Sequential(nn.Linear(4, 4), nn.ReLU())
            torch.save(model.state_dict(), path)
            torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch}, path)
    """
    fix_hint = "Save `model.state_dict()` (with the optimizer's and the epoch in a dict for checkpoints) and load it into a freshly built model."
    triggers = ("save",)

    def check(self, ctx):
        evaluation, training = ctx.evaluation, ctx.training
        for call in ctx.facts.calls_named("torch.save"):
            args = positional_args(call.node)
            if not args:
                continue
            obj = args[0]
            name = dotted_name(obj)
            if name is None:
                continue
            inst = ctx.dataflow.instance_of(obj, call.function, call.context.order)
            is_module = False
            if inst is not None and inst.cls is not None:
                is_module = training.is_module_class(inst.facts, inst.cls)
            elif inst is not None and inst.factory is not None:
                is_module = True
            elif inst is not None and (inst.sequential is not None or (inst.qualname or "").startswith("torch.nn.")):
                is_module = not (inst.qualname or "").endswith(("Parameter", "ParameterDict", "ParameterList"))
            elif inst is None:
                is_module = evaluation.is_model_name(name) and ctx.dataflow.value_of(name, call.function, call.context.order) is None
            if is_module:
                yield ctx.report(
                    call.node,
                    f"`torch.save({name}, ...)` pickles the whole module (its class by import path): the file breaks "
                    f"when the code changes and cannot be loaded with weights_only=True; save `{name}.state_dict()`",
                )
