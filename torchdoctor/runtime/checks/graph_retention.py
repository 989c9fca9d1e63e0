"""graph-retention: autograd graphs kept alive across steps.

`running_loss += loss` or `losses.append(loss)` keeps every step's graph alive
(its grad_fn chain grows each step even when CUDA memory barely moves, since
backward already freed the saved tensors). The root of every backward is
followed (see graph_watch); roots from earlier steps that are still alive and
keep piling up mean something holds on to them.
"""

from __future__ import annotations

from torchdoctor.runtime.check import Check
from torchdoctor.runtime.checks.graph_watch import GraphWatch


class GraphRetention(Check):
    id = "graph-retention"
    events = frozenset({"backward", "step_end"})
    summary = "autograd graphs kept alive across steps (loss accumulated without .item()/.detach())"

    def __init__(self, session) -> None:
        super().__init__(session)
        self.graphs = GraphWatch()
        self.samples: list[tuple[int, int]] = []  # (step, graphs from earlier steps still alive)

    def backward(self, tensors) -> None:
        for t in tensors:
            if t.grad_fn is not None:
                self.graphs.follow(t.grad_fn, {"step": self.session.steps})

    def step_end(self) -> None:
        step = self.session.steps
        old = sum(1 for r in self.graphs.alive() if r["step"] < step - 2)
        self.samples.append((step, old))

    def finish(self) -> None:
        if len(self.samples) < 6:
            return
        counts = [c for _, c in self.samples]
        tail = counts[len(counts) // 2:]
        growing = all(b >= a for a, b in zip(tail, tail[1:])) and tail[-1] - tail[0] >= 2
        if counts[-1] >= self.session.thresholds.retained_graphs_min and growing:
            first = next(s for s, c in self.samples if c > 0)
            self.report(
                f"{counts[-1]} backward graphs from earlier steps are still alive and their number grows every "
                "step: something keeps the loss tensors (`running_loss += loss`, `losses.append(loss)`); "
                "accumulate `loss.item()` or `loss.detach()` instead",
                severity="warning", step=first, details={"alive_old_graphs": counts[-1]},
            )
