"""unregistered-module: a module that runs inside the watched model but is not one of its submodules.

Typically kept in a plain list or dict: its parameters are not in
`model.parameters()`, so the optimizer never trains them and `.to()` never moves them.
"""

from __future__ import annotations

import torch

from torchdoctor.runtime.check import Check


def _holder(parents: list[torch.nn.Module], module: torch.nn.Module) -> str | None:
    """The attribute (`blocks[2]`, `heads['cls']`) of a parent that holds the module in a plain container."""
    for parent in reversed(parents):
        for attr, value in vars(parent).items():
            if isinstance(value, (list, tuple)):
                for i, item in enumerate(value):
                    if item is module:
                        return f"{attr}[{i}]"
            elif isinstance(value, dict):
                for key, item in value.items():
                    if item is module:
                        return f"{attr}[{key!r}]"
    return None


class UnregisteredModule(Check):
    id = "unregistered-module"
    events = frozenset({"forward_pre"})
    summary = "a module runs inside the model but is not registered (plain list/dict)"

    def __init__(self, session) -> None:
        super().__init__(session)
        self._reported: set[int] = set()

    def forward_pre(self, module, args, name) -> None:
        if len(self.session.stack) < 2:
            return
        if self.session.is_registered(module) or id(module) in self._reported:
            return
        self._reported.add(id(module))
        parents = self.session.stack[:-1]
        if not self.session.is_registered(parents[-1]):
            return  # a child of an unregistered module: its parent is the one to report
        holder = _holder(parents, module)
        owner = self.session.name_of(parents[-1])
        where = f"'{owner}.{holder}'" if holder else f"inside '{owner}'"
        trainable = sum(p.numel() for p in module.parameters() if p.requires_grad)
        if not trainable:
            return  # a frozen helper (a teacher, a fixed feature extractor) kept out on purpose
        self.report(
            f"{type(module).__name__} at {where} runs in the model's forward but is not a registered submodule: "
            f"its {trainable} parameters are not in model.parameters() (never trained, not moved by .to(), "
            "not saved); hold it in nn.ModuleList/nn.ModuleDict",
            severity="error", module=f"{owner}.{holder}" if holder else owner, step=self.session.steps,
            details={"class": type(module).__name__, "attribute": holder, "parameters": trainable},
        )
