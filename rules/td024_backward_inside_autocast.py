"""TD024: backward() inside an autocast block."""

from __future__ import annotations

from torchdoctor.rule import Rule


class BackwardInsideAutocast(Rule):
    code = "TD024"
    name = "backward-inside-autocast"
    severity = "warning"
    summary = "backward() inside an autocast block: only the forward pass belongs there"
    rationale = """
        Autocast should wrap the forward pass and the loss computation only. Backward ops run in
        the dtype their forward ops chose anyway; calling `backward()` inside the block is not
        recommended by PyTorch and can change which ops autocast touches (and hides the AMP
        structure from readers).
    """
    bad = """
        import torch

        def step(model, x, y, opt, scaler):
            with torch.autocast("cuda", dtype=torch.float16):
                loss = torch.nn.functional.cross_entropy(model(x), y)
                scaler.scale(loss).backward()  # expect: TD024
            scaler.step(opt)
            scaler.update()
            opt.zero_grad()
    """
    good = """
        import torch

        def step(model, x, y, opt, scaler):
            with torch.autocast("cuda", dtype=torch.float16):
                loss = torch.nn.functional.cross_entropy(model(x), y)
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
            opt.zero_grad()
    """
    fix_hint = "Dedent `backward()` (and the optimizer step) out of the `autocast` block."
    triggers = ("autocast",)

    def check(self, ctx):
        for call in ctx.facts.calls:
            if call.method == "backward" and any(w.rsplit(".", 1)[-1] == "autocast" for w in call.context.withs):
                yield ctx.report(
                    call.node,
                    "`backward()` inside an autocast block: autocast should cover the forward pass and the loss only; "
                    "dedent the backward (and the optimizer step) out of the `with`",
                )
