"""TD020: backward() inside torch.no_grad() / inference_mode()."""

from __future__ import annotations

from torchdoctor.decorators import is_no_grad_name
from torchdoctor.rule import Rule


class BackwardUnderNoGrad(Rule):
    code = "TD020"
    name = "backward-under-no-grad"
    severity = "error"
    summary = "backward() inside torch.no_grad()/inference_mode(): no graph was recorded, it raises"
    rationale = """
        Under `torch.no_grad()` or `torch.inference_mode()` no autograd graph is recorded, so the
        loss has no `grad_fn` and `backward()` raises "element 0 of tensors does not require grad".
        It usually means the training step was pasted into an evaluation block, or a decorator
        meant for evaluation sits on the training function.
    """
    bad = """
        import torch

        @torch.no_grad()
        def train_step(model, x, y, opt):
            loss = torch.nn.functional.mse_loss(model(x), y)
            loss.backward()  # expect: TD020
            opt.step()

        def train(model, x, y, opt):
            with torch.inference_mode():
                loss = model(x).sum()
                loss.backward()  # expect: TD020
    """
    good = """
        import torch

        def train_step(model, x, y, opt):
            with torch.no_grad():
                target = model(y)
            loss = torch.nn.functional.mse_loss(model(x), target)
            loss.backward()
            opt.step()
            with torch.no_grad():
                with torch.enable_grad():
                    model(x).sum().backward()
    """
    fix_hint = "Compute the loss and call `backward()` outside `no_grad`/`inference_mode`; keep those for evaluation."
    triggers = ("backward",)

    def check(self, ctx):
        for call in ctx.facts.calls:
            if call.method != "backward" or call.receiver is None and call.qualname != "torch.autograd.backward":
                continue
            withs = call.context.withs
            last_no_grad = max((i for i, w in enumerate(withs) if is_no_grad_name(w) and not w.endswith("set_grad_enabled")), default=-1)
            last_enable = max((i for i, w in enumerate(withs) if w.endswith("enable_grad") or w.endswith("set_grad_enabled")), default=-1)
            decorated = any(
                is_no_grad_name(d) and not d.endswith("set_grad_enabled") for d in call.function.decorators
            )
            if (last_no_grad > last_enable) or (decorated and last_enable < 0):
                where = "torch.no_grad()/inference_mode()" if last_no_grad >= 0 else f"a function decorated with {call.function.decorators[0]}"
                yield ctx.report(
                    call.node,
                    f"`backward()` inside {where}: no graph was recorded, so it raises \"element 0 of tensors does "
                    "not require grad\"; compute the loss outside the no-grad block",
                )
