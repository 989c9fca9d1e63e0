"""TD029: torch.cuda.amp.autocast / GradScaler instead of torch.amp."""

from __future__ import annotations

import libcst as cst

from torchdoctor.facts import dotted_name
from torchdoctor.rule import Rule

_DEPRECATED = {"torch.cuda.amp.autocast": "autocast", "torch.cuda.amp.GradScaler": "GradScaler"}


class DeprecatedCudaAmp(Rule):
    code = "TD029"
    name = "deprecated-cuda-amp"
    severity = "info"
    summary = "torch.cuda.amp.autocast/GradScaler are deprecated: use torch.amp with a device type"
    rationale = """
        `torch.cuda.amp.autocast(...)` and `torch.cuda.amp.GradScaler(...)` emit deprecation
        warnings since torch 2.4 and will be removed; `torch.amp.autocast("cuda", ...)` and
        `torch.amp.GradScaler("cuda", ...)` are the same thing and also work for other devices.
    """
    bad = """
        import torch

        scaler = torch.cuda.amp.GradScaler()  # expect: TD029

        def step(model, x):
            with torch.cuda.amp.autocast(dtype=torch.float16):  # expect: TD029
                return model(x)
    """
    good = """
        import torch

        scaler = torch.amp.GradScaler("cuda")

        def step(model, x):
            with torch.amp.autocast("cuda", dtype=torch.float16):
                return model(x)
    """
    fixed = """
        import torch

        scaler = torch.amp.GradScaler("cuda")

        def step(model, x):
            with torch.amp.autocast("cuda", dtype=torch.float16):
                return model(x)
    """
    fix_hint = "Use `torch.amp.autocast(\"cuda\", ...)` and `torch.amp.GradScaler(\"cuda\", ...)`."
    triggers = ("cuda.amp",)

    def check(self, ctx):
        for call in ctx.facts.calls:
            what = _DEPRECATED.get(call.qualname or "")
            if what is None:
                continue
            yield ctx.report(
                call.node,
                f"`torch.cuda.amp.{what}` is deprecated; use `torch.amp.{what}(\"cuda\", ...)`",
                replace=_fix(call.node, what),
            )


def _fix(node: cst.Call, what: str):
    """`torch.cuda.amp.X(args)` -> `torch.amp.X("cuda", args)`, only when spelled through `<torch>.cuda.amp`."""
    name = dotted_name(node.func) or ""
    head, _, rest = name.partition(".")
    if rest != f"cuda.amp.{what}" or not head:
        return None
    if any(a.keyword is not None and a.keyword.value == "device_type" for a in node.args):
        return None
    new_func = cst.parse_expression(f"{head}.amp.{what}")
    device = cst.Arg(cst.SimpleString('"cuda"'), comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")) if node.args else cst.MaybeSentinel.DEFAULT)
    return node, node.with_changes(func=new_func, args=[device, *node.args])
