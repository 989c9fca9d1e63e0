"""non-contiguous-input: modules that receive non-contiguous tensors on most calls.

A transposed or sliced view handed to a layer makes it copy or pick a slower
kernel on every call. Counted from metadata (`is_contiguous()`), no device work.
Off by default: it inspects every argument of every module call.
"""

from __future__ import annotations

from torchdoctor.runtime.check import Check
from torchdoctor.runtime.checks.tensors import iter_tensors


class NonContiguousInput(Check):
    id = "non-contiguous-input"
    events = frozenset({"forward_pre"})
    default = False
    summary = "modules receiving non-contiguous tensors on most calls (hidden copies, slow kernels)"

    def __init__(self, session) -> None:
        super().__init__(session)
        self._calls: dict[str, int] = {}
        self._bad: dict[str, int] = {}
        self._example: dict[str, tuple] = {}

    def forward_pre(self, module, args, name) -> None:
        if next(module.children(), None) is not None:
            return  # containers pass inputs through; the leaf layer that computes on them is reported
        self._calls[name] = self._calls.get(name, 0) + 1
        for path, t in iter_tensors(args, "args"):
            if t.dim() > 1 and not t.is_contiguous():
                self._bad[name] = self._bad.get(name, 0) + 1
                self._example.setdefault(name, (path, tuple(t.shape), tuple(t.stride()), self.session.steps))
                return

    def finish(self) -> None:
        t = self.session.thresholds
        for name, bad in sorted(self._bad.items()):
            calls = self._calls[name]
            if calls >= t.noncontiguous_min_calls and bad / calls >= t.noncontiguous_fraction:
                path, shape, stride, step = self._example[name]
                self.report(
                    f"non-contiguous input on {bad} of {calls} calls ({path} with shape {list(shape)} and stride "
                    f"{list(stride)}): the layer copies or falls back to a slower kernel each time; call "
                    ".contiguous() once where the view is made, or avoid the transpose/permute",
                    severity="info", module=name, step=step,
                    details={"calls": calls, "non_contiguous": bad, "shape": list(shape), "stride": list(stride)},
                )
