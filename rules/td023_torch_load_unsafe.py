"""TD023: torch.load without weights_only=True."""

from __future__ import annotations

import libcst as cst

from torchdoctor.facts import keyword_arg
from torchdoctor.rule import Rule


class TorchLoadUnsafe(Rule):
    code = "TD023"
    name = "torch-load-unsafe"
    severity = "warning"
    summary = "torch.load without weights_only=True can run arbitrary code from the file"
    rationale = """
        `torch.load` unpickles: with `weights_only=False` (the default before torch 2.6, and
        what older installs still do) a checkpoint can execute any code when loaded. Pass
        `weights_only=True` for state dicts and tensors; it also makes the intent explicit on every
        torch version. Pass `map_location` too, so a checkpoint saved on GPU loads on a CPU machine.
    """
    bad = """
        import torch

        def restore(model, path):
            model.load_state_dict(torch.load(path))  # expect: TD023
            extra = torch.load(path, map_location="cpu", weights_only=False)  # expect: TD023
            return extra
    """
    good = """
        import torch

        def restore(model, path, **load_options):
            model.load_state_dict(torch.load(path, map_location="cpu", weights_only=True))
            return torch.load(path, **load_options)
    """
    fix_hint = "Call `torch.load(path, map_location=\"cpu\", weights_only=True)` (or the device you load to)."
    triggers = ("load",)

    def check(self, ctx):
        for call in ctx.facts.calls_named("torch.load"):
            if any(a.star == "**" for a in call.node.args):
                continue  # options forwarded from the caller: a trusted-checkpoint helper decides
            arg = keyword_arg(call.node, "weights_only")
            if arg is not None and not (isinstance(arg.value, cst.Name) and arg.value.value == "False"):
                continue
            hint = "" if keyword_arg(call.node, "map_location") is not None else " and `map_location=` for CPU-only machines"
            yield ctx.report(
                call.node,
                "`torch.load` without `weights_only=True` unpickles arbitrary objects: a crafted file runs code "
                f"when loaded; pass `weights_only=True`{hint}",
            )
