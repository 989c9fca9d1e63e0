"""TD021: .to(device)/.cuda() on a DistributedDataParallel/DataParallel wrapper."""

from __future__ import annotations

import libcst as cst

from torchdoctor.rule import Rule


_DDP = {"torch.nn.parallel.DistributedDataParallel", "torch.nn.parallel.distributed.DistributedDataParallel"}


class ToAfterDdpWrap(Rule):
    code = "TD021"
    name = "to-after-ddp-wrap"
    severity = "error"
    summary = ".to(device)/.cuda() on a DistributedDataParallel wrapper instead of the model before wrapping"
    rationale = """
        `DistributedDataParallel` records its module's device and registers gradient hooks and
        buckets for the parameters as they are when it is constructed. Moving the wrapper
        afterwards leaves those in the wrong place: DDP raises about module devices, or
        communication buckets point at the old tensors. Move the model first, then wrap it.
        (`nn.DataParallel(model).cuda()` is fine and not flagged: DataParallel checks its module's
        device at every forward, so moving the wrapper moves what it checks.)
    """
    bad = """
        import torch
        from torch.nn.parallel import DistributedDataParallel as DDP

        def setup(model, local_rank):
            ddp = DDP(model, device_ids=[local_rank])
            ddp = ddp.to(local_rank)  # expect: TD021
            return ddp
    """
    good = """
        import torch
        from torch.nn.parallel import DistributedDataParallel as DDP

        def setup(model, local_rank):
            model = model.to(local_rank)
            return DDP(model, device_ids=[local_rank])
    """
    fix_hint = "Call `model.to(device)` before `DistributedDataParallel(model, device_ids=[device])`."
    triggers = ("DataParallel", "DDP")

    def check(self, ctx):
        flow = ctx.dataflow
        for call in ctx.facts.calls:
            if call.method not in ("to", "cuda") or not isinstance(call.node.func, cst.Attribute):
                continue
            target = call.node.func.value
            if isinstance(target, cst.Call):
                q = ctx.facts.qualify(target.func)
            else:
                origin = flow.origin(target, call.function, call.context.order)
                q = origin.qualname() if origin is not None else None
            if q in _DDP:
                wrapper = q.rsplit(".", 1)[-1]
                yield ctx.report(
                    call.node,
                    f"`.{call.method}()` on a {wrapper} wrapper: the wrapper already recorded its module's device and "
                    "gradient buckets; move the model before wrapping it",
                )
