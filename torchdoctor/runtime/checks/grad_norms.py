"""grad-explosion and grad-vanishing: per-layer gradient norms against the run's own history.

On sampled steps, right before the optimizer steps, one fused `torch._foreach_norm`
over every gradient (a handful of kernels, no host sync) gives per-parameter norms;
they are combined per module on the device and read back later without stalling.
A layer explodes when its norm jumps far above its own running median (or past an
absolute bound); it vanishes when a trainable layer's norm stays below a floor.
"""

from __future__ import annotations

import math
import statistics

import torch

from torchdoctor.runtime.check import Check


class GradNorms(Check):
    id = "grad-explosion"
    reports = ("grad-explosion", "grad-vanishing")
    events = frozenset({"step_pre"})
    summary = "per-layer gradient norms far above or below the run's own history"

    def __init__(self, session) -> None:
        super().__init__(session)
        self._history: dict[str, list[float]] = {}
        self._vanished: dict[str, int] = {}

    def step_pre(self, optimizer) -> None:
        if not self.session.sampled:
            return
        computed = self.session.grad_norms(optimizer)
        if computed is None:
            return
        norms, params = computed
        known = self.session.parameter_names()
        modules = [_module(known.get(id(p))) for p in params]
        names = sorted(set(modules))
        index = {n: i for i, n in enumerate(names)}
        with torch.no_grad():
            owner = torch.tensor([index[m] for m in modules], device=norms.device)
            per_module = torch.zeros(len(names), device=norms.device).index_add_(0, owner, norms.square()).sqrt()
        self.session.reader.submit(per_module, self._result, (names, self.session.steps))

    def _result(self, values, context) -> None:
        names, step = context
        t = self.session.thresholds
        for name, norm in zip(names, values):
            history = self._history.setdefault(name, [])
            if not math.isfinite(norm):
                continue  # the non-finite check reports NaN/Inf
            if len(history) >= 3:
                median = statistics.median(history[-20:])
                if norm > t.explode_abs or (median > 0 and norm > t.explode_ratio * median):
                    self.report(
                        f"gradient norm {norm:.3g} is {norm / median if median else float('inf'):.0f}x this layer's "
                        f"median so far ({median:.3g}): exploding gradients; lower the learning rate, add "
                        "clip_grad_norm_, or check the loss scale and normalisation layers",
                        check="grad-explosion", severity="warning", module=name, step=step,
                        details={"norm": norm, "median": median},
                    )
            elif norm > t.explode_abs:
                self.report(
                    f"gradient norm {norm:.3g} exceeds {t.explode_abs:g}: exploding gradients; lower the learning "
                    "rate or clip gradients",
                    check="grad-explosion", severity="warning", module=name, step=step, details={"norm": norm},
                )
            if norm < t.vanish_abs:
                self._vanished[name] = self._vanished.get(name, 0) + 1
                if self._vanished[name] == 3:
                    self.report(
                        f"gradient norm {norm:.3g} below {t.vanish_abs:g} on 3 sampled steps: vanishing gradients "
                        "(saturated activations, too-deep plain stack, or a detached path); check initialisation, "
                        "activations and residual connections",
                        check="grad-vanishing", severity="warning", module=name, step=step, details={"norm": norm},
                    )
            history.append(norm)


def _module(parameter_name: str | None) -> str:
    if not parameter_name:
        return "<unnamed parameters>"
    return parameter_name.rsplit(".", 1)[0] if "." in parameter_name else "<root>"
