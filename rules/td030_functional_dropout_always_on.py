"""TD030: F.dropout in forward without training=self.training."""

from __future__ import annotations

from torchdoctor.facts import keyword_arg, positional_args
from torchdoctor.rule import Rule

_DROPOUTS = {
    "torch.nn.functional.dropout", "torch.nn.functional.dropout1d", "torch.nn.functional.dropout2d",
    "torch.nn.functional.dropout3d", "torch.nn.functional.alpha_dropout", "torch.nn.functional.feature_alpha_dropout",
}


class FunctionalDropoutAlwaysOn(Rule):
    code = "TD030"
    name = "functional-dropout-always-on"
    severity = "error"
    summary = "F.dropout in forward without training=self.training: dropout stays on in eval mode"
    rationale = """
        `F.dropout(x, p)` defaults to `training=True`: unlike `nn.Dropout`, it does not follow
        `model.eval()`. Inside `forward` it keeps dropping activations during validation and
        inference, so evaluation is noisy and predictions are randomly wrong.
    """
    bad = """
        import torch.nn as nn
        import torch.nn.functional as F

        class Block(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(8, 8)

            def forward(self, x):
                return F.dropout(self.fc(x), p=0.1)  # expect: TD030
    """
    good = """
        import torch.nn as nn
        import torch.nn.functional as F

        class Block(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(8, 8)

            def forward(self, x):
                x = F.dropout(self.fc(x), p=0.1, training=self.training)
                return F.dropout(x, 0.1, self.training)
    """
    fix_hint = "Pass `training=self.training`, or use an `nn.Dropout` submodule."
    triggers = ("dropout",)

    def check(self, ctx):
        facts, training = ctx.facts, ctx.training
        for cls in facts.classes.values():
            if not training.is_module_class(facts, cls):
                continue
            forward = cls.methods.get("forward")
            if forward is None:
                continue
            for call in forward.calls:
                if call.qualname not in _DROPOUTS:
                    continue
                if keyword_arg(call.node, "training") is not None or len(positional_args(call.node)) >= 3:
                    continue
                if any(a.star for a in call.node.args):
                    continue
                if any("training" in ctx.code(test) for test in call.context.conditions):
                    continue  # `if self.training: x = F.dropout(x, p)`
                yield ctx.report(
                    call.node,
                    f"`{call.dotted}` in {cls.name}.forward without `training=self.training` keeps dropping "
                    "activations after model.eval(); pass `training=self.training`",
                )
