"""TD014: .item()/.cpu()/.tolist() every training iteration: a host sync per step."""

from __future__ import annotations

from torchdoctor.rule import Rule


class ItemEveryStep(Rule):
    code = "TD014"
    name = "item-every-step"
    severity = "info"
    summary = ".item()/.cpu()/.tolist() every training step forces a GPU sync (log every N steps instead)"
    rationale = """
        `.item()`, `.cpu()` and `.tolist()` on a CUDA tensor wait for every queued kernel to finish:
        the CPU cannot run ahead and queue the next step, so the GPU idles between steps. Once per
        logging interval is free; once per step costs a few percent to tens of percent on small
        models. Advice, off by default (`--select TD014`).
    """
    bad = """
        import torch

        def train(model, loader, opt):
            for x, y in loader:
                opt.zero_grad()
                loss = torch.nn.functional.mse_loss(model(x), y)
                loss.backward()
                opt.step()
                print(loss.item())  # expect: TD014
    """
    good = """
        import torch

        def train(model, loader, opt, log_every=100):
            for step, (x, y) in enumerate(loader):
                opt.zero_grad()
                loss = torch.nn.functional.mse_loss(model(x), y)
                loss.backward()
                opt.step()
                if step % log_every == 0:
                    print(loss.item())
    """
    fix_hint = "Read values on the host only every N steps (or accumulate on the device and read once per epoch)."
    triggers = ("item()", ".cpu()", ".tolist()")

    def check(self, ctx):
        training = ctx.training
        for loop in ctx.facts.loops:
            if not any(e.kind == "backward" and e.direct for e in training.loop_events(loop)):
                continue
            for call in loop.calls:
                if call.method in ("item", "cpu", "tolist") and call.context.loop is loop and not call.node.args:
                    if len(call.context.conditions) <= loop.condition_depth:  # not under an `if` in the loop
                        yield ctx.report(call.node, f"`.{call.method}()` every iteration waits for the GPU (a host sync "
                                                    "per step); read it every N steps instead")
                        break
