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
        facts, flow = ctx.facts, ctx.dataflow
        if not any(self._is_sampler(c) for c in facts.calls):
            return
        given_epoch = self._samplers_given_epoch(ctx)
        if given_epoch is None:
            return  # set_epoch on something we cannot trace: assume it is this sampler
        reported: set[int] = set()
        for loop in facts.loops:
            if loop.node.__class__ is not cst.For:
                continue
            samplers = [self._shuffling_sampler_of(ctx, o) for o in flow.origins(loop.node.iter, loop.function, loop.order)]
            samplers = [s for s in samplers if s is not None and id(s) not in given_epoch and id(s) not in reported]
            if not samplers:
                continue
            sampler = samplers[0]
            epoch_loop = self._epoch_loop(ctx, loop)
            if epoch_loop is None:
                continue
            reported.add(id(sampler))
            name = self._sampler_name(ctx, sampler)
            label = f"'{name}'" if name else "the DistributedSampler"
            call = f"{name}.set_epoch(epoch)" if name else "loader.sampler.set_epoch(epoch)"
            yield ctx.report(
                epoch_loop.node,
                f"{label} is iterated every epoch but `set_epoch` is never called, so every epoch shuffles "
                f"identically on every rank; call `{call}` at the start of each epoch",
            )

    @staticmethod
    def _is_sampler(call: CallInfo) -> bool:
        return call.qualname in _SAMPLERS or (call.qualname is None and call.dotted == "DistributedSampler")

    def _samplers_given_epoch(self, ctx) -> set[int] | None:
        """ids of the sampler calls that receive set_epoch; None if a receiver cannot be traced."""
        flow, out = ctx.dataflow, set()
        for c in ctx.facts.method_calls("set_epoch"):
            receiver = c.node.func.value
            if isinstance(receiver, cst.Attribute) and receiver.attr.value in ("sampler", "batch_sampler"):
                loader = flow.origin(receiver.value, c.function, c.context.order)  # loader.sampler.set_epoch
                made = self._sampler_of(ctx, loader)
            else:
                made = flow.origin(receiver, c.function, c.context.order)
            if made is None:
                return None
            out.add(id(made.call))
        return out

    def _sampler_of(self, ctx, iterated):
        """The DistributedSampler behind what a loop iterates: a DataLoader's `sampler=`, a
        `BatchSampler(sampler, ...)`, or the sampler itself."""
        if iterated is None:
            return None
        info = ctx.facts.call_info(iterated.call)
        if info is not None and self._is_sampler(info):
            return iterated
        name = (ctx.facts.qualify(iterated.call.func) or dotted_name(iterated.call.func) or "").rsplit(".", 1)[-1]
        arg = keyword_arg(iterated.call, "sampler")
        if arg is None and name == "BatchSampler" and iterated.call.args:
            arg = iterated.call.args[0]
        if arg is None and name == "DataLoader":
            batch = keyword_arg(iterated.call, "batch_sampler")
            inner = ctx.dataflow.origin(batch.value, iterated.function, iterated.order) if batch is not None else None
            return self._sampler_of(ctx, inner) if inner is not None else None
        if arg is None or name not in ("DataLoader", "BatchSampler"):
            return None
        return ctx.dataflow.origin(arg.value, iterated.function, iterated.order)

    def _shuffling_sampler_of(self, ctx, iterated) -> cst.Call | None:
        sampler = self._sampler_of(ctx, iterated)
        info = ctx.facts.call_info(sampler.call) if sampler is not None else None
        if info is None or not self._is_sampler(info):
            return None
        shuffle = keyword_arg(sampler.call, "shuffle")
        if shuffle is not None and isinstance(shuffle.value, cst.Name) and shuffle.value.value == "False":
            return None  # nothing for set_epoch to change
        return sampler.call

    def _epoch_loop(self, ctx, loop: LoopInfo) -> LoopInfo | None:
        """The loop that runs `loop` once per epoch: its parent, or a loop calling its function."""
        if loop.parent is not None:
            return loop.parent
        for site in ctx.dataflow.call_sites(loop.function):
            if site.context.loops:
                return site.context.loops[-1]
            for outer in ctx.dataflow.call_sites(site.function):  # train() -> _run_epoch() -> loop
                if outer.context.loops:
                    return outer.context.loops[-1]
        return None

    @staticmethod
    def _sampler_name(ctx, sampler: cst.Call) -> str | None:
        for a in ctx.facts.assigns:
            if a.value is sampler and len(a.targets) == 1:
                return a.targets[0]
        return None
