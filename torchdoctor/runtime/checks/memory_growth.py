"""memory-growth: allocated CUDA memory rising step after step.

`torch.cuda.memory_allocated()` is a host-side counter (no sync), read once per
step. After a warm-up, a steady positive slope is a leak: tensors (often with
their graphs) kept in Python lists, caches or attributes.
"""

from __future__ import annotations

import torch

from torchdoctor.runtime.check import Check


def slope(points: list[tuple[int, int]]) -> tuple[float, float]:
    """Least-squares bytes/step and the fraction of steps that rose."""
    n = len(points)
    mean_x = sum(x for x, _ in points) / n
    mean_y = sum(y for _, y in points) / n
    var = sum((x - mean_x) ** 2 for x, _ in points)
    if var == 0:
        return 0.0, 0.0
    b = sum((x - mean_x) * (y - mean_y) for x, y in points) / var
    rises = sum(1 for (_, a), (_, c) in zip(points, points[1:]) if c > a) / max(1, n - 1)
    return b, rises


class MemoryGrowth(Check):
    id = "memory-growth"
    events = frozenset({"step_end"})
    summary = "allocated CUDA memory rising step after step (slope, bytes/step, likely cause)"

    def __init__(self, session) -> None:
        super().__init__(session)
        self.points: list[tuple[int, int]] = []
        self.enabled = torch.cuda.is_available()

    def step_end(self) -> None:
        if self.enabled:
            self.points.append((self.session.steps, torch.cuda.memory_allocated()))

    def finish(self) -> None:
        t = self.session.thresholds
        points = self.points[len(self.points) // 5:]  # skip warm-up (optimizer state, caches)
        if len(points) < t.memory_min_steps:
            return
        per_step, rises = slope(points)
        if per_step < t.memory_growth_bytes_per_step or rises < 0.6:
            return
        retained = any(f.check == "graph-retention" for f in self.session.findings)
        cause = (
            "loss tensors kept with their graphs (see graph-retention)" if retained
            else "tensors appended to a Python list, cache or attribute every step (store .item()/.detach().cpu())"
        )
        total = points[-1][1] - points[0][1]
        self.report(
            f"allocated CUDA memory grows by {per_step / 2**20:.2f} MiB/step ({total / 2**20:.1f} MiB over "
            f"{points[-1][0] - points[0][0]} steps, rising on {rises:.0%} of them): likely {cause}",
            severity="warning", step=points[0][0],
            details={"bytes_per_step": per_step, "first_bytes": points[0][1], "last_bytes": points[-1][1]},
        )
