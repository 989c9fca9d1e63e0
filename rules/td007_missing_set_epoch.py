"""TD007: a DistributedSampler iterated epoch after epoch without set_epoch()."""

from __future__ import annotations

import libcst as cst

from torchdoctor.facts import CallInfo, LoopInfo, dotted_name, keyword_arg
from torchdoctor.rule import Rule

_SAMPLERS = {"torch.utils.data.DistributedSampler", "torch.utils.data.distributed.DistributedSampler"}


class MissingSetEpoch(Rule):
    code = "TD007"
    name = "missing-set-epoch"
    severity = "error"
    summary = "A DistributedSampler is iterated every epoch without sampler.set_epoch(epoch)"
    rationale = """
        `DistributedSampler` shuffles with a seed derived from its epoch counter, which
        only `set_epoch()` advances. Without it every epoch sees the same order on
        every rank: shuffling is silently off after the first epoch, which hurts
        convergence and generalisation in a way no error message reveals.
    """
    bad = """
        import torch.distributed as dist
        from torch.utils.data import DataLoader
        from torch.utils.data.distributed import DistributedSampler

        def train(model, dataset, opt, epochs):
            sampler = DistributedSampler(dataset, shuffle=True)
            loader = DataLoader(dataset, batch_size=64, sampler=sampler)
            for epoch in range(epochs):  # expect: TD007
                for x, y in loader:
                    opt.zero_grad()
                    model(x, y).backward()
                    opt.step()
    """
    good = """
        import torch.distributed as dist
        from torch.utils.data import DataLoader
        from torch.utils.data.distributed import DistributedSampler

        def train(model, dataset, opt, epochs):
            loader = DataLoader(dataset, batch_size=64, sampler=DistributedSampler(dataset, shuffle=True))
            for epoch in range(epochs):
                loader.sampler.set_epoch(epoch)
                for x, y in loader:
                    opt.zero_grad()
                    model(x, y).backward()
                    opt.step()
    """
    fix_hint = "Call `sampler.set_epoch(epoch)` at the start of every epoch, before iterating the DataLoader."
    triggers = ("DistributedSampler",)

    def check(self, ctx):
        facts = ctx.facts
        samplers = [c for c in facts.calls if self._is_sampler(ctx, c)]
        if not samplers:
            return
        set_epoch_receivers = {
            ctx.training.canonical(c.receiver, c.function) or c.receiver
            for c in facts.method_calls("set_epoch")
        }
        if any(not r or r.endswith(".sampler") or r.endswith("batch_sampler") for r in set_epoch_receivers):
            return  # set through the loader (or something we cannot name): fine for every sampler here
        for sampler_call in samplers:
            shuffle = keyword_arg(sampler_call.node, "shuffle")
            if shuffle is not None and isinstance(shuffle.value, cst.Name) and shuffle.value.value == "False":
                continue  # no shuffling, nothing for set_epoch to change
            sampler = self._assigned_name(facts, sampler_call)
            if sampler is not None and sampler in set_epoch_receivers:
                continue
            if set_epoch_receivers and sampler is None:
                continue
            loaders = self._loaders_using(ctx, sampler_call, sampler)
            epoch_loop = self._epoch_loop_iterating(ctx, loaders)
            if epoch_loop is None:
                continue
            label = f"'{sampler}'" if sampler else "the DistributedSampler"
            call = f"{sampler}.set_epoch(epoch)" if sampler else "loader.sampler.set_epoch(epoch)"
            yield ctx.report(
                epoch_loop.node,
                f"{label} is iterated every epoch but `set_epoch` is never called, so every epoch shuffles "
                f"identically on every rank; call `{call}` at the start of each epoch",
            )

    @staticmethod
    def _is_sampler(ctx, call: CallInfo) -> bool:
        return call.qualname in _SAMPLERS or (call.qualname is None and call.dotted == "DistributedSampler")

    @staticmethod
    def _assigned_name(facts, call: CallInfo) -> str | None:
        for a in call.function.assigns:
            if a.value is call.node and len(a.targets) == 1:
                return a.targets[0]
        return None

    def _loaders_using(self, ctx, sampler_call: CallInfo, sampler: str | None) -> set[str]:
        loaders = set()
        for a in ctx.facts.assigns:
            value = a.value
            if not isinstance(value, cst.Call) or len(a.targets) != 1:
                continue
            arg = keyword_arg(value, "sampler")
            if arg is None:
                continue
            if arg.value is sampler_call.node or (sampler and dotted_name(arg.value) == sampler):
                loaders.add(a.targets[0])
        return loaders

    def _epoch_loop_iterating(self, ctx, loaders: set[str]) -> LoopInfo | None:
        """An outer loop that iterates one of `loaders` in an inner loop, directly or through a local function."""
        if not loaders:
            return None
        for loop in ctx.facts.loops:
            if loop.parent is not None and loop.iter_name in loaders:
                return loop.parent
        for loop in ctx.facts.loops:
            for call in loop.calls:
                callee = ctx.facts.resolve_function(call)
                if callee is None:
                    continue
                args = {dotted_name(a.value) for a in call.node.args}
                if args & loaders and any(inner.parent is None for inner in callee.loops):
                    return loop
        return None
