"""TD027: torch.save in a DDP script with no rank-0 guard."""

from __future__ import annotations

import re

from torchdoctor.facts import is_test_module
from torchdoctor.rule import Rule

_GUARD = re.compile(
    r"rank|main|master|is_primary|local_process_zero|global_zero|is_root|zero|(id|gpu|device|local|proc)\w*\s*==\s*0", re.I
)
_GUARD_FUNCTION = re.compile(r"master|main_process|is_main|rank_?0|rank_zero|primary|global_zero|on_main", re.I)
_DDP_MARKERS = ("DistributedDataParallel", "init_process_group")


class DdpSaveOnEveryRank(Rule):
    code = "TD027"
    name = "ddp-save-on-every-rank"
    severity = "warning"
    summary = "torch.save in a DDP script without a rank-0 guard: every process writes the same file"
    rationale = """
        Under DistributedDataParallel every rank runs the same script. An unguarded
        `torch.save` makes all of them write the same checkpoint at once: wasted I/O at best,
        a corrupted or truncated file when the writes interleave on shared storage. Save on
        rank 0 only (`if dist.get_rank() == 0:`) and, if others load it, barrier afterwards.
    """
    bad = """
        import torch
        import torch.distributed as dist
        from torch.nn.parallel import DistributedDataParallel as DDP

        def train(model, rank, epochs, path):
            dist.init_process_group("nccl")
            ddp = DDP(model.to(rank), device_ids=[rank])
            for epoch in range(epochs):
                torch.save(ddp.module.state_dict(), path)  # expect: TD027
    """
    good = """
        import torch
        import torch.distributed as dist
        from torch.nn.parallel import DistributedDataParallel as DDP

        def is_main_process():
            return dist.get_rank() == 0

        def save_checkpoint(model, path):
            torch.save(model.state_dict(), path)

        def train(model, rank, epochs, path):
            dist.init_process_group("nccl")
            ddp = DDP(model.to(rank), device_ids=[rank])
            for epoch in range(epochs):
                if is_main_process():
                    save_checkpoint(ddp.module, path)
                if rank == 0:
                    torch.save(ddp.module.state_dict(), path)
    """
    fix_hint = "Guard the save with `if dist.get_rank() == 0:` (or your `is_main_process()`), then `dist.barrier()` if other ranks read it."
    triggers = _DDP_MARKERS

    def check(self, ctx):
        if not any(m in ctx.facts.source for m in _DDP_MARKERS) or is_test_module(ctx.facts):
            return  # tests save from one process on purpose
        flow = ctx.dataflow
        for call in ctx.facts.calls_named("torch.save"):
            if self._guarded(ctx, flow, call, 0):
                continue
            yield ctx.report(call.node, "`torch.save` runs on every DDP rank: all processes write the same file at "
                                        "once; guard it with `if dist.get_rank() == 0:`")

    def _guarded(self, ctx, flow, call, depth) -> bool:
        if any(_GUARD.search(ctx.code(test)) for test in call.context.conditions):
            return True
        fn = call.function
        if _GUARD_FUNCTION.search(fn.name) or "save" in fn.name and depth == 0 and not flow.call_sites(fn) and not fn.is_module:
            return True  # `save_on_master()`, or a save helper whose callers live elsewhere
        if fn.is_module or depth > 3:
            return False
        sites = flow.call_sites(fn)
        return bool(sites) and all(self._guarded(ctx, flow, s, depth + 1) for s in sites)
