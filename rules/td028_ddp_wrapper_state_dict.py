"""TD028: saving a DDP/DataParallel wrapper's state_dict (keys prefixed with `module.`)."""

from __future__ import annotations

import libcst as cst

from torchdoctor.dataflow import DDP_WRAPPERS
from torchdoctor.facts import dotted_name
from torchdoctor.rule import Rule


class DdpWrapperStateDict(Rule):
    code = "TD028"
    name = "ddp-wrapper-state-dict"
    severity = "warning"
    summary = "Saving ddp_model.state_dict(): every key gets a `module.` prefix the plain model cannot load"
    rationale = """
        A DDP or DataParallel wrapper holds the model as its `module` attribute, so its state dict
        names every tensor `module.<name>`. Loading that checkpoint into the unwrapped model (for
        evaluation, export or single-GPU fine-tuning) fails with missing and unexpected keys.
        Save `ddp_model.module.state_dict()`.
    """
    bad = """
        import torch
        from torch.nn.parallel import DistributedDataParallel as DDP

        def save(model, rank, path):
            ddp_model = DDP(model, device_ids=[rank])
            torch.save(ddp_model.state_dict(), path)  # expect: TD028
    """
    good = """
        import torch
        from torch.nn.parallel import DistributedDataParallel as DDP

        def save(model, rank, path):
            ddp_model = DDP(model, device_ids=[rank])
            torch.save(ddp_model.module.state_dict(), path)
            torch.save({"model": model.state_dict()}, path)
    """
    fix_hint = "Save `ddp_model.module.state_dict()` (the wrapped model's own state dict)."
    triggers = ("DataParallel", "DDP")

    def check(self, ctx):
        flow = ctx.dataflow
        for save in ctx.facts.calls_named("torch.save"):
            if not save.node.args:
                continue
            for state_call in _state_dict_calls(save.node.args[0].value):
                owner = state_call.func.value
                name = dotted_name(owner)
                if name is None:
                    continue
                origin = flow.origin(owner, save.function, save.context.order)
                if origin is not None and origin.qualname() in DDP_WRAPPERS:
                    yield ctx.report(
                        state_call,
                        f"`{name}.state_dict()` of a DDP/DataParallel wrapper names every key `module.*`, which the "
                        f"unwrapped model cannot load; save `{name}.module.state_dict()`",
                    )


def _state_dict_calls(node: cst.CSTNode) -> list[cst.Call]:
    found = []
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "state_dict":
        found.append(node)
    elif isinstance(node, cst.Dict):
        for el in node.elements:
            if isinstance(el, cst.DictElement):
                found += _state_dict_calls(el.value)
    return found
