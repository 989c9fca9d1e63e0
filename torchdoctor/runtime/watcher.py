"""`torchdoctor.watch`: the one owner of every runtime hook.

It installs global module hooks, optimizer step hooks and two small patches
(`Tensor.backward`, `DistributedSampler.__iter__`) exactly once, only for the
events some enabled check listens to, dispatches each event to those checks,
and removes everything on exit, also when the block raises. Nothing it does
touches the values of the user's tensors: a watched run computes the same
numbers as an unwatched one.
"""

from __future__ import annotations

import sys
import threading
import weakref
from dataclasses import replace
from typing import Any, Iterable

import torch
from torch.nn.modules import module as module_hooks
from torch.optim import optimizer as optimizer_hooks

from torchdoctor.runtime.check import Check, Thresholds
from torchdoctor.runtime.checks import ALL_CHECKS, check_ids
from torchdoctor.runtime.deferred import DeferredReader
from torchdoctor.runtime.findings import RuntimeFinding, print_summary, write_report

_active_lock = threading.Lock()
_active: list["Watch"] = []


class Watch:
    """A watched stretch of a run. Use through `torchdoctor.watch(...)`."""

    def __init__(
        self,
        model: torch.nn.Module | None = None,
        *,
        every: int = 50,
        checks: Iterable[str] | None = None,
        skip: Iterable[str] = (),
        report: str | None = None,
        thresholds: dict[str, float] | None = None,
        quiet: bool = False,
    ) -> None:
        known = check_ids()
        wanted = set(checks) if checks is not None else None
        for name in (wanted or set()) | set(skip):
            if name not in known:
                raise ValueError(f"unknown check {name!r}; known checks: {', '.join(sorted(known))}")
        if every < 1:
            raise ValueError("every must be a positive number of steps")
        self.model = model
        self.every = every
        self.report_path = report
        self.quiet = quiet
        self.thresholds = replace(Thresholds(), **(thresholds or {}))
        self.findings: list[RuntimeFinding] = []
        self.steps = 0
        self.reader = DeferredReader()
        self._seen_findings: set[tuple] = set()
        self._check_classes = [
            cls for cls in ALL_CHECKS
            if (cls.default if wanted is None else bool(wanted & set(cls.all_ids()))) and not set(cls.all_ids()) <= set(skip)
        ]
        self._skip = set(skip)
        self.checks: list[Check] = []
        self._handles: list[Any] = []
        self._patches: list[tuple[Any, str, Any]] = []
        self._names: dict[int, str] = {}
        self._registered: set[int] = set()
        self._stack: list[torch.nn.Module] = []
        self._primary_optimizer: Any = None
        self._norms_key: tuple | None = None
        self._norms: tuple | None = None
        self.active = False
        self.unsupported: list[str] = []
        self._compiled = False
        self.roots: list[torch.nn.Module] = []  # the watched model, or the top-level modules `run` has seen
        self._param_names: dict[int, str] | None = None

    # -- context manager -----------------------------------------------------------
    def __enter__(self) -> "Watch":
        with _active_lock:
            if _active:
                self.unsupported.append("a watch is already active: this nested one adds no hooks")
                return self
            _active.append(self)
        self.active = True
        self._index_model()
        self.checks = [cls(self) for cls in self._check_classes]
        self._install()
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        if not self.active:
            return False
        try:
            if exc is not None:
                for check in self.checks:
                    check.exception(exc)
            self._remove()
            self.reader.drain()
            for check in self.checks:
                check.finish()
        finally:
            with _active_lock:
                if self in _active:
                    _active.remove(self)
            self.active = False
        if self.report_path:
            write_report(self.report_path, self.findings, self.steps, self.device_description())
        if not self.quiet:
            print_summary(self.findings, self.steps, self.device_description())
            for line in self.unsupported:
                print(f"torchdoctor: {line}", file=sys.stderr)
        return False

    def report(self, path: str) -> None:
        """Write the JSON report now (also possible after the block)."""
        write_report(path, self.findings, self.steps, self.device_description())

    # -- naming ------------------------------------------------------------------------
    def _index_model(self) -> None:
        model = self.model
        if model is None:
            return
        compiled = getattr(model, "_orig_mod", None)
        if compiled is not None:  # module hooks would break (or be traced into) the compiled graphs
            self.unsupported.append(
                "torch.compile'd model: module-level checks are off (they would break the compiled graphs); "
                "optimizer-level checks run; watch the uncompiled model for the rest"
            )
            self._compiled = True
            model = compiled
        self._index_root(model, type(model).__name__)

    def _index_root(self, root: torch.nn.Module, root_name: str) -> None:
        self.roots.append(root)
        self._param_names = None
        for name, module in root.named_modules():
            key = id(module)
            if key not in self._names:
                self._names[key] = name or root_name
            self._registered.add(key)

    def name_of(self, module: torch.nn.Module) -> str:
        name = self._names.get(id(module))
        if name is None:
            if self.model is None and not self._stack:  # a new top-level module in `torchdoctor run`
                self._index_root(module, type(module).__name__)
                return self._names[id(module)]
            return type(module).__name__
        return name

    def parameter_names(self) -> dict[int, str]:
        """id(parameter) -> qualified name, over the watched model (or every top-level module seen)."""
        if self._param_names is None:
            names: dict[int, str] = {}
            multiple = len(self.roots) > 1
            for root in self.roots:
                prefix = f"{type(root).__name__}." if multiple else ""
                for name, p in root.named_parameters():
                    names.setdefault(id(p), prefix + name)
            self._param_names = names
        return self._param_names

    def trainable_parameters(self) -> list[tuple[str, torch.nn.Parameter]]:
        seen, out = set(), []
        names = self.parameter_names()
        for root in self.roots:
            for p in root.parameters():
                if p.requires_grad and id(p) not in seen:
                    seen.add(id(p))
                    out.append((names[id(p)], p))
        return out

    def is_registered(self, module: torch.nn.Module) -> bool:
        return id(module) in self._registered

    @property
    def stack(self) -> list[torch.nn.Module]:
        return self._stack

    @property
    def sampled(self) -> bool:
        """Whether this step runs the sampled (device-side) checks: the first steps, then every `every`."""
        return self.steps < 2 or self.steps % self.every == 0

    def grad_norms(self, optimizer) -> tuple[torch.Tensor, list[torch.Tensor]] | None:
        """Per-parameter gradient norms of one optimizer at this step: one fused reduction, shared
        by every check that needs it, never read on the host here."""
        key = (id(optimizer), self.steps)
        if self._norms_key == key:
            return self._norms
        params = [
            p for group in optimizer.param_groups for p in group["params"]
            if p.grad is not None and not p.grad.is_sparse
        ]
        result = None
        if params:
            grads = [p.grad for p in params]
            with torch.no_grad():
                try:
                    norms = torch._foreach_norm(grads)
                except (RuntimeError, AttributeError):  # mixed devices the fused kernel refuses
                    norms = [g.norm() for g in grads]
                devices = {n.device for n in norms}
                if len(devices) > 1:
                    norms = [n.to(grads[0].device) for n in norms]
                result = (torch.stack([n.float() for n in norms]) if len({n.dtype for n in norms}) > 1
                          else torch.stack(norms).float(), params)
        self._norms_key, self._norms = key, result
        return result

    def device_description(self) -> str:
        if torch.cuda.is_available():
            index = torch.cuda.current_device()
            return f"cuda:{index} ({torch.cuda.get_device_name(index)})"
        return "cpu"

    def add_finding(self, check: str, severity: str, message: str, module: str | None, step: int | None,
                    details: dict) -> None:
        if check in self._skip:
            return
        key = (check, module, message)
        if key in self._seen_findings:
            return
        self._seen_findings.add(key)
        self.findings.append(RuntimeFinding(check, severity, message, module, step, details))

    # -- hooks -------------------------------------------------------------------------
    def _listeners(self, event: str) -> list[Check]:
        return [c for c in self.checks if event in c.events]

    def _install(self) -> None:
        pre, post = self._listeners("forward_pre"), self._listeners("forward")
        roots = self._listeners("root_forward")
        if not self._compiled:
            self._handles.append(module_hooks.register_module_forward_pre_hook(_eager(self._make_pre_hook(pre))))
            self._handles.append(module_hooks.register_module_forward_hook(_eager(self._make_post_hook(post, roots))))
        step_pre, step_post, step_end = self._listeners("step_pre"), self._listeners("step"), self._listeners("step_end")
        self._handles.append(optimizer_hooks.register_optimizer_step_pre_hook(self._make_step_pre(step_pre)))
        self._handles.append(optimizer_hooks.register_optimizer_step_post_hook(self._make_step_post(step_post, step_end)))
        backward = self._listeners("backward")
        if backward:
            self._patch_backward(backward)
        samplers = self._listeners("sampler")
        if samplers:
            self._patch_sampler(samplers)

    def _remove(self) -> None:
        for handle in self._handles:
            handle.remove()
        self._handles.clear()
        for owner, attr, original in reversed(self._patches):
            setattr(owner, attr, original)
        self._patches.clear()
        self._stack.clear()

    def _make_pre_hook(self, listeners: list[Check]):
        model = self.model

        def pre_hook(module, args):
            if model is not None and not self._stack and module is not model and not self._is_model_root(module):
                return None
            name = self.name_of(module)
            self._stack.append(module)
            for check in listeners:
                check.forward_pre(module, args, name)
            return None

        return pre_hook

    def _is_model_root(self, module) -> bool:
        # DDP(model) or torch.compile(model) called instead of the module we were given
        inner = getattr(module, "module", None) or getattr(module, "_orig_mod", None)
        return inner is not None and inner is self.model

    def _make_post_hook(self, listeners: list[Check], roots: list[Check]):
        def post_hook(module, args, output):
            if not self._stack or self._stack[-1] is not module:
                return None
            name = self.name_of(module)
            for check in listeners:
                check.forward(module, args, output, name)
            self._stack.pop()
            if not self._stack:
                for check in roots:
                    check.root_forward(module, output)
            return None

        return post_hook

    def _make_step_pre(self, listeners: list[Check]):
        def step_pre(optimizer, args, kwargs):
            if self._primary_optimizer is None:
                self._primary_optimizer = weakref.ref(optimizer)
            for check in listeners:
                check.step_pre(optimizer)
            return None

        return step_pre

    def _make_step_post(self, listeners: list[Check], enders: list[Check]):
        def step_post(optimizer, args, kwargs):
            for check in listeners:
                check.step(optimizer)
            primary = self._primary_optimizer() if self._primary_optimizer is not None else None
            if primary is optimizer:
                self.steps += 1
                for check in enders:
                    check.step_end()
                self.reader.poll()
            return None

        return step_post

    def _patch_backward(self, listeners: list[Check]) -> None:
        original = torch.Tensor.backward

        def backward(tensor, *args, **kwargs):
            for check in listeners:
                check.backward((tensor,))
            return original(tensor, *args, **kwargs)

        backward.__doc__ = original.__doc__
        self._patches.append((torch.Tensor, "backward", original))
        torch.Tensor.backward = backward

    def _patch_sampler(self, listeners: list[Check]) -> None:
        from torch.utils.data.distributed import DistributedSampler

        original = DistributedSampler.__iter__

        def iterate(sampler):
            for check in listeners:
                check.sampler(sampler)
            return original(sampler)

        self._patches.append((DistributedSampler, "__iter__", original))
        DistributedSampler.__iter__ = iterate


def _eager(hook):
    """Keep torch.compile from tracing into our hooks (in `run` mode a compiled module may call them):
    they run eagerly at a graph break instead of failing the compile."""
    disable = getattr(getattr(torch, "compiler", None), "disable", None)
    return disable(hook) if disable is not None else hook


def watch(model: torch.nn.Module | None = None, **options) -> Watch:
    """Watch a debug run: `with torchdoctor.watch(model) as doc: train()`.

    Options: `every=50` (steps between sampled device-side checks), `checks=[...]` (only these ids),
    `skip=[...]`, `report="run.json"`, `thresholds={...}` (see `Thresholds`), `quiet=True`.
    """
    return Watch(model, **options)
