"""TD013: .view() on a transposed or permuted tensor without .contiguous()."""

from __future__ import annotations

import libcst as cst

from torchdoctor.facts import dotted_name
from torchdoctor.rule import Rule

_REORDERING = {"transpose", "t", "permute", "swapaxes", "swapdims", "movedim"}
_REORDERING_ATTRS = {"T", "mT", "mH", "H"}


class ViewAfterTranspose(Rule):
    code = "TD013"
    name = "view-after-transpose"
    severity = "error"
    summary = "view() on the result of transpose/t/permute/.T without contiguous(): raises at run time"
    rationale = """
        `transpose`, `permute`, `t()` and `.T` return views with reordered strides; `view()` needs
        memory that matches the requested shape and raises "view size is not compatible with
        input tensor's size and stride" on them (or silently works only for shapes where a
        dimension is 1, so the bug shows up with the first real batch). Use `.reshape()` (copies
        only when needed) or `.contiguous().view()`.
    """
    bad = """
        import torch

        def merge_heads(x, b, t, h, d):
            y = x.permute(0, 2, 1, 3)
            return y.view(b, t, h * d)  # expect: TD013

        def flat(x):
            return x.transpose(1, 2).view(x.size(0), -1)  # expect: TD013
    """
    good = """
        import torch

        def merge_heads(x, b, t, h, d):
            y = x.transpose(1, 2)
            return y.contiguous().view(b, t, h * d)

        def flat(x):
            return x.permute(0, 2, 1).reshape(x.size(0), -1)

        def same_layout(x):
            y = x.transpose(1, 2)
            y = y.contiguous()
            return y.view(-1)

        def split_tokens_into_a_grid(x, b, c, h, w):
            return x.transpose(1, 2).view(b, c, h, w)  # splitting one dimension needs no copy
    """
    fix_hint = "Use `.reshape(...)`, or call `.contiguous()` before `.view(...)`."
    triggers = (".view(",)

    def check(self, ctx):
        flow = ctx.dataflow
        for call in ctx.facts.calls:
            if call.method != "view" or not isinstance(call.node.func, cst.Attribute):
                continue
            if call.node.args and all(_is_dtype(a.value) for a in call.node.args):
                continue  # x.view(torch.float16): a dtype view, no layout involved
            source = call.node.func.value
            if not _reordering(source) and isinstance(source, (cst.Name, cst.Attribute)) and dotted_name(source):
                held = flow.value_of(dotted_name(source), call.function, call.context.order)
                if held is None:
                    continue
                source = held[0]
            reorder = _reordering(source)
            if reorder and _merges_dimensions(source, call.node):
                yield ctx.report(
                    call.node,
                    f"`.view()` on the result of `{reorder}` (a non-contiguous view) raises \"view size is not "
                    "compatible with input tensor's size and stride\"; use `.reshape()` or `.contiguous().view()`",
                )


def _reordering(node) -> str | None:
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in _REORDERING:
        if node.func.attr.value == "t" and (node.args or dotted_name(node.func.value) == "self"):
            return None  # `self.t(x)`: a submodule called t, not Tensor.t()
        return f".{node.func.attr.value}()"
    if isinstance(node, cst.Attribute) and node.attr.value in _REORDERING_ATTRS:
        return f".{node.attr.value}"
    return None


def _merges_dimensions(reordered, view: cst.Call) -> bool:
    """Only a view that merges dimensions fails on a reordered tensor; splitting one is always possible.

    Without shapes this is decided from what the code says: `permute` gives the exact rank, `transpose(a, b)`
    a lower bound; a view with fewer sizes than that (or a lone -1) merges. Anything else is not flagged.
    """
    sizes = [a.value for a in view.args if a.keyword is None]
    if any(a.star for a in view.args) or not sizes:
        return False
    if len(sizes) == 1 and isinstance(sizes[0], (cst.Tuple, cst.List)):
        sizes = [el.value for el in sizes[0].elements]
    if len(sizes) == 1:
        return True  # flattening everything
    rank = _known_rank(reordered)
    return rank is not None and len(sizes) < rank


def _known_rank(node) -> int | None:
    if isinstance(node, cst.Attribute):
        return 2 if node.attr.value in ("T", "mT") else None
    method = node.func.attr.value
    args = [a.value for a in node.args if a.keyword is None]
    if method == "permute":
        if len(args) == 1 and isinstance(args[0], (cst.Tuple, cst.List)):
            return len(args[0].elements)
        return len(args) or None
    if method == "t":
        return 2
    ints = [int(a.value) for a in args if isinstance(a, cst.Integer)]
    return max(ints) + 1 if len(ints) == 2 else None


def _is_dtype(node) -> bool:
    name = dotted_name(node) or ""
    return name.startswith("torch.") and name.rsplit(".", 1)[-1] in {
        "float16", "float32", "float64", "bfloat16", "int8", "uint8", "int16", "int32", "int64", "half", "float", "long",
        "int", "bool", "double", "complex64",
    }
