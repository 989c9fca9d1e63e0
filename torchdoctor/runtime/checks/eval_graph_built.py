"""eval-graph-built: forward passes with gradients on whose graphs no backward ever uses.

Each top-level forward that records a graph is followed (see graph_watch): when
its graph is freed and no backward ever passed through it, it was built for
nothing: an evaluation or metric pass without `torch.no_grad()`.
"""

from __future__ import annotations

import torch

from torchdoctor.runtime.check import Check
from torchdoctor.runtime.checks.graph_watch import GraphWatch
from torchdoctor.runtime.checks.tensors import iter_tensors


class EvalGraphBuilt(Check):
    id = "eval-graph-built"
    events = frozenset({"root_forward"})
    summary = "forward passes with gradients enabled whose graphs are never used by a backward"

    def __init__(self, session) -> None:
        super().__init__(session)
        self.graphs = GraphWatch()
        self.unused = 0
        self.first: dict | None = None

    def root_forward(self, module, output) -> None:
        if not torch.is_grad_enabled():
            return
        node = next((t.grad_fn for _, t in iter_tensors(output) if t.grad_fn is not None), None)
        if node is not None:
            record = {"step": self.session.steps, "module": self.session.name_of(module)}
            self.graphs.follow(node, record, self._freed)

    def _freed(self, record: dict) -> None:
        if not record["used"]:
            self.unused += 1
            if self.first is None:
                self.first = record

    def finish(self) -> None:
        if self.unused >= self.session.thresholds.unused_graphs_min and self.first is not None:
            self.report(
                f"{self.unused} forward pass(es) with gradients enabled built autograd graphs that no backward "
                "used (evaluation or metrics without torch.no_grad()): wasted memory and time; wrap evaluation "
                "in torch.no_grad() or torch.inference_mode()",
                severity="warning", module=self.first["module"], step=self.first["step"],
                details={"unused_graphs": self.unused},
            )
