"""params-not-optimized and unused-parameters: who gets gradients, and who gets stepped.

At each optimizer step (on sampled steps, from metadata: `.grad is None`), it
records which trainable parameters of the watched model hold a gradient and
which parameters every optimizer steps. At the end: parameters with gradients
that no optimizer steps, optimizer parameters outside the model, and trainable
parameters that never received a gradient.
"""

from __future__ import annotations

from torchdoctor.runtime.check import Check


class ParameterCoverage(Check):
    id = "params-not-optimized"
    reports = ("params-not-optimized", "unused-parameters")
    events = frozenset({"step_pre"})
    summary = "trainable parameters with gradients that no optimizer steps; parameters that never get a gradient"

    def __init__(self, session) -> None:
        super().__init__(session)
        self._optimized: set[int] = set()
        self._with_grad: set[int] = set()
        self._first_seen: dict[int, int] = {}
        self._optimizers = 0
        self._seen_optimizers: set[int] = set()

    def _named_parameters(self):
        return self.session.trainable_parameters()

    def step_pre(self, optimizer) -> None:
        if id(optimizer) not in self._seen_optimizers:
            self._seen_optimizers.add(id(optimizer))
            for group in optimizer.param_groups:
                self._optimized.update(id(p) for p in group["params"])
        if not self.session.sampled:
            return
        for _, p in self._named_parameters():
            if p.grad is not None and id(p) not in self._with_grad:
                self._with_grad.add(id(p))
                self._first_seen[id(p)] = self.session.steps

    def finish(self) -> None:
        params = self._named_parameters()
        if not params or not self._seen_optimizers:
            return
        model_ids = {id(p) for _, p in params}
        missing = [(n, p) for n, p in params if id(p) in self._with_grad and id(p) not in self._optimized]
        if missing:
            names = [n for n, _ in missing]
            self.report(
                f"{len(missing)} trainable parameter tensor(s) receive gradients but belong to no optimizer's "
                f"param_groups ({_preview(names)}): they never change; pass model.parameters() to the optimizer "
                "(or add a param group)",
                check="params-not-optimized", severity="error", module=_module_of(names[0]),
                step=min(self._first_seen.get(id(p), 0) for _, p in missing),
                details={"parameters": names, "count": sum(p.numel() for _, p in missing)},
            )
        strangers = len(self._optimized - model_ids)
        if strangers and len(self.session.roots) == 1 and len(self._seen_optimizers) == 1:
            self.report(
                f"the optimizer steps {strangers} parameter tensor(s) that are not in the watched model: "
                "a stale model (re-created after the optimizer was built?) or a second model",
                check="params-not-optimized", severity="warning", step=0, details={"count": strangers},
            )
        never = [n for n, p in params if id(p) not in self._with_grad]
        if never and self._with_grad:
            self.report(
                f"{len(never)} trainable parameter tensor(s) never received a gradient over "
                f"{self.session.steps} step(s) ({_preview(never)}): unused in forward, detached, or frozen by "
                "mistake; set requires_grad=False for parts you mean to freeze (with DDP this also needs "
                "find_unused_parameters)",
                check="unused-parameters", severity="warning", module=_module_of(never[0]),
                details={"parameters": never},
            )


def _preview(names: list[str], limit: int = 4) -> str:
    shown = ", ".join(names[:limit])
    return shown + (f", and {len(names) - limit} more" if len(names) > limit else "")


def _module_of(parameter_name: str) -> str | None:
    return parameter_name.rsplit(".", 1)[0] if "." in parameter_name else None
