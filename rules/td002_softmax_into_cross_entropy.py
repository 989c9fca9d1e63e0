"""TD002: probabilities (softmax, log_softmax, sigmoid) fed to a loss that expects logits."""

from __future__ import annotations

from torchdoctor.dataflow import CROSS_ENTROPY_AMONG, LOG_SOFTMAX, LOGIT_LOSSES, SIGMOID, SOFTMAX
from torchdoctor.facts import argument
from torchdoctor.rule import Rule

_CROSS_ENTROPY = {"torch.nn.CrossEntropyLoss", "torch.nn.functional.cross_entropy"}
_BCE_WITH_LOGITS = {"torch.nn.BCEWithLogitsLoss", "torch.nn.functional.binary_cross_entropy_with_logits"}


class SoftmaxIntoCrossEntropy(Rule):
    code = "TD002"
    name = "softmax-into-cross-entropy"
    severity = "error"
    summary = "Softmax/log_softmax output passed to CrossEntropyLoss, or sigmoid/softmax output to BCEWithLogitsLoss"
    rationale = """
        `nn.CrossEntropyLoss` and `F.cross_entropy` apply `log_softmax` to their input
        themselves; `BCEWithLogitsLoss` applies `sigmoid`. Feeding them probabilities
        (softmax or sigmoid output)
        squashes the values twice: the loss can never reach zero, gradients shrink as
        the model grows confident, and training stalls at a mediocre accuracy without
        any error. (A `log_softmax` output is left unchanged by a second `log_softmax`,
        so that case only wastes work and hides intent: use `NLLLoss` for it.)
        The softmax can hide in the model: a `forward` that ends in `F.softmax` or an
        `nn.Sequential` whose last layer is `nn.Softmax`, in another file too.
    """
    bad = """
        import torch.nn as nn
        import torch.nn.functional as F

        class Classifier(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(128, 10)

            def forward(self, x):
                return F.softmax(self.fc(x), dim=-1)

        def train_step(x, y, opt):
            model = Classifier()
            criterion = nn.CrossEntropyLoss()
            loss = criterion(model(x), y)  # expect: TD002
            opt.zero_grad()
            loss.backward()
            opt.step()
    """
    good = """
        import torch.nn as nn
        import torch.nn.functional as F

        class Classifier(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(128, 10)

            def forward(self, x):
                return self.fc(x)  # logits

        def train_step(x, y, opt):
            model = Classifier()
            criterion = nn.CrossEntropyLoss()
            logits = model(x)
            loss = criterion(logits, y)
            confidence = F.softmax(logits, dim=-1).max(dim=-1).values  # for logging only
            opt.zero_grad()
            loss.backward()
            opt.step()
            return confidence
    """
    fix_hint = (
        "Pass the raw logits to the loss and apply softmax/sigmoid only where probabilities are needed "
        "(metrics, sampling, inference); for a model that must output log-probabilities, use `nn.NLLLoss`."
    )
    triggers = ("cross_entropy", "CrossEntropyLoss", "with_logits", "WithLogitsLoss")

    def check(self, ctx):
        flow = ctx.dataflow
        for call in ctx.facts.calls:
            loss = self._loss_kind(ctx, call)
            if loss is None:
                continue
            value = argument(call.node, 0, "input")
            if value is None:
                continue
            kind = flow.kind(value, call.function, call.context.order)
            what = ctx.code(value)
            if loss == "CrossEntropyLoss" and kind in (SOFTMAX, LOG_SOFTMAX):
                yield ctx.report(
                    call.node,
                    f"'{what}' is {kind} output, but CrossEntropyLoss applies log_softmax itself"
                    + (
                        ": the probabilities are squashed twice and training stalls; pass the logits"
                        if kind == SOFTMAX
                        else " (the second one is redundant); pass the logits, or use NLLLoss on log-probabilities"
                    ),
                )
            elif loss == LOGIT_LOSSES and kind == SOFTMAX:
                yield ctx.report(
                    call.node,
                    f"'{what}' is softmax output, but the loss it goes to (CrossEntropyLoss or BCEWithLogitsLoss, "
                    "chosen by a flag) squashes its input itself: the probabilities are squashed twice; pass the logits",
                )
            elif loss == CROSS_ENTROPY_AMONG and kind == SOFTMAX and flow.kind_on_every_path(value, call.function, call.context.order) == SOFTMAX:
                yield ctx.report(
                    call.node,
                    f"'{what}' is softmax output, and one of the losses it may reach (picked by a flag or by the caller) "
                    "is CrossEntropyLoss, which applies log_softmax itself: with that choice the probabilities are "
                    "squashed twice and training stalls; pass the logits",
                )
            elif loss == "BCEWithLogitsLoss" and kind in (SIGMOID, SOFTMAX):
                yield ctx.report(
                    call.node,
                    f"'{what}' is {kind} output, but BCEWithLogitsLoss applies sigmoid itself: "
                    "the probabilities are squashed twice and training stalls; pass the logits",
                )

    @staticmethod
    def _loss_kind(ctx, call) -> str | None:
        loss = ctx.dataflow.loss_called(call)
        if loss in _CROSS_ENTROPY:
            return "CrossEntropyLoss"
        if loss in _BCE_WITH_LOGITS:
            return "BCEWithLogitsLoss"
        return loss if loss in (LOGIT_LOSSES, CROSS_ENTROPY_AMONG) else None
