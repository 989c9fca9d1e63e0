"""TD012: a tensor kept as a plain attribute of an nn.Module instead of a buffer or parameter."""

from __future__ import annotations

import libcst as cst

from torchdoctor.facts import keyword_arg, positional_args
from torchdoctor.rule import Rule

_FACTORIES = {
    "tensor", "as_tensor", "zeros", "ones", "empty", "full", "arange", "linspace", "logspace", "eye", "rand",
    "randn", "randint", "randperm", "tril", "triu", "from_numpy", "Tensor", "FloatTensor", "LongTensor",
}
_MOVES = ("to", "cuda", "type_as", "register_buffer", "copy_")


class UnregisteredTensorAttribute(Rule):
    code = "TD012"
    name = "unregistered-tensor-attribute"
    severity = "error"
    summary = "A tensor stored as a plain module attribute: not moved by .to(), not saved, not trained"
    rationale = """
        `self.mask = torch.ones(n, n)` in `__init__` is a plain Python attribute: `model.to("cuda")`
        leaves it on the CPU (the first forward on GPU raises), `state_dict()` does not save it,
        and a `requires_grad=True` tensor stored this way is never returned by `parameters()`, so
        the optimizer never trains it. Register constants with `self.register_buffer(...)` and
        learnable tensors as `nn.Parameter`. (0-dim constants mix with CUDA tensors and are left alone.)
    """
    bad = """
        import torch
        import torch.nn as nn

        class CausalAttention(nn.Module):
            def __init__(self, dim, block):
                super().__init__()
                self.qkv = nn.Linear(dim, 3 * dim)
                self.mask = torch.tril(torch.ones(block, block))  # expect: TD012
                self.scale = torch.ones(dim, requires_grad=True)  # expect: TD012

            def forward(self, x):
                q, k, v = self.qkv(x).chunk(3, dim=-1)
                att = (q @ k.transpose(-2, -1)).masked_fill(self.mask == 0, float("-inf"))
                return att.softmax(-1) @ v * self.scale
    """
    good = """
        import torch
        import torch.nn as nn

        class CausalAttention(nn.Module):
            def __init__(self, dim, block):
                super().__init__()
                self.qkv = nn.Linear(dim, 3 * dim)
                self.register_buffer("mask", torch.tril(torch.ones(block, block)))
                self.scale = nn.Parameter(torch.ones(dim))
                self.temperature = torch.tensor(0.5)  # 0-dim: mixes with CUDA tensors
                self.cache = torch.zeros(4)  # moved where it is used

            def forward(self, x):
                q, k, v = self.qkv(x).chunk(3, dim=-1)
                att = (q @ k.transpose(-2, -1)).masked_fill(self.mask == 0, float("-inf"))
                return att.softmax(-1) @ v * self.scale * self.temperature + self.cache.to(x.device).sum()
    """
    fix_hint = "Use `self.register_buffer(\"name\", tensor)` for constants and `nn.Parameter(tensor)` for learnable tensors."
    triggers = ("__init__",)

    def check(self, ctx):
        facts, training = ctx.facts, ctx.training
        for cls in facts.classes.values():
            init, forward = cls.methods.get("__init__"), cls.methods.get("forward")
            if init is None or forward is None or not training.is_module_class(facts, cls):
                continue
            class_code = facts.module.code_for_node(cls.node)
            forward_code = facts.module.code_for_node(forward.node)
            for a in init.assigns:
                if len(a.targets) != 1 or not a.targets[0].startswith("self.") or a.augmented:
                    continue
                attr = a.targets[0]
                if not self._is_tensor_factory(facts, a.value):
                    continue
                short = attr.split(".", 1)[1]
                if f"{attr}" not in forward_code or any(f"{attr}.{m}(" in class_code for m in _MOVES):
                    continue
                if f'"{short}"' in class_code or f"'{short}'" in class_code:
                    continue  # registered or handled by name somewhere (register_buffer, _apply overrides)
                if any(attr in b.targets for m in cls.methods.values() if m is not init for b in m.assigns):
                    continue  # a placeholder that forward (or a helper) replaces with a tensor on the right device
                grad = keyword_arg(_innermost(a.value), "requires_grad")
                learnable = grad is not None and isinstance(grad.value, cst.Name) and grad.value.value == "True"
                yield ctx.report(
                    a.node,
                    f"`{attr}` is a plain tensor attribute used in forward: " + (
                        "it is not in parameters(), so the optimizer never trains it; wrap it in nn.Parameter"
                        if learnable else
                        "model.to(device) leaves it behind (the first GPU forward raises) and state_dict() does not "
                        "save it; use self.register_buffer(...)"
                    ),
                )

    @staticmethod
    def _is_tensor_factory(facts, value) -> bool:
        call = _innermost(value)
        if not isinstance(call, cst.Call):
            return False
        q = facts.qualify(call.func) or ""
        if not (q.startswith("torch.") and q.count(".") == 1 and q[6:] in _FACTORIES):
            return False
        args = positional_args(call)
        if q[6:] in ("tensor", "as_tensor") and not (args and isinstance(args[0], (cst.List, cst.Tuple, cst.ListComp))):
            return keyword_arg(call, "requires_grad") is not None and bool(args)
        return True


def _innermost(value):
    """`torch.tril(torch.ones(n, n))` -> the tril call; `.float()` chains are looked through."""
    while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value in ("float", "long", "bool", "half"):
        value = value.func.value
    return value
