"""grad-not-reset: gradients still present when the first backward after an optimizer step runs.

A tensor hook on a few sample parameters fires as each backward reaches them,
before the new gradient is added: if `.grad` still holds the previous step's
values, gradients are being summed across steps. Deliberate accumulation
(several backwards, one step, then a reset) passes, because the reset happens
before the first backward of the next cycle. The non-zero test runs on the
device and is read later without a sync.
"""

from __future__ import annotations

import torch

from torchdoctor.runtime.check import Check

SAMPLES_PER_GROUP = 2


class GradNotReset(Check):
    id = "grad-not-reset"
    events = frozenset({"step"})
    summary = "gradients summed across optimizer steps (no zero_grad between them)"

    def __init__(self, session) -> None:
        super().__init__(session)
        self._hooked: set[int] = set()
        self._handles = []
        self._after_step: dict[int, bool] = {}  # param id -> a step happened since its last backward
        self._reported = False

    def step(self, optimizer) -> None:
        for group in optimizer.param_groups:
            samples = [p for p in group["params"] if p.requires_grad][:SAMPLES_PER_GROUP]
            for p in samples:
                if id(p) not in self._hooked:
                    self._hooked.add(id(p))
                    self._handles.append(p.register_hook(self._make_hook(p)))
                self._after_step[id(p)] = True

    def _make_hook(self, param: torch.Tensor):
        def hook(grad):
            if self._after_step.get(id(param)):
                self._after_step[id(param)] = False
                old = param.grad
                if old is not None:
                    self.session.reader.submit(old.detach().ne(0).any().reshape(1), self._result,
                                               (id(param), self.session.steps))
            return None

        return hook

    def _result(self, values, context) -> None:
        param_id, step = context
        if values and values[0] and not self._reported:
            self._reported = True
            name = self.session.parameter_names().get(param_id, "a parameter")
            self.report(
                f"gradients were not reset between optimizer steps: '{name}' still held the previous step's "
                "gradient when the next backward ran, so gradients sum across steps; call "
                "optimizer.zero_grad() each iteration (for accumulation, right after step())",
                severity="error", module=name.rsplit(".", 1)[0] if "." in name else None, step=step,
                details={"parameter": name},
            )

    def finish(self) -> None:
        for handle in self._handles:
            handle.remove()
        self._handles.clear()
