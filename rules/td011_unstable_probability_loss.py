"""TD011: sigmoid then BCELoss, or log(softmax(x)) then NLLLoss: use the fused with-logits form."""

from __future__ import annotations

from torchdoctor.dataflow import LOG_OF_SOFTMAX, SIGMOID
from torchdoctor.facts import argument
from torchdoctor.rule import Rule

_BCE = {"torch.nn.BCELoss", "torch.nn.functional.binary_cross_entropy"}
_NLL = {"torch.nn.NLLLoss", "torch.nn.functional.nll_loss"}


class UnstableProbabilityLoss(Rule):
    code = "TD011"
    name = "unstable-probability-loss"
    severity = "warning"
    summary = "sigmoid + BCELoss or log(softmax) + NLLLoss: numerically unstable, use the fused form"
    rationale = """
        `sigmoid` saturates to exactly 0 or 1 in float32 (and much sooner in float16), after
        which `BCELoss` takes log(0), clamps it to -100 and the gradient vanishes;
        `log(softmax(x))` underflows the same way. `BCEWithLogitsLoss` and `log_softmax` +
        `NLLLoss` (or `CrossEntropyLoss`) compute the same values with the log-sum-exp trick,
        stably, and `BCELoss` refuses to run under autocast for this reason.
    """
    bad = """
        import torch
        import torch.nn as nn

        def losses(logits, y, scores, labels):
            probs = torch.sigmoid(logits)
            bce = nn.BCELoss()(probs, y)  # expect: TD011
            logp = torch.log(torch.softmax(scores, dim=-1))
            nll = nn.functional.nll_loss(logp, labels)  # expect: TD011
            return bce + nll
    """
    good = """
        import torch
        import torch.nn as nn

        def losses(logits, y, scores, labels, probs_from_elsewhere):
            bce = nn.BCEWithLogitsLoss()(logits, y)
            nll = nn.functional.nll_loss(torch.log_softmax(scores, dim=-1), labels)
            calibrated = nn.functional.binary_cross_entropy(probs_from_elsewhere, y)
            return bce + nll + calibrated
    """
    fix_hint = "Feed logits to `BCEWithLogitsLoss`; use `log_softmax` (or `CrossEntropyLoss` on logits) instead of `log(softmax(x))`."
    triggers = ("BCELoss", "binary_cross_entropy", "NLLLoss", "nll_loss")

    def check(self, ctx):
        flow = ctx.dataflow
        for call in ctx.facts.calls:
            loss = flow.loss_called(call)
            if loss not in _BCE and loss not in _NLL:
                continue
            value = argument(call.node, 0, "input")
            if value is None:
                continue
            kind = flow.kind(value, call.function, call.context.order)
            if loss in _BCE and kind == SIGMOID:
                yield ctx.report(call.node, f"`{ctx.code(value)}` is sigmoid output fed to BCELoss: it saturates and "
                                            "the gradient vanishes; pass the logits to BCEWithLogitsLoss")
            elif loss in _NLL and kind == LOG_OF_SOFTMAX:
                yield ctx.report(call.node, f"`{ctx.code(value)}` is log(softmax(x)): it underflows to -inf; use "
                                            "log_softmax (or CrossEntropyLoss on the logits)")
