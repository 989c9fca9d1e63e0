"""TD022: nn.MultiheadAttention / nn.Transformer* without batch_first=True fed (batch, seq, embed) tensors."""

from __future__ import annotations

import libcst as cst

from torchdoctor.facts import dotted_name, keyword_arg
from torchdoctor.rule import Rule

_SEQ_FIRST = {
    "torch.nn.MultiheadAttention", "torch.nn.Transformer", "torch.nn.TransformerEncoderLayer",
    "torch.nn.TransformerDecoderLayer",
}
_BATCH_NAMES = {"b", "bs", "batch", "batch_size", "B", "N", "n_batch", "bsz"}


class MultiheadAttentionSequenceFirst(Rule):
    code = "TD022"
    name = "multihead-attention-sequence-first"
    severity = "warning"
    summary = "MultiheadAttention/Transformer layers default to (seq, batch, embed); fed batch-first tensors they mix examples"
    rationale = """
        `nn.MultiheadAttention` and the `nn.Transformer*` layers expect `(seq, batch, embed)`
        unless built with `batch_first=True`. Given `(batch, seq, embed)` tensors they attend
        across the batch instead of across the sequence: no error, every shape checks out, and
        examples leak into each other. Flagged where the forward visibly works batch-first
        (`b, t, c = x.shape`).
    """
    bad = """
        import torch.nn as nn

        class Block(nn.Module):
            def __init__(self, dim, heads):
                super().__init__()
                self.attn = nn.MultiheadAttention(dim, heads)  # expect: TD022

            def forward(self, x):
                b, t, c = x.shape
                out, _ = self.attn(x, x, x)
                return out.reshape(b, t, c)
    """
    good = """
        import torch.nn as nn

        class Block(nn.Module):
            def __init__(self, dim, heads):
                super().__init__()
                self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)

            def forward(self, x):
                b, t, c = x.shape
                out, _ = self.attn(x, x, x)
                return out.reshape(b, t, c)

        class SeqFirst(nn.Module):
            def __init__(self, dim, heads):
                super().__init__()
                self.attn = nn.MultiheadAttention(dim, heads)

            def forward(self, x):
                t, b, c = x.shape
                return self.attn(x, x, x)[0]
    """
    fix_hint = "Build the layer with `batch_first=True` (or transpose inputs to `(seq, batch, embed)`)."
    triggers = ("MultiheadAttention", "Transformer")

    def check(self, ctx):
        facts = ctx.facts
        for cls in facts.classes.values():
            init, forward = cls.methods.get("__init__"), cls.methods.get("forward")
            if init is None or forward is None:
                continue
            batch_first_inputs = self._batch_first_names(forward)
            if not batch_first_inputs:
                continue
            for a in init.assigns:
                if len(a.targets) != 1 or not isinstance(a.value, cst.Call):
                    continue
                if facts.qualify(a.value.func) not in _SEQ_FIRST or keyword_arg(a.value, "batch_first") is not None:
                    continue
                attr = a.targets[0]
                fed = any(
                    c.dotted == attr and any(dotted_name(arg.value) in batch_first_inputs for arg in c.node.args)
                    for c in forward.calls
                )
                if fed:
                    yield ctx.report(a.value, f"`{attr}` expects (seq, batch, embed) but forward feeds it "
                                              "batch-first tensors: attention runs across the batch; pass batch_first=True")

    @staticmethod
    def _batch_first_names(forward) -> set[str]:
        """Tensors whose shape forward unpacks batch-first: `b, t, c = x.shape` -> {"x"}."""
        names = set()
        for a in forward.assigns:
            if len(a.targets) >= 2 and a.targets[0] in _BATCH_NAMES and a.value is not None:
                value = a.value
                if isinstance(value, cst.Attribute) and value.attr.value == "shape":
                    names.add(dotted_name(value.value))
                elif isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value == "size":
                    names.add(dotted_name(value.func.value))
        names.discard(None)
        return names
