"""Decorators a project writes itself, read for what they do to the functions they wrap.

`@make_nograd_func` (MVSNet) wraps its function in `with torch.no_grad():`. The rules ask one question
of a decorator, `is_no_grad_name`; rather than teach each of them to follow project code, the lint
context resolves such decorators once per file and records the effect as `torch.no_grad`."""

from __future__ import annotations

from pathlib import Path

import libcst as cst

from torchdoctor.facts import FileFacts, FunctionInfo, dotted_name

NO_GRAD_WORDS = ("no_grad", "inference_mode", "set_grad_enabled")
RESOLVED_NO_GRAD = "torch.no_grad"


def is_no_grad_name(name: str | None) -> bool:
    return bool(name) and name.rsplit(".", 1)[-1].endswith(NO_GRAD_WORDS)  # YOLOv5's `smart_inference_mode`


def wraps_in_no_grad(fn: FunctionInfo) -> bool:
    """`def deco(func): def wrapper(*a, **k): with torch.no_grad(): return func(*a, **k); return wrapper`
    (or a wrapper decorated with `@torch.no_grad()`), or `return torch.no_grad()(func)`: every call of the
    decorated function runs with gradients off."""
    if fn.node is None or not fn.params:
        return False
    wrapped = fn.params[0]
    returned = {dotted_name(ret.value) for ret, _ in fn.returns if ret.value is not None}
    for name, inner in fn.nested.items():
        if name in returned and any(
            c.dotted == wrapped and (any(is_no_grad_name(w) for w in c.context.withs) or any(
                is_no_grad_name(d) for d in inner.decorators  # DM-Font's `@torch.no_grad() def decorated(...)`
            )) for c in inner.calls
        ):
            return True
    return any(
        ret.value is not None and all(_no_grad_of(side, wrapped) for side in _sides(ret.value))
        for ret, _ in fn.returns
    )


def _sides(value: cst.BaseExpression) -> list[cst.BaseExpression]:
    """Both results of a conditional expression (DeepLabCut's `torch.no_grad()(fn) if directml else
    torch.inference_mode()(fn)`), or the value itself."""
    if isinstance(value, cst.IfExp):
        return [*_sides(value.body), *_sides(value.orelse)]
    return [value]


def _no_grad_of(value: cst.BaseExpression, wrapped: str) -> bool:
    """`torch.no_grad()(func)`: the function wrapped in a no-grad context manager used as a decorator."""
    return (
        isinstance(value, cst.Call) and isinstance(value.func, cst.Call) and is_no_grad_name(dotted_name(value.func.func))
        and [dotted_name(a.value) for a in value.args] == [wrapped]
    )


def resolve_no_grad_decorators(facts: FileFacts, project=None) -> None:
    """Add `torch.no_grad` to the decorators of every function wrapped by a no-grad decorator of this
    file or of another file of the project. Idempotent."""
    verdicts: dict[str, bool] = {}

    def disables_grad(name: str) -> bool:
        if name not in verdicts:
            found = facts.toplevel_functions.get(name)
            if found is None and project is not None and _may_be_project_function(facts, name):
                other = project.function_named(facts, name)
                found = other[1] if other is not None else None
            verdicts[name] = found is not None and wraps_in_no_grad(found)
        return verdicts[name]

    for fn in facts.functions:
        if fn.decorators and RESOLVED_NO_GRAD not in fn.decorators and any(
            d and not is_no_grad_name(d) and disables_grad(d) for d in fn.decorators
        ):
            fn.decorators = (*fn.decorators, RESOLVED_NO_GRAD)


_LIBRARY_HEADS = frozenset({
    "torch", "functools", "typing", "abc", "contextlib", "dataclasses", "numpy", "warnings", "builtins",
    "typing_extensions", "pytest", "unittest", "jax", "tensorflow",
})
_BUILTIN_DECORATORS = frozenset({"property", "staticmethod", "classmethod"})


def _may_be_project_function(facts: FileFacts, name: str) -> bool:
    """Worth a lookup in the project: imported from somewhere that is not a known library, or possibly
    brought by `from utils import *`. (torch's own files carry thousands of decorators.)"""
    if facts.path == "<string>" or Path(facts.path).suffix != ".py" or name in _BUILTIN_DECORATORS:
        return False
    head = name.split(".", 1)[0]
    qualified = facts.imports.get(head)
    if qualified is not None:
        return qualified.split(".", 1)[0] not in _LIBRARY_HEADS
    return bool(facts.star_imports)
