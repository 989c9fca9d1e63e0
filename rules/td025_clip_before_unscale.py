"""TD025: gradient clipping on scaled gradients, or optimizer.step() bypassing the GradScaler."""

from __future__ import annotations

import libcst as cst

from torchdoctor.facts import dotted_name
from torchdoctor.rule import Rule

_CLIP = {"torch.nn.utils.clip_grad_norm_", "torch.nn.utils.clip_grad_value_", "torch.nn.utils.clip_grad.clip_grad_norm_"}


class ClipBeforeUnscale(Rule):
    code = "TD025"
    name = "clip-before-unscale"
    severity = "error"
    summary = "Gradients clipped while still scaled by GradScaler, or optimizer.step() bypassing the scaler"
    rationale = """
        With `GradScaler`, `backward()` produces gradients multiplied by the loss scale (65536 at
        first). Clipping them before `scaler.unscale_(optimizer)` clips the scaled values: the
        threshold is effectively divided by the scale and the gradients are crushed. Calling
        `optimizer.step()` directly steps with the scaled gradients (and skips the inf/NaN check):
        use `scaler.step(optimizer)`.
    """
    bad = """
        import torch

        def train(model, loader, opt):
            scaler = torch.amp.GradScaler("cuda")
            for x, y in loader:
                opt.zero_grad()
                with torch.autocast("cuda", dtype=torch.float16):
                    loss = torch.nn.functional.cross_entropy(model(x), y)
                scaler.scale(loss).backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)  # expect: TD025
                opt.step()  # expect: TD025
                scaler.update()
    """
    good = """
        import torch

        def train(model, loader, opt):
            scaler = torch.amp.GradScaler("cuda")
            for x, y in loader:
                opt.zero_grad()
                with torch.autocast("cuda", dtype=torch.float16):
                    loss = torch.nn.functional.cross_entropy(model(x), y)
                scaler.scale(loss).backward()
                scaler.unscale_(opt)
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                scaler.step(opt)
                scaler.update()
    """
    fix_hint = "Call `scaler.unscale_(optimizer)` before clipping, and `scaler.step(optimizer)` instead of `optimizer.step()`."
    triggers = ("scale(",)

    def check(self, ctx):
        training = ctx.training
        for loop in ctx.facts.loops:
            calls = [c for c in loop.calls if c.context.loop is loop or c.context.loop in _inner(loop, ctx)]
            scaled = [c for c in calls if c.method == "backward" and _is_scaled_backward(c.node)]
            if not scaled:
                continue
            first_scaled = min(c.context.order for c in scaled)
            unscales = [c.context.order for c in calls if c.method == "unscale_"]
            for c in calls:
                if c.context.order <= first_scaled:
                    continue
                if (c.qualname in _CLIP or c.method in ("clip_grad_norm_", "clip_grad_value_")) and \
                        not any(first_scaled < u < c.context.order for u in unscales):
                    yield ctx.report(c.node, "gradients are clipped while still multiplied by the GradScaler's scale: "
                                             "call `scaler.unscale_(optimizer)` first")
                event = training.event_of(c)
                if event and event[0] == "step" and c.method == "step" and not (c.receiver or "").lower().endswith("scaler"):
                    if not any(s.method == "step" and (s.receiver or "").lower().endswith("scaler") for s in calls):
                        yield ctx.report(c.node, f"`{c.dotted}()` steps with gradients still scaled by the GradScaler "
                                                 f"(and skips its inf/NaN check): use `scaler.step({c.receiver})`")


def _inner(loop, ctx):
    return [l for l in ctx.facts.loops if l.parent is loop]


def _is_scaled_backward(call: cst.Call) -> bool:
    """`scaler.scale(loss).backward()`."""
    receiver = call.func.value if isinstance(call.func, cst.Attribute) else None
    return isinstance(receiver, cst.Call) and isinstance(receiver.func, cst.Attribute) and \
        receiver.func.attr.value == "scale" and "scaler" in (dotted_name(receiver.func.value) or "").lower()
