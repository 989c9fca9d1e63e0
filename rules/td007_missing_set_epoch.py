"""TD007: a DistributedSampler iterated epoch after epoch without set_epoch()."""

from __future__ import annotations

import re

import libcst as cst

from torchdoctor.decorators import is_no_grad_name
from torchdoctor.facts import CallInfo, LoopInfo, calls_within, dotted_name, is_test_module, keyword_arg, names_in
from torchdoctor.project import lookup_class
from torchdoctor.rule import Rule

_EVALUATION = re.compile(r"eval|valid|test|predict|infer|(^|_)(val|dev)(_|\d|$)", re.I)
_LOADER_WRAPPERS = ("Loader", "Wrapper", "Prefetcher", "Iterator")
# `RandomSampler if rank == -1 else DistributedSampler`, DGL's `DataLoader(..., use_ddp=True)`: samplers made without a call of their own
_SAMPLER_WITHOUT_ITS_OWN_CALL = re.compile(
    r"\bDistributedSampler\s+if\b|\belse\s+DistributedSampler\b|\buse_ddp\s*=|\bcreate_loader\("
)
_LOADER_ARG = re.compile(r"(loader|dataloader|_dl|^dl)$", re.I)
_DRAW = re.compile(r"(sample|draw)(_|$)")  # `rb.sample_tensors(...)`, `buffer.sample(n)`: a fresh random batch
_ONE_EPOCH = re.compile(r"(^|_)(one_)?epoch$")  # `train_one_epoch`, `_train_epoch`, `run_epoch`: run once per epoch
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
    # The sampler may be built here (or a library subclass: StatefulDistributedSampler), or by a
    # project function in another file that returns the loader (`create_dataloader(...)`).
    triggers = ("DistributedSampler", "distributed", "sampler", "DDP", "rank", "world_size")

    def check(self, ctx):
        facts = ctx.facts
        if is_test_module(facts):
            return  # (accelerate's test scripts run three seeded epochs on purpose to compare orders)
        # (in a project, the sampler may be built in another file and handed in: `train(..., train_sampler=
        # train_sampler)` with `train_sampler: Optional[DistributedSampler]`)
        if not any(self._is_sampler(c) for c in facts.calls) and not _SAMPLER_WITHOUT_ITS_OWN_CALL.search(facts.source) and (
            ctx.project is None
        ):
            return
        yield from self._wrappers_that_drop_the_epoch(ctx)
        given_epoch = self._samplers_given_epoch(ctx)
        if given_epoch is None:
            return  # set_epoch on something we cannot trace: assume it is this sampler
        reported: set[int] = set()
        for loop, epoch_loop, samplers in self._iterations(ctx):
            samplers = [s for s in samplers if s is not None and id(s) not in given_epoch and id(s) not in reported]
            if epoch_loop is not None:
                samplers = [s for s in samplers if not _rebuilt_over_fresh_data(ctx.facts, s, epoch_loop)]
            # (`loader = train_loader if is_train else test_loader` in a shared `run_epoch(split)`: the test
            # sampler's order changes no loss average)
            samplers = [s for s in samplers if not _EVALUATION.search((self._sampler_name(ctx, s) or "").rsplit(".", 1)[-1])]
            if not samplers or epoch_loop is None:
                continue
            sampler = samplers[0]
            reported.add(id(sampler))
            name = self._sampler_name(ctx, sampler)
            label = f"'{name}'" if name else "the DistributedSampler"
            # (a sampler built in another file: reached through the loader this loop iterates)
            loader = loop.iter_name if loop.iter_name and all(p.isidentifier() for p in loop.iter_name.split(".")) else "loader"
            call = f"{name}.set_epoch(epoch)" if name else f"{loader}.sampler.set_epoch(epoch)"
            here = any(epoch_loop.function is fn for fn in ctx.facts.functions)
            yield ctx.report(
                epoch_loop.node if here else loop.node,  # (an epoch loop in another file: this file's loop)
                f"{label} is iterated every epoch but `set_epoch` is never called, so every epoch shuffles "
                f"identically on every rank; call `{call}` at the start of each epoch",
            )

    def _wrappers_that_drop_the_epoch(self, ctx):
        """A loader wrapper that keeps a shuffling DistributedSampler (`self.sampler = DistributedSampler(...)`)
        and defines its own `set_epoch(epoch)`, which passes the epoch to no sampler: callers that do call
        `train_dataset.set_epoch(epoch)` still get the same order every epoch (the CycleGAN-lineage
        `CustomDatasetDataLoader` of SadTalker and GeneFace)."""
        for cls in ctx.facts.all_classes:
            method = cls.methods.get("set_epoch")
            if method is None or any(c.method == "set_epoch" or c.receiver == "self" for c in method.calls):
                continue  # (it passes the epoch on, or hands it to another method of its own that may)
            kept = [
                (a.targets[0], c) for m in cls.methods.values() for a in m.assigns
                if len(a.targets) == 1 and a.targets[0].startswith("self.") and isinstance(a.value, cst.Call)
                for c in [ctx.facts.call_info(a.value)] if c is not None and self._is_sampler(c)
                and not _turned_off(a.value, "shuffle")
            ]
            if kept:
                name = kept[0][0]
                yield ctx.report(
                    method.node,
                    f"`{cls.name}.set_epoch` never passes the epoch on to '{name}', a DistributedSampler, so every "
                    f"epoch shuffles identically on every rank; call `{name}.set_epoch(epoch)` in it",
                )

    def _iterations(self, ctx):
        """(loop, epoch loop, samplers it may iterate) for every loop over a loader: loops of this file,
        and loops of project functions in other files that an epoch loop here hands a loader to
        (`for epoch ...: train_one_epoch(model, data_loader_train, ...)`)."""
        flow = ctx.dataflow
        for loop in ctx.facts.loops:
            if _first_batch_only(loop):
                continue  # `for item in dataloader_train: print(item[0].shape); break`: a peek at one batch
            if isinstance(loop.node, cst.For) and not _evaluates(ctx.evaluation, loop.function) and not _EVALUATION.search(loop.iter_name or ""):
                # (`for batch in tqdm(valid_dataloader)` inside the epoch loop: evaluation order does not matter)
                iterated = self._iterated_origins(flow, loop.node.iter, loop.function, loop.order)
                epoch_loop = self._epoch_loop(ctx, loop)
                samplers = [s for o in iterated for s in self._shuffling_samplers_of(ctx, o)]
                if not samplers and epoch_loop is not None and epoch_loop is not loop and epoch_loop.function is loop.function:
                    # `def train(model, ..., train_dl, ..., train_sampler=None)` runs the epochs itself over a
                    # loader its callers build, in this file or another (a DDP launcher's DistributedSampler)
                    samplers = [s for o in _handed_in_origins(ctx, flow, loop) for s in self._shuffling_samplers_of(ctx, o)]
                yield loop, epoch_loop, samplers
        for call in ctx.facts.calls:  # `batches = iter(loader)` once per epoch, then next(batches)
            if call.dotted == "iter" and call.node.args and call.context.loop is not None and not _evaluates(ctx.evaluation, call.function):
                iterated = [o for o in flow.origins(call.node.args[0].value, call.function, call.context.order) if o]
                yield call.context.loop, call.context.loop, [s for o in iterated for s in self._shuffling_samplers_of(ctx, o)]
        project = ctx.project
        if project is None:
            return
        for loop in ctx.facts.loops:
            for call in loop.calls:
                if call.context.loop is not loop or call.dotted is None:
                    continue
                yield from self._loader_kept_by_object(ctx, loop, call)
                found = self._project_callee(ctx, call)
                if found is None or not hasattr(found[1], "loops"):
                    continue
                callee = found[1]
                if _evaluates(ctx.evaluation.for_file(found[0]), callee):
                    continue  # evaluation order does not matter: no shuffle to vary
                for param in _iterated_params(callee):
                    arg = flow.argument_for(callee, param, call)
                    if arg is None:
                        continue
                    iterated = [o for o in flow.origins(arg, call.function, call.context.order) if o is not None]
                    yield loop, loop, [s for o in iterated for s in self._shuffling_samplers_of(ctx, o)]

    def _loader_kept_by_object(self, ctx, loop, call):
        """`trainer.train()` once per epoch, on `trainer = Engine(model, ..., dataloader_train=loader)` whose
        constructor keeps the loader (`self.dataloader_train = dataloader_train`) and whose `train` iterates
        it (transfuser): the samplers of what the construction was handed."""
        flow = ctx.dataflow
        if not isinstance(call.node.func, cst.Attribute) or call.receiver in (None, "self") or "." in call.receiver:
            return
        held = flow.value_of(call.receiver, call.function, call.context.order)
        built = held[0] if held is not None else None
        if not isinstance(built, cst.Call):
            return
        found = lookup_class(ctx.project, ctx.facts, dotted_name(built.func))
        method = found[1].methods.get(call.method) if found is not None else None
        init = found[1].methods.get("__init__") if found is not None else None
        site = ctx.facts.call_info(built)
        if method is None or init is None or site is None or _evaluates(ctx.evaluation.for_file(found[0]), method):
            return
        stored = found[1].stored_params()
        for attribute in _iterated_attributes(method):
            param = stored.get(attribute)
            arg = flow.argument_for(init, param, site) if param is not None else None
            if arg is None:
                continue
            iterated = [o for o in flow.origins(arg, site.function, site.context.order) if o is not None]
            yield loop, loop, [s for o in iterated for s in self._shuffling_samplers_of(ctx, o)]

    @staticmethod
    def _project_callee(ctx, call):
        """(facts, function) of a project function called by its imported name (`train_one_epoch(...)`), or
        of the method of a project object (`executor.train(model, ..., train_data_loader, ...)` on
        `executor = Executor()`); None otherwise."""
        if "." not in call.dotted:
            return ctx.project.resolve_imported(ctx.facts, call.dotted)
        if not isinstance(call.node.func, cst.Attribute) or call.receiver == "self":
            return None
        if not any(_LOADER_ARG.search((dotted_name(a.value) or "").rsplit(".", 1)[-1]) for a in call.node.args):
            return None  # (only calls handed something named like a loader are looked up: instances cost a search)
        inst = ctx.dataflow.instance_of(call.node.func.value, call.function, call.context.order)
        if inst is None or inst.cls is None or call.method not in inst.cls.methods:
            return None
        return inst.facts, inst.cls.methods[call.method]

    @staticmethod
    def _iterated_origins(flow, expr, fn, order):
        """What a `for` iterates: its iterable's origins, and for `log_every(loader, ...)`-style wrappers
        the origins of their arguments too."""
        found = _origins_through_generators(flow, expr, fn, order)
        calls = [expr]
        while calls:  # enumerate(metric_logger.log_every(data_loader, 10, header)), zip(range(n), a, cycle(b))
            call = calls.pop()
            if not isinstance(call, cst.Call):
                continue
            for arg in call.args:
                if arg.keyword is None and isinstance(arg.value, (cst.Name, cst.Attribute)):
                    found += _origins_through_generators(flow, arg.value, fn, order)
                elif arg.keyword is None and isinstance(arg.value, cst.Call):
                    calls.append(arg.value)
        return [o for o in found if o is not None]

    @staticmethod
    def _is_sampler(call: CallInfo) -> bool:
        """torch's DistributedSampler, or a library's subclass named like it (StatefulDistributedSampler)."""
        if call.qualname in _SAMPLERS:
            return True
        name = (call.qualname or call.dotted or "").rsplit(".", 1)[-1]
        return name.endswith("DistributedSampler") and not name.startswith("Ordered") and not name.startswith("Unrepeated")

    def _samplers_given_epoch(self, ctx) -> set[int] | None:
        """ids of the sampler calls that receive set_epoch; None if a receiver cannot be traced."""
        flow, out = ctx.dataflow, set()
        # (a library's subclass may name it otherwise: cycling_utils' `with train_sampler.in_epoch(epoch):`)
        setters = [c for c in ctx.facts.calls if c.method and "epoch" in c.method and c.node.args and isinstance(c.node.func, cst.Attribute)]
        for c in setters:  # (an untraced receiver of any other `*epoch*` method is not taken for a sampler)
            receiver = c.node.func.value
            if _EVALUATION.search((dotted_name(receiver) or "").rsplit(".", 1)[-1]):
                # `val_sampler.set_epoch(epoch)`: reported samplers are never evaluation ones, and one helper may
                # build both (`train_loader, train_sampler = make_loader(train_set, ...)`, then the same for
                # `val_sampler`): the evaluation sampler's epoch says nothing of the training one's
                continue
            if isinstance(receiver, cst.Attribute) and receiver.attr.value in ("sampler", "batch_sampler"):
                loaders = flow.origins(receiver.value, c.function, c.context.order)  # loader.sampler.set_epoch
                made = [s for o in loaders if o is not None for s in self._samplers_of(ctx, o)]
            else:
                made = [o for o in flow.origins(receiver, c.function, c.context.order) if o is not None]
                if not made and isinstance(receiver, cst.Name):  # `train_sampler.set_epoch(epoch)` on a parameter
                    made = _param_origins(ctx, flow, c.function, receiver.value)
            if not made and c.method == "set_epoch":
                if _EVALUATION.search((dotted_name(receiver) or "").rsplit(".", 1)[-1]):
                    continue  # `eval_sampler.set_epoch(0)` on a parameter: not the training sampler
                return None
            out.update(id(m.call) for m in made)
        out |= self._samplers_handed_to_setters(ctx)
        iterated = {loop.iter_name for loop in ctx.facts.loops if loop.iter_name}
        for c in ctx.facts.calls:
            # `loader.shuffle_dataset(train_loader, cur_epoch)`: a project helper (SlowFast's) that calls
            # set_epoch on the sampler of the loader it is handed (only calls handed a loader the file iterates
            # are looked up: resolving every call in the project is slow)
            if ctx.project is None or not c.dotted or not any(dotted_name(a.value) in iterated for a in c.node.args):
                continue
            found = ctx.project.function_named(ctx.facts, c.dotted)
            if found is None or not any(inner.method == "set_epoch" for inner in found[1].calls):
                continue
            for arg in c.node.args:
                if isinstance(arg.value, (cst.Name, cst.Attribute)):
                    loaders = flow.origins(arg.value, c.function, c.context.order)
                    out.update(id(s.call) for o in loaders if o is not None for s in self._samplers_of(ctx, o))
        return out

    def _samplers_handed_to_setters(self, ctx) -> set[int]:
        """ids of the samplers handed to a project function of another file that calls `set_epoch` on the
        parameter it receives them as (the FSDP example's `train(..., epoch, sampler=sampler1)`, whose
        utils/train_utils.py does `if sampler: sampler.set_epoch(epoch)`)."""
        out: set[int] = set()
        if ctx.project is None:
            return out
        flow, facts = ctx.dataflow, ctx.facts
        bound = {  # names this file binds to a DistributedSampler call
            a.targets[0] for a in facts.assigns
            if len(a.targets) == 1 and isinstance(a.value, cst.Call) and (info := facts.call_info(a.value)) is not None
            and self._is_sampler(info)
        }
        for c in facts.calls:
            handed = any(a.keyword is not None and a.keyword.value == "sampler" or dotted_name(a.value) in bound
                         for a in c.node.args)
            found = ctx.project.function_named(facts, c.dotted) if handed and c.dotted else None
            if found is None or not hasattr(found[1], "calls"):
                continue
            callee = found[1]
            for param in {i.receiver for i in callee.calls if i.method == "set_epoch" and i.receiver in callee.params}:
                arg = flow.argument_for(callee, param, c)
                if arg is not None:
                    out.update(id(o.call) for o in flow.origins(arg, c.function, c.context.order) if o is not None)
        return out

    def _samplers_of(self, ctx, iterated, depth: int = 0) -> list:
        """The DistributedSampler origins behind what a loop iterates: a DataLoader's `sampler=`
        (or `batch_sampler=`), a `BatchSampler(sampler, ...)`, a loader wrapper's loader
        (`PrefetchLoader(loader)`), or the sampler itself; every branch's, in any file of the project."""
        if iterated is None or depth > 6:
            return []
        info = iterated.facts.call_info(iterated.call)
        if _ddp_loader(iterated.call) or _timm_distributed_loader(iterated):
            return [iterated]  # DGL's `DataLoader(..., use_ddp=True, shuffle=True)` holds its own DistributedSampler
        if info is not None and (
            self._is_sampler(info) or self._chosen_sampler_class(ctx, iterated, info) or _epoch_seeded_sampler(ctx, iterated)
        ):
            return [iterated]
        name = (iterated.qualname() or dotted_name(iterated.call.func) or "").rsplit(".", 1)[-1]
        arg = keyword_arg(iterated.call, "sampler")  # whatever takes `sampler=` is a loader
        if arg is None and name == "BatchSampler" and iterated.call.args:
            arg = iterated.call.args[0]
        if arg is None and name.endswith("DataLoader"):  # torch's, or torchdata's StatefulDataLoader
            arg = keyword_arg(iterated.call, "batch_sampler")
        flow = ctx.dataflow.flow_of(iterated)
        unpacked = flow.unpacked_keyword(info, "sampler") if arg is None and info is not None else None
        if unpacked is not None:  # `DataLoader(train_dataset, **train_kwargs)`, `train_kwargs = {"sampler": sampler1}`
            inner = flow.origins(unpacked, iterated.function, iterated.order)
            return [s for o in inner if o is not None for s in self._samplers_of(ctx, o, depth + 1)]
        if arg is None and name.endswith(_LOADER_WRAPPERS):
            # `PrefetchLoader(loader, mean=...)`, `MixUpWrapper(alpha, n, loader, gpu)` iterate their loader
            inner = [o for a in iterated.call.args if a.keyword is None and isinstance(a.value, (cst.Name, cst.Attribute))
                     for o in flow.origins(a.value, iterated.function, iterated.order)]
            return [s for o in inner if o is not None for s in self._samplers_of(ctx, o, depth + 1)]
        if arg is None:
            return []
        inner = flow.origins(arg.value, iterated.function, iterated.order)
        if not any(inner) and isinstance(arg.value, cst.Name):
            # `def create_dataloader(dataset, opt, sampler=None): return DataLoader(..., sampler=sampler)` in
            # data/__init__.py, given `train_sampler = DistIterSampler(...)` by train.py (mmsr, BasicSR)
            inner = _param_origins(ctx, flow, iterated.function, arg.value.value)
        return [s for o in inner if o is not None for s in self._samplers_of(ctx, o, depth + 1)]

    def _chosen_sampler_class(self, ctx, iterated, info: CallInfo) -> bool:
        """`train_sampler(dataset)` after `train_sampler = RandomSampler if rank == -1 else DistributedSampler`."""
        if not isinstance(iterated.call.func, cst.Name):
            return False
        held = ctx.dataflow.flow_of(iterated).value_of(iterated.call.func.value, iterated.function, iterated.order)
        if held is None or not isinstance(held[0], cst.IfExp):
            return False
        facts = iterated.facts
        return any(
            (facts.qualify(branch) or "") in _SAMPLERS or (dotted_name(branch) or "").endswith("DistributedSampler")
            for branch in (held[0].body, held[0].orelse)
        )

    def _shuffling_samplers_of(self, ctx, iterated) -> list[cst.Call]:
        out = []
        for sampler in self._samplers_of(ctx, iterated):
            # (`permutation=False`: NVIDIA semantic-segmentation's own sampler names its shuffle flag so)
            if _turned_off(sampler.call, "shuffle", "permutation"):
                continue  # nothing for set_epoch to change
            out.append(sampler.call)
        return out

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
        if ctx.project is not None and loop.function.cls is not None:
            # `for e in range(...): self._run_epoch(e)` in a base trainer of another file, whose
            # subclass here overrides `_run_epoch`
            for _, _, site in ctx.dataflow.calls_from_bases(loop.function, other_files=True):
                if site.context.loops:
                    return site.context.loops[-1]
            # `for epoch in ...: engine.train_one_epoch(epoch)` in a script, on an instance of this class
            for _, site in ctx.evaluation.sites_anywhere(loop.function):
                if site.context.loops:
                    return site.context.loops[-1]
        if _ONE_EPOCH.search(loop.function.name) and ctx.project is not None and ctx.project.mentions(ctx.facts, ".set_epoch(") is False:
            # OpenStereo's `TrainerTemplate.train_one_epoch`, run by a trainer that a factory builds from the
            # config: its name says it runs once per epoch, and nothing in the project sets a sampler's epoch
            return loop
        return None

    @staticmethod
    def _sampler_name(ctx, sampler: cst.Call) -> str | None:
        for a in ctx.facts.assigns:
            chosen = isinstance(a.value, cst.IfExp) and sampler in (a.value.body, a.value.orelse)  # `... if distributed else None`
            if (a.value is sampler or chosen) and len(a.targets) == 1:  # (timm's loader holds the sampler; DGL's takes set_epoch)
                return a.targets[0] + (".sampler" if (dotted_name(sampler.func) or "").endswith("create_loader") else "")
        for a in ctx.facts.assigns:  # `train_loader, sampler = get_dataloader(config, ddp=ddp)` from another file
            if len(a.targets) > 1 and isinstance(a.value, cst.Call):
                for target in a.targets:
                    origins = ctx.dataflow.origins(cst.Name(target), a.function, a.context.order + 1) if target.isidentifier() else []
                    if any(o is not None and o.call is sampler for o in origins):
                        return target
        return None


def _origins_through_generators(flow, expr, fn, order) -> list:
    """Origins of an iterated name; for a parameter, also the loaders behind generators its callers
    pass: `run_epoch((Batch(b) for b in train_dataloader), model, ...)` iterates train_dataloader."""
    found = flow.origins(expr, fn, order)
    if isinstance(expr, cst.Name) and expr.value in fn.params:
        for site in flow.call_sites(fn):
            source = _generator_source(flow.argument_for(fn, expr.value, site))
            if source is not None:
                found = found + flow.origins(source, site.function, site.context.order)
    return found


def _handed_in_origins(ctx, flow, loop: LoopInfo) -> list:
    """The origins of the loader a loop iterates when it is a parameter of the loop's function."""
    it = loop.node.iter
    while isinstance(it, cst.Call) and it.args:  # `enumerate(tqdm(train_dl))`
        it = it.args[0].value
    return _param_origins(ctx, flow, loop.function, it.value) if isinstance(it, cst.Name) else []


def _param_origins(ctx, flow, fn, param: str) -> list:
    """What every caller of a top-level function passes for one of its parameters, in this file and
    the project's others: the origins of each argument, where it is given."""
    if param not in fn.params or fn.parent is None or not fn.parent.is_module:
        return []
    sites = [(flow, site) for site in flow.call_sites(fn)]
    if ctx.project is not None:
        sites += [(flow.flow_for(facts), site) for facts, site in ctx.project.callers_elsewhere(flow.facts, fn.name)]
    found = []
    for caller_flow, site in sites:
        arg = caller_flow.argument_for(fn, param, site)
        if arg is not None:
            found += [o for o in caller_flow.origins(arg, site.function, site.context.order) if o is not None]
    return found


def _generator_source(value: cst.BaseExpression | None) -> cst.BaseExpression | None:
    """What a one-`for` generator expression iterates: `train_dataloader` in `(Batch(b) for b in
    train_dataloader)`; iterating the generator iterates it, once."""
    if isinstance(value, cst.GeneratorExp) and value.for_in.inner_for_in is None:
        return value.for_in.iter
    return None


def _ddp_loader(call: cst.Call) -> bool:
    """A loader that shards and shuffles through its own DistributedSampler and takes `set_epoch`
    itself: DGL's `GraphDataLoader(..., use_ddp=True, shuffle=True)` (DGL's default is no shuffle).
    DGL's node `DataLoader(..., use_ddp=True)` reshuffles its indices every epoch by itself."""
    if (dotted_name(call.func) or "").rsplit(".", 1)[-1] != "GraphDataLoader":
        return False
    use_ddp, shuffle = keyword_arg(call, "use_ddp"), keyword_arg(call, "shuffle")
    return use_ddp is not None and not _is_false(use_ddp) and shuffle is not None and not _is_false(shuffle)


def _timm_distributed_loader(made) -> bool:
    """timm's `create_loader(dataset, ..., is_training=True, distributed=args.distributed)`: a training
    loader built with a DistributedSampler when distributed (its evaluation loaders use an ordered one)."""
    q = made.qualname() or ""
    if not (q.startswith("timm.data.") and q.endswith(".create_loader")):
        return False
    training, distributed = keyword_arg(made.call, "is_training"), keyword_arg(made.call, "distributed")
    return training is not None and not _is_false(training) and distributed is not None and not _is_false(distributed)


def _rebuilt_over_fresh_data(facts, sampler: cst.Call, epoch_loop: LoopInfo) -> bool:
    """sheeprl's SAC and DroQ: `DistributedSampler(idxes_to_sample, ...)` built on every pass (in the
    iteration loop, or in the `train()` it calls) over indexes of a batch just drawn from the replay
    buffer (`rb.sample_tensors(...)`): each pass shuffles new data, so the repeated order means nothing."""
    info = facts.call_info(sampler)
    if info is None or not sampler.args:
        return False
    fn = info.function
    if epoch_loop not in info.context.loops and fn is epoch_loop.function:
        return False  # (built once, ahead of the loop)
    needed, seen = set(names_in(sampler.args[0].value)), set()
    while needed - seen:
        seen |= needed
        for a in fn.assigns:
            if a.value is None or not set(a.targets) & needed or a.context.order > info.context.order:
                continue
            for node in calls_within(a.value):
                call = facts.call_info(node)
                if call is not None and _DRAW.match((call.method or call.dotted or "").rsplit(".", 1)[-1]):
                    return True
            needed |= names_in(a.value)
    return False


def _first_batch_only(loop: LoopInfo) -> bool:
    """A bare `break` at the top level of the loop's body: it reads at most one batch, whatever the order."""
    body = loop.node.body.body if isinstance(loop.node.body, cst.IndentedBlock) else ()
    return any(isinstance(stmt, cst.SimpleStatementLine) and any(isinstance(s, cst.Break) for s in stmt.body) for stmt in body)


def _turned_off(call: cst.Call, *keywords: str) -> bool:
    """The first of these keywords given is the literal False (`shuffle=False`)."""
    given = next((arg for arg in (keyword_arg(call, k) for k in keywords) if arg is not None), None)
    return given is not None and _is_false(given)


def _is_false(arg) -> bool:
    """`shuffle=False`: a keyword given the literal False."""
    return isinstance(arg.value, cst.Name) and arg.value.value == "False"


def _epoch_seeded_sampler(ctx, made) -> bool:
    """A project's own distributed sampler (DeiT's `RASampler`, BasicSR's `EnlargedSampler`): a class
    with a `set_epoch` method whose `__iter__` seeds its shuffle from `self.epoch`."""
    found = lookup_class(ctx.project, made.facts, dotted_name(made.call.func)) if dotted_name(made.call.func) else None
    if found is None:
        return False
    facts, cls = found
    iterate = cls.methods.get("__iter__")
    return (
        "set_epoch" in cls.methods and iterate is not None and iterate.node is not None
        and "self.epoch" in facts.module.code_for_node(iterate.node)
    )


def _evaluates(evaluation, fn) -> bool:
    """An evaluation function by its name, or by gradients switched off for all of it
    (`@torch.no_grad()`, YOLO's `@smart_inference_mode()`), or a loop that only runs models under
    no_grad and trains nothing (`make_embeddings`): its order does not matter.
    (`def train_validate(...)` that steps an optimizer, itself or through a helper, trains.)"""
    if any(w in (d or "") for d in fn.decorators for w in ("no_grad", "inference_mode")):
        return True
    if evaluation.has_training(fn) or evaluation.steps_anything(fn):
        return False
    return bool(_EVALUATION.search(fn.name)) or any(
        is_no_grad_name(w) for loop in fn.loops for c in loop.calls for w in c.context.withs
    )


def _iterated_params(fn) -> list[str]:
    """Parameters a function iterates in a for loop, directly, through a wrapper call, or through a
    local bound to one (`data_iter = tqdm(data_loader) if rank == 0 else data_loader`)."""
    params = set(fn.params)
    found = []
    for loop in fn.loops:
        it = loop.node.iter if isinstance(loop.node, cst.For) else None
        for n in _iterable_names(fn, it, 0):
            if n.value in params and n.value not in found:
                found.append(n.value)
    return found


def _iterated_attributes(fn) -> list[str]:
    """The `self.<attr>` a method iterates in a for loop, directly or through wrappers (`for data in
    tqdm(self.dataloader_train)`)."""
    found = []
    for loop in fn.loops:
        it = loop.node.iter if isinstance(loop.node, cst.For) else None
        while isinstance(it, cst.Call) and it.args:
            it = it.args[0].value
        name = dotted_name(it) if isinstance(it, cst.Attribute) else None
        if name and name.startswith("self.") and name.count(".") == 1 and name not in found:
            found.append(name)
    return found


def _iterable_names(fn, it, depth: int) -> list[cst.Name]:
    """The names an iterable expression iterates: itself, a wrapper's arguments (`enumerate(log_every(loader,
    ...))`), either side of a conditional, and what a local it names was bound to."""
    if isinstance(it, cst.IfExp) and depth < 4:
        return _iterable_names(fn, it.body, depth + 1) + _iterable_names(fn, it.orelse, depth + 1)
    if isinstance(it, cst.Call):
        names = [a.value for a in it.args if isinstance(a.value, cst.Name)]
        while isinstance(it, cst.Call) and it.args and isinstance(it.args[0].value, cst.Call):
            it = it.args[0].value  # enumerate(log_every(loader, ...))
            names += [a.value for a in it.args if isinstance(a.value, cst.Name)]
        return names
    if not isinstance(it, cst.Name):
        return []
    if it.value in fn.params or depth >= 4:
        return [it]
    bound = [a.value for a in fn.assigns if a.targets == (it.value,) and a.value is not None]
    return [it] + [n for value in bound for n in _iterable_names(fn, value, depth + 1)]
