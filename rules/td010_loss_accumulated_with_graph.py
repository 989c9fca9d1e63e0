"""TD010: a loss tensor summed or stored across iterations without .item()/.detach()."""

from __future__ import annotations

import libcst as cst

from torchdoctor.facts import dotted_name
from torchdoctor.rule import Rule


class LossAccumulatedWithGraph(Rule):
    code = "TD010"
    name = "loss-accumulated-with-graph"
    severity = "warning"
    summary = "total += loss / losses.append(loss) keeps every step's autograd graph alive"
    rationale = """
        A loss tensor carries its autograd graph. Summing it into a running total or appending
        it to a list links every step's graph to the next: memory grows step after step (the
        graphs of all iterations stay referenced), and on GPU the run eventually dies with an
        out-of-memory error. Accumulate `loss.item()` (a Python float) or `loss.detach()`.
    """
    bad = """
        import torch

        def train(model, loader, opt):
            running, history = 0.0, []
            for x, y in loader:
                opt.zero_grad()
                loss = torch.nn.functional.mse_loss(model(x), y)
                loss.backward()
                opt.step()
                running += loss  # expect: TD010
                history.append(loss)  # expect: TD010
            return running, history
    """
    good = """
        import torch

        def train(model, loader, opt, accum=4):
            running, history = 0.0, []
            for x, y in loader:
                opt.zero_grad()
                loss = torch.nn.functional.mse_loss(model(x), y)
                loss.backward()
                opt.step()
                running += loss.item()
                history.append(loss.detach())
            for x, y in loader:
                total = 0
                for part in (x, y):
                    total += model(part).sum()  # several losses of one step, summed before backward
                total.backward()
            return running, history
    """
    fix_hint = "Accumulate `loss.item()` (or `loss.detach()`), not the loss tensor."
    triggers = ("backward",)

    def check(self, ctx):
        training = ctx.training
        for loop in ctx.facts.loops:
            if not any(e.kind == "backward" for e in training.loop_events(loop)):
                continue
            losses = self._backward_roots(ctx, loop)
            if not losses:
                continue
            for a in loop.assigns:
                if a.augmented in ("AddAssign",) and len(a.targets) == 1 and isinstance(a.value, cst.Name) \
                        and a.value.value in losses and a.context.loop is loop \
                        and not self._assigned_in_loop(loop, a.targets[0]):
                    yield ctx.report(a.node, f"`{a.targets[0]} += {a.value.value}` adds the loss tensor with its "
                                             "graph every iteration, keeping all graphs alive; add "
                                             f"`{a.value.value}.item()`")
            for call in loop.calls:
                if call.method == "append" and call.context.loop is loop and len(call.node.args) == 1:
                    arg = call.node.args[0].value
                    if isinstance(arg, cst.Name) and arg.value in losses and not self._assigned_in_loop(loop, call.receiver):
                        yield ctx.report(call.node, f"`{call.receiver}.append({arg.value})` stores the loss tensor "
                                                    "with its graph every iteration; append "
                                                    f"`{arg.value}.item()` or `{arg.value}.detach()`")

    @staticmethod
    def _backward_roots(ctx, loop) -> set[str]:
        names = set()
        for call in loop.calls:
            if call.method != "backward" or not isinstance(call.node.func, cst.Attribute):
                continue
            root = call.node.func.value
            if isinstance(root, cst.Call) and root.args:  # scaler.scale(loss).backward()
                root = root.args[0].value
            name = dotted_name(root)
            if name and "." not in name:
                names.add(name)
        return names

    @staticmethod
    def _assigned_in_loop(loop, name) -> bool:
        """An accumulator reset inside the loop (or inside an enclosing loop: per-chunk losses of one
        step, reset every step) only lives for one iteration."""
        while loop is not None:
            if any(a.augmented is None and name in a.targets for a in loop.assigns):
                return True
            loop = loop.parent
        return False
