"""non-finite: the first module that produces NaN/Inf, in forward or in its gradients.

Forward: on sampled steps, every module's inputs and outputs get one device-side
`isfinite().all()` each; the flags are read later without a sync, and the producer
is the first module (in execution order) whose inputs were finite and whose output
is not, not every layer the NaN then flowed through. Backward: the per-parameter
gradients are checked with one fused reduction before the optimizer steps.
"""

from __future__ import annotations

import torch

from torchdoctor.runtime.check import Check
from torchdoctor.runtime.checks.tensors import iter_tensors


def _all_finite(value) -> torch.Tensor | None:
    flags = [torch.isfinite(t).all() for _, t in iter_tensors(value) if t.is_floating_point() and t.numel()]
    if not flags:
        return None
    return torch.stack(flags).all() if len(flags) > 1 else flags[0]


class NonFinite(Check):
    id = "non-finite"
    events = frozenset({"forward", "step_pre", "step_end"})
    summary = "the first module whose output or gradient contains NaN/Inf"

    def __init__(self, session) -> None:
        super().__init__(session)
        self._flags: list[torch.Tensor] = []
        self._names: list[str] = []
        self._reported_forward = False
        self._reported_backward = False


    def forward(self, module, args, output, name) -> None:
        if not self.session.sampled or self._reported_forward or output is None:
            return
        with torch.no_grad():
            inputs_ok = _all_finite(args)
            outputs_ok = _all_finite(output)
        if outputs_ok is None:
            return
        if inputs_ok is None:
            inputs_ok = torch.ones((), dtype=torch.bool, device=outputs_ok.device)
        if inputs_ok.device != outputs_ok.device:
            inputs_ok = inputs_ok.to(outputs_ok.device, non_blocking=True)
        self._flags.append(torch.stack([inputs_ok, outputs_ok]))
        self._names.append(name)

    def step_end(self) -> None:
        self._flush_forward()

    def _flush_forward(self) -> None:
        if not self._flags:
            return
        devices = {f.device for f in self._flags}
        flags = self._flags if len(devices) == 1 else [f.to(self._flags[-1].device) for f in self._flags]
        self.session.reader.submit(torch.stack(flags).flatten(), self._forward_result, (list(self._names), self.session.steps))
        self._flags.clear()
        self._names.clear()

    def _forward_result(self, values, context) -> None:
        if self._reported_forward:
            return
        names, step = context
        for i, name in enumerate(names):
            inputs_ok, outputs_ok = values[2 * i], values[2 * i + 1]
            if not outputs_ok:
                self._reported_forward = True
                if inputs_ok:
                    self.report(
                        "first NaN/Inf of the forward pass is produced here (its inputs were finite): look for "
                        "log/sqrt/division of non-positive values, exp overflow, or fp16 range",
                        severity="error", module=name, step=step,
                    )
                else:
                    self.report(
                        "NaN/Inf already in the inputs of the first module that ran: the data (or a value "
                        "computed outside any module) is not finite",
                        severity="error", module=name, step=step,
                    )
                return

    def step_pre(self, optimizer) -> None:
        self._flush_forward()
        if self._reported_backward:
            return
        computed = self.session.grad_norms(optimizer)
        if computed is None:
            return
        norms, params = computed
        known = self.session.parameter_names()
        names = [known.get(id(p), "a parameter") for p in params]
        with torch.no_grad():
            finite = torch.isfinite(norms)
        self.session.reader.submit(finite, self._backward_result, (names, self.session.steps))

    def _backward_result(self, values, context) -> None:
        if self._reported_backward:
            return
        names, step = context
        bad = [n for n, ok in zip(names, values) if not ok]
        if bad:
            self._reported_backward = True
            module = bad[-1].rsplit(".", 1)[0] if "." in bad[-1] else None
            self.report(
                f"NaN/Inf in the gradients of {len(bad)} parameter tensor(s), first reached by backward at "
                f"'{bad[-1]}' (the optimizer would write them into the weights); with AMP use GradScaler, "
                "otherwise look for an unstable op in that layer",
                severity="error", module=module, step=step, details={"parameters": bad[:20]},
            )
