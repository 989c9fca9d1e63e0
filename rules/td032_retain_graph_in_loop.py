"""TD032: backward(retain_graph=True) every iteration with no second backward on that graph."""

from __future__ import annotations

import libcst as cst

from torchdoctor.facts import keyword_arg
from torchdoctor.rule import Rule


class RetainGraphInLoop(Rule):
    code = "TD032"
    name = "retain-graph-in-loop"
    severity = "warning"
    summary = "backward(retain_graph=True) every iteration without a second backward: graphs pile up"
    rationale = """
        `retain_graph=True` keeps the graph's saved tensors alive after backward so that a second
        backward can run through it. In a training loop with a single backward per iteration it
        only keeps memory alive (often added to silence "Trying to backward through the graph a
        second time", which points at a tensor reused across iterations that should be detached).
    """
    bad = """
        import torch

        def train(model, loader, opt):
            for x, y in loader:
                opt.zero_grad()
                loss = torch.nn.functional.mse_loss(model(x), y)
                loss.backward(retain_graph=True)  # expect: TD032
                opt.step()
    """
    good = """
        import torch

        def train(gen, disc, loader, opt_g, opt_d):
            for real in loader:
                fake = gen(real)
                d_loss = disc(fake).mean()
                opt_d.zero_grad()
                d_loss.backward(retain_graph=True)  # fake's graph is used again below
                opt_d.step()
                g_loss = -disc(fake).mean()
                opt_g.zero_grad()
                g_loss.backward()
                opt_g.step()
    """
    fix_hint = "Drop `retain_graph=True`; if backward then complains about a second pass, `.detach()` the tensor carried across iterations."
    triggers = ("retain_graph",)

    def check(self, ctx):
        training = ctx.training
        for loop in ctx.facts.loops:
            backwards = [e for e in training.loop_events(loop) if e.kind == "backward"]
            if len(backwards) != 1:
                continue
            node = backwards[0].node
            info = ctx.facts.call_info(node) if isinstance(node, cst.Call) else None
            if info is None or info.context.loop is not loop:
                continue
            retain = keyword_arg(node, "retain_graph")
            if retain is not None and isinstance(retain.value, cst.Name) and retain.value.value == "True":
                yield ctx.report(node, "`backward(retain_graph=True)` with a single backward per iteration keeps every "
                                       "graph's saved tensors alive for nothing; drop retain_graph (detach what is "
                                       "carried across iterations)")
