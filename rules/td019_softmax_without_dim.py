"""TD019: softmax / log_softmax / nn.Softmax without an explicit dim."""

from __future__ import annotations

from torchdoctor.facts import keyword_arg, positional_args
from torchdoctor.rule import Rule

_FUNCTIONS = {"torch.nn.functional.softmax", "torch.nn.functional.log_softmax", "torch.nn.functional.softmin"}
_MODULES = {"torch.nn.Softmax", "torch.nn.LogSoftmax", "torch.nn.Softmin"}


class SoftmaxWithoutDim(Rule):
    code = "TD019"
    name = "softmax-without-dim"
    severity = "warning"
    summary = "softmax/log_softmax/nn.Softmax without dim: the implicit choice depends on the input's rank"
    rationale = """
        Without `dim`, PyTorch picks a dimension from the input's number of dimensions (0 for 0-, 1-
        and 3-d inputs, 1 otherwise) and warns that this is deprecated. For a batch of sequences
        (3-d) that normalises across the batch, silently mixing examples.
    """
    bad = """
        import torch.nn as nn
        import torch.nn.functional as F

        class Head(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(8, 4)
                self.norm = nn.Softmax()  # expect: TD019

            def forward(self, x):
                return F.log_softmax(self.fc(x))  # expect: TD019
    """
    good = """
        import torch.nn as nn
        import torch.nn.functional as F

        class Head(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(8, 4)
                self.norm = nn.Softmax(dim=-1)

            def forward(self, x):
                return F.log_softmax(self.fc(x), -1) + F.softmax(x, dim=1).log()
    """
    fix_hint = "Pass `dim=` explicitly (usually `dim=-1`, the class dimension)."
    triggers = ("softmax", "Softmax", "softmin", "Softmin")

    def check(self, ctx):
        for call in ctx.facts.calls:
            if call.qualname in _FUNCTIONS:
                if len(positional_args(call.node)) < 2 and keyword_arg(call.node, "dim") is None and not _has_star(call.node):
                    yield ctx.report(call.node, f"`{call.dotted}` without `dim`: the dimension is guessed from the "
                                                "input's rank (across the batch for 3-d inputs); pass `dim=-1`")
            elif call.qualname in _MODULES:
                if not call.node.args:
                    yield ctx.report(call.node, f"`{call.dotted}()` without `dim`: the dimension is guessed from the "
                                                "input's rank (across the batch for 3-d inputs); pass `dim=-1`")


def _has_star(call) -> bool:
    return any(a.star for a in call.args)
