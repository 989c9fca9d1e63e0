"""train-mode-eval: Dropout/BatchNorm running in training mode while gradients are off.

A forward pass under `no_grad`/`inference_mode` is an evaluation; with Dropout or
BatchNorm still in training mode its results are noisy and BatchNorm's running
statistics are updated from evaluation data.
"""

from __future__ import annotations

import torch

from torchdoctor.runtime.check import Check

_MODE_LAYERS = (torch.nn.modules.dropout._DropoutNd, torch.nn.modules.batchnorm._BatchNorm)


class TrainModeEval(Check):
    id = "train-mode-eval"
    events = frozenset({"forward_pre"})
    summary = "forward passes under no_grad/inference_mode with Dropout/BatchNorm in training mode"

    def __init__(self, session) -> None:
        super().__init__(session)
        self._reported = False

    def forward_pre(self, module, args, name) -> None:
        if self._reported or not module.training or torch.is_grad_enabled():
            return
        if not isinstance(module, _MODE_LAYERS):
            return
        if isinstance(module, torch.nn.modules.dropout._DropoutNd) and module.p == 0:
            return
        self._reported = True
        root = self.session.stack[0] if self.session.stack else module
        self.report(
            f"{type(module).__name__} runs in training mode under no_grad/inference_mode: this evaluation pass "
            f"uses dropout noise / batch statistics; call `{self.session.name_of(root)}.eval()` before evaluating "
            "and `.train()` after",
            severity="error", module=name, step=self.session.steps,
        )
