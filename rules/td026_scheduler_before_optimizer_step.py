"""TD026: scheduler.step() before the first optimizer.step() of its loop."""

from __future__ import annotations

import re

from torchdoctor.rule import Rule

_SCHEDULER = re.compile(r"sched|lr_policy|warmup", re.I)


class SchedulerBeforeOptimizerStep(Rule):
    code = "TD026"
    name = "scheduler-before-optimizer-step"
    severity = "warning"
    summary = "scheduler.step() before optimizer.step() in the same iteration: the first learning rate is skipped"
    rationale = """
        Since PyTorch 1.1 the scheduler must step after the optimizer. Stepping it first skips
        the initial learning rate of the schedule (warm-up starts one step late, step decays
        come one epoch early) and PyTorch warns "Detected call of lr_scheduler.step() before
        optimizer.step()".
    """
    bad = """
        import torch

        def train(model, loader, opt, sched):
            for x, y in loader:
                opt.zero_grad()
                loss = torch.nn.functional.mse_loss(model(x), y)
                loss.backward()
                sched.step()  # expect: TD026
                opt.step()
    """
    good = """
        import torch

        def train(model, loader, opt, sched, epochs):
            for epoch in range(epochs):
                for x, y in loader:
                    opt.zero_grad()
                    loss = torch.nn.functional.mse_loss(model(x), y)
                    loss.backward()
                    opt.step()
                    sched.step()
    """
    fix_hint = "Call `scheduler.step()` after `optimizer.step()`."
    triggers = ("sched",)

    def check(self, ctx):
        training = ctx.training
        for loop in ctx.facts.loops:
            direct = [c for c in loop.calls if c.context.loop is loop]
            steps = [c for c in direct if (training.event_of(c) or ("",))[0] == "step"]
            if not steps:
                continue
            first_step = min(c.context.order for c in steps)
            for c in direct:
                if c.method == "step" and c.receiver and _SCHEDULER.search(c.receiver.rsplit(".", 1)[-1]) \
                        and c.context.order < first_step and not c.node.args:
                    yield ctx.report(c.node, f"`{c.dotted}()` runs before the optimizer's step in this iteration: "
                                             "the schedule's first learning rate is skipped; step the scheduler after "
                                             "the optimizer")
