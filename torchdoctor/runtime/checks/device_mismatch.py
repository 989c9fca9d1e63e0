"""device-mismatch: a module whose inputs live on another device than its own weights.

Checked from metadata alone (no device work). 0-dim CPU tensors mix with CUDA
tensors without error and are not mismatches. When a run crashes with
"Expected all tensors to be on the same device", the crash is enriched with
the module that was running and where each of its tensors was.
"""

from __future__ import annotations

import torch

from torchdoctor.runtime.check import Check
from torchdoctor.runtime.checks.tensors import iter_tensors

_MESSAGES = ("same device", "Expected all tensors", "expected device", "device type", "Input type (torch.FloatTensor) and weight type")


def own_tensors(module: torch.nn.Module) -> list[tuple[str, str, torch.Tensor]]:
    """(kind, name, tensor) for the module's parameters, buffers and plain tensor attributes."""
    found = [("parameter", n, p) for n, p in module.named_parameters(recurse=False)]
    found += [("buffer", n, b) for n, b in module.named_buffers(recurse=False) if b is not None]
    for name, value in vars(module).items():
        if isinstance(value, torch.Tensor) and not name.startswith("_"):
            found.append(("plain attribute", name, value))
    return found


def _counts(t: torch.Tensor) -> bool:
    return not (t.device.type == "cpu" and t.dim() == 0)


class DeviceMismatch(Check):
    id = "device-mismatch"
    events = frozenset({"forward_pre", "step_end"})
    summary = "module inputs on another device than its parameters/buffers; enriches device crashes"

    def __init__(self, session) -> None:
        super().__init__(session)
        self._last_args: dict[int, tuple] = {}

    def forward_pre(self, module, args, name) -> None:
        if not self.session.sampled:
            return
        self._last_args[id(module)] = args
        weights = [t for kind, _, t in own_tensors(module) if kind != "plain attribute"]
        if not weights:
            return
        home = weights[0].device
        strays = [(path, t.device) for path, t in iter_tensors(args, "args") if _counts(t) and t.device != home]
        if strays:
            listed = ", ".join(f"{p} on {d}" for p, d in strays)
            self.report(
                f"inputs on another device than the module's weights ({home}): {listed}; move the inputs "
                "(or the module) so both live on one device",
                severity="error", module=name, step=self.session.steps,
                details={"weights": str(home), "inputs": {p: str(d) for p, d in strays}},
            )

    def step_end(self) -> None:
        self._last_args.clear()

    def exception(self, exc: BaseException) -> None:
        if not isinstance(exc, RuntimeError) or not any(m in str(exc) for m in _MESSAGES):
            return
        if not self.session.stack:
            return
        module = self.session.stack[-1]  # the innermost module entered and not left: where it failed
        name = self.session.name_of(module)
        lines, details = [], {}
        args = self._last_args.get(id(module))
        if args is None:
            args = ()
        for path, t in iter_tensors(args, "args"):
            lines.append(f"{path} on {t.device}")
            details[path] = str(t.device)
        stray_attributes = []
        for kind, attr, t in own_tensors(module):
            lines.append(f"{kind} '{attr}' on {t.device}")
            details[f"{kind} {attr}"] = str(t.device)
            if kind == "plain attribute" and _counts(t):
                stray_attributes.append(attr)
        hint = ""
        if stray_attributes:
            hint = (
                f"; {', '.join(repr(a) for a in stray_attributes)} "
                f"{'is a plain tensor attribute' if len(stray_attributes) == 1 else 'are plain tensor attributes'}: "
                "`.to()` does not move it; use `self.register_buffer(...)`"
            )
        where = f"while running '{name}' ({type(module).__name__})"
        note = f"torchdoctor: {where}: {'; '.join(lines) or 'no tensors seen'}{hint}"
        if hasattr(exc, "add_note"):
            exc.add_note(note)
        self.report(
            f"crashed with a device mismatch {where}: {'; '.join(lines)}{hint}",
            severity="error", module=name, step=self.session.steps, details=details,
        )
