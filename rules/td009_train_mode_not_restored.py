"""TD009: an epoch loop switches to eval() for validation and never back to train()."""

from __future__ import annotations

import re

from torchdoctor.facts import dotted_name
from torchdoctor.rule import Rule


_AUXILIARY = re.compile(r"ema|teacher|target|average|swa|frozen|ref", re.I)  # models meant to stay in eval


class TrainModeNotRestored(Rule):
    code = "TD009"
    name = "train-mode-not-restored"
    severity = "error"
    summary = "eval() for validation inside the epoch loop, never train() again: later epochs train in eval mode"
    rationale = """
        After the first validation the model stays in eval mode: from the second epoch on,
        Dropout is off and BatchNorm stops updating its statistics while training. The loss
        curve looks fine, the model generalises worse, and nothing reports it.
    """
    bad = """
        import torch

        def fit(model, train_loader, val_loader, opt, epochs):
            for epoch in range(epochs):
                for x, y in train_loader:
                    opt.zero_grad()
                    torch.nn.functional.cross_entropy(model(x), y).backward()
                    opt.step()
                model.eval()  # expect: TD009
                with torch.no_grad():
                    for x, y in val_loader:
                        model(x)
    """
    good = """
        import torch

        def fit(model, train_loader, val_loader, opt, epochs):
            for epoch in range(epochs):
                model.train()
                for x, y in train_loader:
                    opt.zero_grad()
                    torch.nn.functional.cross_entropy(model(x), y).backward()
                    opt.step()
                model.eval()
                with torch.no_grad():
                    for x, y in val_loader:
                        model(x)
    """
    fix_hint = "Call `model.train()` at the start of each epoch's training pass (or at the end of validation)."
    triggers = ("eval(",)

    def check(self, ctx):
        training, facts = ctx.training, ctx.facts
        for loop in facts.loops:
            if loop.parent is not None:
                continue  # an epoch loop is an outer loop
            events = training.loop_events(loop)
            if not any(e.kind == "backward" for e in events) or not any(e.kind == "step" for e in events):
                continue
            modes = self._mode_calls(ctx, loop)
            if not modes or any(kind in ("train", "unknown", "frozen") for kind, _, _ in modes):
                continue  # restored, handed to code we cannot see, or chosen by the training pass itself
            evals = [site for kind, site, who in modes if kind == "eval" and not _AUXILIARY.search(who or "")]
            if evals:
                yield ctx.report(
                    evals[0],
                    "the model is switched to eval() for validation inside the epoch loop and never back to "
                    "train(): every epoch after the first trains with Dropout off and BatchNorm frozen; call "
                    "model.train() before each training pass",
                )

    def _mode_calls(self, ctx, loop):
        """(kind, site) for eval()/train() calls in the loop, following local helpers two levels deep."""
        out = []
        for call in loop.calls:
            out += self._modes_of(ctx, call, call.node, 2)
        return out

    def _modes_of(self, ctx, call, site, depth):
        found = []
        if call.method == "eval" and call.receiver is not None and not call.node.args:
            found.append(("eval", site, call.receiver))
        elif call.method == "train" and call.receiver is not None:
            args = call.node.args
            off = args and getattr(args[0].value, "value", None) == "False"
            found.append(("eval" if off else "train", site, call.receiver))
        callee = ctx.facts.resolve_function(call)
        if callee is not None and depth > 0:
            trains_here = any((ctx.training.event_of(c) or ("",))[0] in ("backward", "step") for c in callee.calls)
            for inner in callee.calls:
                more = self._modes_of(ctx, inner, site, depth - 1)
                if trains_here and inner.method == "eval":
                    # linear probing: the training pass itself keeps the frozen backbone in eval mode
                    more = [("frozen", s_, who) if kind == "eval" else (kind, s_, who) for kind, s_, who in more]
                found += more
        elif callee is None and call.dotted and "." not in call.dotted and ctx.project is not None:
            other = ctx.project.resolve_imported(ctx.facts, call.dotted)
            if other is not None and hasattr(other[1], "calls"):
                found += [("train", site, c.receiver) for c in other[1].calls if c.method == "train"]
                found += [("eval", site, c.receiver) for c in other[1].calls if c.method == "eval" and not c.node.args]
            elif any(ctx.evaluation.is_model_name(dotted_name(a.value)) for a in call.node.args):
                found.append(("unknown", site, None))
        return found
