"""Where a value comes from: a small, demand-driven dataflow over the file facts.

Rules ask "is this loss input the output of a softmax?" or "which class is
`model` an instance of?". The answer follows assignments (the latest one
before the use), returns of local functions, function parameters back to
every call site in the file, `self.x` attributes to their assignment in the
class, and a model call to the model class's `forward` (in another file of
the project too). Unknown stays unknown: a rule only fires on what it sees.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

import libcst as cst

from torchdoctor.project import lookup_class
from torchdoctor.facts import (
    AssignInfo, CallInfo, ClassInfo, FileFacts, FunctionInfo, annotation_of, calls_on_super, calls_within, default_of,
    dotted_name, exclusive_branches, names_in, partial_binding, partial_of,
)

# What a tensor-valued expression is, when we can tell.
SOFTMAX, LOG_SOFTMAX, SIGMOID, LOG_OF_SOFTMAX = "softmax", "log_softmax", "sigmoid", "log(softmax)"
_PROB_FUNCTIONS = {
    "torch.softmax": SOFTMAX,
    "torch.nn.functional.softmax": SOFTMAX,
    "torch.special.softmax": SOFTMAX,
    "torch.log_softmax": LOG_SOFTMAX,
    "torch.nn.functional.log_softmax": LOG_SOFTMAX,
    "torch.special.log_softmax": LOG_SOFTMAX,
    "torch.sigmoid": SIGMOID,
    "torch.nn.functional.sigmoid": SIGMOID,
    "torch.special.expit": SIGMOID,
}
_PROB_MODULES = {
    "torch.nn.Softmax": SOFTMAX,
    "torch.nn.LogSoftmax": LOG_SOFTMAX,
    "torch.nn.Sigmoid": SIGMOID,
}
_PROB_METHODS = {"softmax": SOFTMAX, "log_softmax": LOG_SOFTMAX, "sigmoid": SIGMOID}
# Methods that keep what a tensor is (its layout or device changes, not its meaning).
_TRANSPARENT_METHODS = {
    "to", "cuda", "cpu", "float", "half", "double", "bfloat16", "contiguous", "view", "reshape",
    "squeeze", "unsqueeze", "flatten", "permute", "transpose", "clone", "type_as", "view_as",
}
_ITERATION_WRAPPERS = {"enumerate", "tqdm", "tqdm.tqdm", "iter", "zip", "track", "progress_bar"}
# Calls that wrap a model and behave like it.
DDP_WRAPPERS = {
    "torch.nn.DataParallel",
    "torch.nn.parallel.DataParallel",
    "torch.nn.parallel.DistributedDataParallel",
    "torch.nn.parallel.distributed.DistributedDataParallel",
}
MODEL_WRAPPERS = {
    "torch.compile",
    "torch.nn.DataParallel",
    "torch.nn.parallel.DataParallel",
    "torch.nn.parallel.DistributedDataParallel",
    "torch.nn.parallel.distributed.DistributedDataParallel",
    "torch.distributed.fsdp.FullyShardedDataParallel",
    "torch.jit.script",
}
# Methods on a module that return the module itself.
# Calls on a module that hand back the same module: `model.to(device).eval()`
MODULE_CHAIN = frozenset({"to", "cuda", "cpu", "train", "eval", "float", "half", "double", "bfloat16", "requires_grad_", "share_memory"})


# A `self.` attribute named for a loss: the only ones worth following into base classes for TD002
_LOSS_ATTRIBUTE = re.compile(r"loss|criterion|crit|(^|_)ce(_|$)|nll|bce", re.I)
# ... and one named for the model, followed into base classes by `instance_of` (a trainer's `self.model`)
_MODEL_ATTRIBUTE = re.compile(r"^(model|net|network)\d*$")


@dataclass(frozen=True)
class Origin:
    """A call that made a value, where it ran (so its own arguments can be followed further)."""

    call: cst.Call
    function: FunctionInfo
    order: int
    facts: FileFacts  # the file it is in: a project function's return may make it elsewhere

    def qualname(self) -> str | None:
        return self.facts.qualify(self.call.func)


_AMBIGUOUS = object()  # a name assigned differently in different branches
_REGRESSION_TEST = re.compile(r"regress", re.I)
_CLASSIFICATION_TEST = re.compile(r"""['"](binary|classification)['"]""", re.I)
LOGIT_LOSSES = "<CrossEntropyLoss or BCEWithLogitsLoss>"  # a loss chosen by a flag among losses that take logits
CROSS_ENTROPY_AMONG = "<CrossEntropyLoss among others>"  # a flag picks CrossEntropyLoss or a loss of another kind
# torch losses that compare probabilities (or log-probabilities) rather than scores
_PROBABILITY_LOSSES = {f"torch.nn.{name}" for name in (
    "MSELoss", "L1Loss", "SmoothL1Loss", "HuberLoss", "BCELoss", "NLLLoss", "KLDivLoss", "PoissonNLLLoss",
    "GaussianNLLLoss", "CTCLoss", "CosineEmbeddingLoss", "TripletMarginLoss")}


def _rebinds(name: str, value) -> bool:
    """`model = model.cuda()`, `model = DDP(model)`: the same object, whichever branch ran."""
    while isinstance(value, cst.Call):
        if isinstance(value.func, cst.Attribute) and dotted_name(value.func.value) == name:
            return True
        if value.args and dotted_name(value.args[0].value) == name:
            return True
        value = value.func.value if isinstance(value.func, cst.Attribute) else None
    return False


_MODEL_FACTORY = re.compile(
    r"^(create|build|get|make|load|init|construct|define)_?(model|net|network|backbone|detector|classifier|"
    r"generator|discriminator|encoder|decoder|segmentor)$"
    r"|^(resnet|resnext|wide_resnet|vgg|densenet|inception_v3|efficientnet|mobilenet|vit|convnext|regnet|alexnet|"
    r"squeezenet|googlenet|shufflenet|mnasnet|swin|deeplabv3|fcn|fasterrcnn|maskrcnn|retinanet|ssd|r3d|r2plus1d)"
    r"(\d+[a-z]?)?(_[a-z0-9]+)*$",
    re.I,
)


def is_model_factory(name: str | None) -> bool:
    """`torchvision.models.resnet50(...)`, `timm.create_model(...)`, `build_model(cfg)`: a call that returns a model."""
    if not name:
        return False
    if name.startswith(("torchvision.models.", "timm.models.")) or name == "timm.create_model":
        return True
    return bool(_MODEL_FACTORY.match(name.rsplit(".", 1)[-1]))


def _is_timm_cross_entropy(qualname: str | None) -> bool:
    """timm's SoftTargetCrossEntropy / LabelSmoothingCrossEntropy: log_softmax inside, logits in."""
    return bool(qualname) and qualname.startswith("timm.") and qualname.rsplit(".", 1)[-1] in (
        "SoftTargetCrossEntropy", "LabelSmoothingCrossEntropy"
    )


def _iterated_argument(call: cst.Call) -> cst.BaseExpression | None:
    """What an iteration wrapper walks: its first positional argument, or `iterable=`."""
    for arg in call.args:
        if arg.keyword is None and not arg.star:
            return arg.value
        if arg.keyword is not None and arg.keyword.value == "iterable":
            return arg.value
    return None


def _is_iteration_wrapper(name: str | None) -> bool:
    """`enumerate(loader)`, `tqdm(loader)`, a project's `TQDM(pbar)`: iterating it iterates its first argument."""
    return name is not None and (name in _ITERATION_WRAPPERS or name.rsplit(".", 1)[-1].lower() in _ITERATION_WRAPPERS)


_LOADING_CONSTRUCTORS = frozenset({"from_pretrained", "load_from_checkpoint", "from_config"})
_LOGIT_TAKERS = {
    "torch.nn.functional.log_softmax", "torch.log_softmax", "torch.nn.functional.cross_entropy",
    "torch.nn.LogSoftmax", "torch.nn.CrossEntropyLoss",
}


def is_none(node) -> bool:
    return isinstance(node, cst.Name) and node.value == "None"


def _misses_required_arguments(fn: FunctionInfo, site: CallInfo) -> bool:
    """The call passes fewer arguments than fn requires (no star arguments on either side): it raises a
    TypeError before fn runs, so what it passes says nothing of what fn computes with."""
    if fn.node is None or any(a.star for a in site.node.args) or fn.node.params.star_arg not in (None, cst.MaybeSentinel.DEFAULT):
        return False
    if _dispatched(site, fn.name) is not None:
        return False
    params = [p for p in fn.node.params.params if p.name.value not in ("self", "cls")]
    required = [p.name.value for p in params if p.default is None]
    positional = sum(1 for a in site.node.args if a.keyword is None)
    keywords = {a.keyword.value for a in site.node.args if a.keyword is not None}
    names = [p.name.value for p in params]
    bound = set(names[:positional]) | keywords
    return any(r not in bound for r in required)


# A task handed to a pool runs once, like a call. (A `Thread`/`Process` target is a long-lived worker: an actor
# loop or an inference server, such as torchbeast's `inference` thread that samples actions in training mode
# on purpose; its arguments say little about a pass, so it is left out.)
_DISPATCHERS = frozenset({"apply_async", "apply", "submit"})


def _dispatched(call: CallInfo, name: str) -> list | None:
    """The positional arguments a pool hands the function `name`: `pool.apply_async(f, args=(a, b))`,
    `executor.submit(f, a, b)`; None when `call` does not dispatch it."""
    callee = (call.method or call.dotted or "").rsplit(".", 1)[-1]
    if callee not in _DISPATCHERS:
        return None
    target = next((a.value for a in call.node.args if a.keyword is not None and a.keyword.value == "func"), None)
    positional = [a.value for a in call.node.args if a.keyword is None and not a.star]
    if target is None and positional:
        target, positional = positional[0], positional[1:]
    if not (isinstance(target, cst.Name) and target.value == name):
        return None
    packed = next((a.value for a in call.node.args if a.keyword is not None and a.keyword.value == "args"), None)
    if packed is None and callee in ("apply_async", "apply") and positional:
        packed = positional[0]
    if packed is not None:
        return [e.value for e in packed.elements] if isinstance(packed, (cst.Tuple, cst.List)) else None
    return positional if callee == "submit" else []


def _agreed(origins) -> Origin | None:
    """The one origin every path agrees on; None if any path is unknown or they differ."""
    chosen = None
    for o in origins:
        if o is None or (chosen is not None and o.call is not chosen.call):
            return None
        chosen = o
    return chosen


@dataclass(frozen=True)
class Instance:
    """`model` is an instance of this class (defined in `facts`), or an `nn.Sequential(...)` call."""

    facts: FileFacts
    cls: ClassInfo | None = None
    sequential: cst.Call | None = None
    qualname: str | None = None  # for library classes: "torch.nn.CrossEntropyLoss"
    factory: str | None = None  # a library's model factory: "torchvision.models.resnet50", "create_model"
    declared: bool = False  # known only from an annotation: the value may be any subclass


class DataFlow:
    def __init__(self, facts: FileFacts, project=None, flows: dict | None = None) -> None:
        self.facts = facts
        self.project = project
        self._flows = flows if flows is not None else {}  # one DataFlow per file, shared
        self._flows[id(facts)] = self
        self._origins_memo: dict[tuple[int, int, int], tuple] = {}  # key -> (expression, origins)
        self._param_instances: dict[tuple[int, str], tuple] = {}  # (function, parameter) -> (depth, instance)

    def flow_for(self, facts: FileFacts) -> "DataFlow":
        """The dataflow of another file of the project (this one for this file's facts), made once per lint."""
        return self._flows.get(id(facts)) or DataFlow(facts, self.project, self._flows)

    # -- assignments -------------------------------------------------------------
    def reaching_assignment(
        self, name: str, fn: FunctionInfo, before: int, skipped: Callable[[AssignInfo], bool] | None = None
    ) -> AssignInfo | None:
        """The latest assignment to `name` in `fn` that precedes order `before` (and that `skipped`,
        when given, does not rule out).

        `x = None` is passed over when another assignment exists: it is almost always the other
        branch of `if distributed: sampler = DistributedSampler(...) else: sampler = None`.
        """
        use = self.facts.branches_at.get(before, ())
        candidates = [
            a for a in fn.assigns
            if a.augmented is None and a.context.order < before and name in a.targets
            and not exclusive_branches(a.context.branches, use) and not (skipped is not None and skipped(a))
        ]
        real = [a for a in candidates if not is_none(a.value)] or candidates
        if not real:
            return None
        best = max(real, key=lambda a: a.context.order)
        # (the use sits in every branch the latest one is in: a script's `if __name__ == "__main__":`
        # sections, each `loss_func = ...` then `loss_func(...)`)
        inside = len(best.targets) == 1 and set(best.context.branches) <= set(use)
        if best.context.conditions and len(real) > 1 and not _rebinds(name, best.value) and not inside:
            # `if ctc: criterion = CTCLoss() else: criterion = CrossEntropyLoss()`: which one holds
            # depends on a branch; unless every candidate is the same code, nothing is known.
            code = {self.facts.module.code_for_node(a.value) for a in real if a.value is not None}
            if len(code) > 1:
                return _AMBIGUOUS
        return best

    def reaching_candidates(self, name: str, fn: FunctionInfo, before: int) -> list[AssignInfo]:
        """Every assignment that may hold `name` at `before`: the one that reaches it, or, when the
        latest depends on a branch, each branch's."""
        a = self.reaching_assignment(name, fn, before)
        if a is _AMBIGUOUS:
            use = self.facts.branches_at.get(before, ())
            return [
                c for c in fn.assigns
                if c.augmented is None and c.context.order < before and c.targets == (name,) and not is_none(c.value)
                and not exclusive_branches(c.context.branches, use)
            ]
        if a is not None and len(a.targets) == 1 and a.value is not None:
            return [a]
        return []

    def value_of(self, name: str, fn: FunctionInfo, before: int, depth: int = 0):
        """(expression, function it lives in, order) that `name` holds at `before`, following simple aliases."""
        if depth > 6:
            return None
        a = self.reaching_assignment(name, fn, before)
        if a is _AMBIGUOUS:
            return None
        if a is not None:
            if len(a.targets) != 1 or a.value is None:
                return None
            return a.value, fn, a.context.order
        if name.startswith("self.") and fn.cls is not None:
            return self._attribute_value(fn.cls, name)
        if name in fn.params:
            return None
        enclosing = fn.parent
        while enclosing is not None and not enclosing.is_module and "." not in name:
            # a closure: `def train(epoch): for x in trainloader: ...` nested in main()
            a = self.reaching_assignment(name, enclosing, 1 << 62)
            if a is not None and a is not _AMBIGUOUS and len(a.targets) == 1 and a.value is not None:
                return a.value, enclosing, a.context.order
            if name in enclosing.params:
                return None
            enclosing = enclosing.parent
        if not fn.is_module:  # a global assigned at module level
            module_fn = self.facts.module_function
            a = self.reaching_assignment(name, module_fn, 1 << 62)
            if a is not None and a is not _AMBIGUOUS and len(a.targets) == 1 and a.value is not None:
                if not is_none(a.value):
                    return a.value, module_fn, a.context.order
                return self._set_by_loader(name)  # `_model = None`, then `def load_model(): global _model; ...`
        return None

    def _set_by_loader(self, name: str):
        """The value a function that declares `global name` gives it, when only one function does."""
        setters = [
            (a.value, f, a.context.order)
            for f in self.facts.global_setters(name)
            for a in f.assigns
            if a.targets == (name,) and a.augmented is None and a.value is not None and not is_none(a.value)
        ]
        return setters[0] if setters and len({id(f) for _, f, _ in setters}) == 1 else None

    def _attribute_value(self, cls: ClassInfo, name: str):
        candidates = []
        for method in cls.methods.values():
            for a in method.assigns:
                if a.augmented is None and a.targets == (name,) and a.value is not None:
                    candidates.append((method.name != "__init__", a.context.order, a, method))
        if not candidates:
            return None
        # (`self.model: Optional[MLP] = None` in __init__, built in `fit()`: the placeholder holds no value)
        candidates = [c for c in candidates if not is_none(c[2].value)] or candidates
        _, _, a, method = min(candidates, key=lambda c: (c[0], c[1]))
        return a.value, method, a.context.order

    def _inherited_attribute(self, cls: ClassInfo, name: str, chain: list):
        """(chain, value, method, order) of `self.<attr> = ...` in a base class (this file's, or with a
        project another file's) when the class itself never assigns it; `chain` lists (flow, class)
        from the class that reads the attribute up to the one that assigns it."""
        for written in cls.written_bases:
            base = lookup_class(self.project, self.facts, written)
            if base is None or any(base[1] is c for _, c in chain) or len(chain) > 4:
                continue
            flow = self.flow_for(base[0])
            longer = chain + [(flow, base[1])]
            held = flow._attribute_value(base[1], name)
            if held is not None:
                return longer, held[0], held[1], held[2]
            deeper = flow._inherited_attribute(base[1], name, longer)
            if deeper is not None:
                return deeper
        return None

    def _origins_down_the_chain(self, chain: list, value, method: FunctionInfo, at: int, depth: int) -> list:
        """Origins of what a base constructor stored, for instances of the class at the head of `chain`:
        the subclass below it hands the value on through `super().__init__(...)` (pachyderm's
        `PytorchDDPTrainer` passing `train_data` to `BaseTrainer`), or, keeping the base's constructor,
        is built with it. Only the reading class's own line of descent is followed: a sibling subclass
        may override the method that reads the attribute."""
        flow, base = chain[-1]
        param = value.value if isinstance(value, cst.Name) else None
        if len(chain) == 1 or method.name != "__init__" or param not in method.params or param in method.assigned_names():
            return flow.origins(value, method, at, depth + 1)
        sub_flow, sub = chain[-2]
        sub_init = sub.methods.get("__init__")
        if sub_init is None:  # built with the base's constructor: its constructions pass the value
            project = self.project
            sites = [(sub_flow, c) for c in sub_flow.facts.calls if c.dotted == sub.name] + (
                [(sub_flow.flow_for(f), c) for f, c in project.callers_elsewhere(sub_flow.facts, sub.name)] if project else []
            )
            found = []
            for site_flow, site in sites:
                arg = site_flow.argument_for(method, param, site)
                found.extend(site_flow.origins(arg, site.function, site.context.order, depth + 1) if arg is not None else [None])
            return found or [None]
        handed = sub_flow._handed_to_base(sub_init, base, method, param)
        if handed is None:
            return [None]
        arg, site = handed
        return sub_flow._origins_down_the_chain(chain[:-1], arg, sub_init, site.context.order, depth + 1)

    def _handed_to_base(self, sub_init: FunctionInfo, base: ClassInfo, base_init: FunctionInfo, param: str):
        """(argument, call) for what a subclass's `__init__` passes as `param` of its direct base's
        constructor, through its one `super().__init__(...)`; None without exactly one such call, or when
        the call passes nothing for `param`."""
        calls = [c for c in sub_init.calls if _super_init_of(c, base.name)]
        arg = self.argument_for(base_init, param, calls[0]) if len(calls) == 1 else None
        return (arg, calls[0]) if arg is not None else None

    def param_stored_by_base(self, cls: ClassInfo, attr: str) -> str | None:
        """The parameter of the class's own `__init__` that it hands to its direct base's constructor,
        which stores it as `attr` (`super().__init__(model, device)`, the base doing `self.model = model`)."""
        init = cls.methods.get("__init__")
        inherited = self._inherited_attribute(cls, attr, [(self, cls)]) if init is not None else None
        if inherited is None or len(inherited[0]) != 2:
            return None
        (_, base), value, method = inherited[0][-1], inherited[1], inherited[2]
        if method.name != "__init__" or not isinstance(value, cst.Name) or value.value not in method.params:
            return None
        handed = self._handed_to_base(init, base, method, value.value)
        arg = handed[0] if handed is not None else None
        return arg.value if isinstance(arg, cst.Name) and arg.value in init.params else None

    def call_sites(self, fn: FunctionInfo) -> list[CallInfo]:
        """Calls in this file that run `fn`; for `__init__`, the constructions of its class."""
        if fn.name == "__init__" and fn.cls is not None:
            return [c for c in self.facts.calls if c.dotted == fn.cls.name]
        found = [c for c in self.facts.calls if c.method == fn.name and self.facts.resolve_function(c) is fn]
        if not found:
            # `self.evaluate_mt(...)` in the base class's `run_all_evals`, which only the subclass defines
            found = [c for _, base, c in self.calls_from_bases(fn) if fn.name not in base.methods]
        if not found and fn.cls is None:
            # `pool.apply_async(evaluate_trans, args=(name, copy.deepcopy(model), g))`: run by a worker
            found = [c for c in self.facts.calls if _dispatched(c, fn.name) is not None]
        if not found and fn.cls is None:
            # `eval_fn = partial(evaluate, model=model)`, then `eval_fn()` after each epoch
            found = [c for c in self.facts.calls if partial_of(partial_binding(c)) == fn.name
                     and self.facts.resolve_callee(cst.Name(fn.name), c.function, c.context.order) is fn]
        return found

    def calls_from_bases(self, fn: FunctionInfo, other_files: bool = False) -> list[tuple["DataFlow", ClassInfo, CallInfo]]:
        """(flow, base, call) for the `self.<method>(...)` calls in the methods of the base classes of fn's
        class, direct or further up, which run fn on an instance of that class: bases in this file, or
        with `other_files` wherever the project defines them."""
        if fn.cls is None:
            return []
        found = self._calls_in_ancestors(fn.cls, f"self.{fn.name}", other_files, {id(fn.cls)})
        if not found and not fn.cls.written_bases:
            # a mixin: `class ConvLSTMFramework(SeqClsMixin, Framework)`, whose other base's `predict()` calls
            # the mixin's `self.predict_batch(...)` under no_grad
            for sub in self.facts.all_classes:
                if fn.cls.name in sub.written_bases and fn.name not in sub.methods:
                    found += [f for f in self._calls_in_ancestors(sub, f"self.{fn.name}", other_files, {id(sub), id(fn.cls)})
                              if fn.name not in f[1].methods]
        return found

    def _calls_in_ancestors(self, cls: ClassInfo, dotted: str, other_files: bool, seen: set) -> list:
        """Dassl's `CDAC(TrainerXU)`, `TrainerXU(SimpleTrainer)`: the generic `test()` that calls
        `self.model_inference(...)` may sit two bases up."""
        found = []
        for written in cls.written_bases:
            if other_files:
                base = lookup_class(self.project, self.facts, written)
            else:
                base = (self.facts, self.facts.classes[written]) if written in self.facts.classes else None
            if base is None or id(base[1]) in seen or len(seen) > 4:
                continue
            seen.add(id(base[1]))
            flow = self.flow_for(base[0])
            found += [(flow, base[1], c) for m in base[1].methods.values() for c in m.calls if c.dotted == dotted]
            found += flow._calls_in_ancestors(base[1], dotted, other_files, seen)
        return found

    def instance_call_sites(self, fn: FunctionInfo) -> list[CallInfo]:
        """Calls of a method on an instance of its class, in this file: `embedding.extract_feats(vis)` after
        `embedding = Embedding(root, model)` (for following `self.model` out to the caller)."""
        if fn.cls is None:
            return []
        found = []
        for c in self.facts.calls:
            receiver = c.node.func.value if c.method == fn.name and isinstance(c.node.func, cst.Attribute) else None
            # (or held by another object: kornia's `self.model = _DissolvingWraper_HF(pipe)` ... `self.model.init_prompt(p)`)
            if isinstance(receiver, (cst.Name, cst.Attribute)) and dotted_name(receiver) not in (None, "self", "cls"):
                inst = self.instance_of(receiver, c.function, c.context.order)
                # (or of a subclass that inherits the method: `ColumnCounter(CountingModel)`)
                if inst is not None and inst.cls is not None and (
                    inst.cls is fn.cls or inst.facts is self.facts and self.facts.find_method(inst.cls, fn.name) is fn
                ):
                    found.append(c)
        return found

    def argument_for(self, fn: FunctionInfo, param: str, call: CallInfo) -> cst.BaseExpression | None:
        params = [p for p in fn.params if p not in ("self", "cls")]
        handed = _dispatched(call, fn.name)
        if handed is not None:  # (the worker's arguments, not the pool's)
            return handed[params.index(param)] if param in params and params.index(param) < len(handed) else None
        args = list(call.node.args)
        bound = partial_binding(call)
        if bound is not None:  # `eval_function = partial(evaluate, model=model)` ... `eval_function()`
            args = [a for a in bound.args[1:] if a.keyword is None and not a.star] + args + [
                a for a in bound.args[1:] if a.keyword is not None]
        for arg in args:
            if arg.keyword is not None and arg.keyword.value == param:
                return arg.value
        positional = [a.value for a in args if a.keyword is None and not a.star]
        if param in params and params.index(param) < len(positional):
            return positional[params.index(param)]
        for arg in call.node.args:  # `eval_model(split="val", **eval_kwargs)` with `eval_kwargs = {"trainer": trainer}`
            if arg.star == "**" and isinstance(arg.value, cst.Name):
                found = self._dict_entry(arg.value.value, param, call)
                if found is not None:
                    return found
        return None

    def guard_rules_out(self, call: CallInfo, caller: "DataFlow", site: CallInfo) -> bool:
        """The literal argument `site` passes makes a test around `call` false: PatchTST's
        `all_batches('train')` never reaches `elif type_ == 'predict': self.batch_predict()`.
        `self` is the flow of call's file, `caller` the flow of the site's file."""
        return self.branches_ruled_out(call.context.branches, call.function, caller, site)

    def branches_ruled_out(self, branches, fn: FunctionInfo, caller: "DataFlow", site: CallInfo) -> bool:
        """Some `if` around a statement of `fn` tests a parameter whose value at `site` sends control
        the other way: `compare(a, b, train=True)` never runs `if not train: out = torch.sigmoid(out)`.
        (A parameter the function assigns again is not what the caller passed.)"""
        assigned = None
        for if_id, branch in branches:
            test = self.facts.if_tests.get(if_id)
            tested = _parameter_in_test(test, fn.params)
            if tested is None:
                continue
            if assigned is None:
                assigned = fn.assigned_names()
            if tested in assigned:
                continue
            outcome = _test_outcome(test, tested, caller.literal_argument(fn, tested, site))
            if outcome is not None and outcome != (branch == 0):
                return True
        return False

    def literal_argument(self, fn: FunctionInfo, param: str, site: CallInfo):
        """The literal `site` gives `param`: passed (or held by the name passed, `args = None`), or the
        parameter's default when the call passes nothing for it and spreads no `*args`/`**kwargs`;
        _UNKNOWN otherwise."""
        given = self.argument_for(fn, param, site)
        if isinstance(given, cst.Name) and given.value not in ("None", "True", "False"):
            held = self.value_of(given.value, site.function, site.context.order)  # `args = None` ... `Net(args)`
            given = held[0] if held is not None else given
        if given is not None:
            return _literal(given)
        if any(a.star for a in site.node.args):
            return _UNKNOWN
        default = default_of(fn, param)
        return _literal(default) if default is not None else _UNKNOWN

    def unpacked_keyword(self, call: CallInfo, key: str) -> cst.BaseExpression | None:
        """The value a call receives as `key` through `**kwargs` of a dict it can read
        (`DataLoader(dataset, **train_kwargs)` with `train_kwargs = {"sampler": sampler1, ...}`)."""
        for arg in call.node.args:
            if arg.star == "**" and isinstance(arg.value, cst.Name):
                found = self._dict_entry(arg.value.value, key, call)
                if found is not None:
                    return found
        return None

    def _dict_entry(self, name: str, key: str, call: CallInfo) -> cst.BaseExpression | None:
        held = self.value_of(name, call.function, call.context.order)
        value = held[0] if held is not None else None
        if isinstance(value, cst.Dict):
            for element in value.elements:
                if isinstance(element, cst.DictElement) and isinstance(element.key, cst.SimpleString):
                    if element.key.evaluated_value == key:
                        return element.value
        elif isinstance(value, cst.Call) and dotted_name(value.func) == "dict":
            for arg in value.args:
                if arg.keyword is not None and arg.keyword.value == key:
                    return arg.value
        return None

    # -- what a tensor is ----------------------------------------------------------
    def kind(self, expr: cst.BaseExpression, fn: FunctionInfo, order: int, depth: int = 0) -> str | None:
        """SOFTMAX / LOG_SOFTMAX / SIGMOID / LOG_OF_SOFTMAX when `expr` is known to be one."""
        if depth > 8:
            return None
        if isinstance(expr, (cst.Name, cst.Attribute)):
            name = dotted_name(expr)
            if name is None:
                return None
            held = self.value_of(name, fn, order)
            if held is not None:
                return self.kind(held[0], held[1], held[2], depth + 1)
            if name in fn.params:
                return self._kind_from_callers(fn, name, depth)
            return None
        if not isinstance(expr, cst.Call):
            return None
        q = self.facts.qualify(expr.func)
        if q in _PROB_FUNCTIONS:
            return _PROB_FUNCTIONS[q]
        if q in ("torch.log", "torch.Tensor.log") and expr.args:
            if self.kind(expr.args[0].value, fn, order, depth + 1) == SOFTMAX:
                return LOG_OF_SOFTMAX
            return None
        if isinstance(expr.func, cst.Attribute):
            method = expr.func.attr.value
            if method in _PROB_METHODS and q is None:
                return _PROB_METHODS[method]
            if method == "log" and q is None:
                return LOG_OF_SOFTMAX if self.kind(expr.func.value, fn, order, depth + 1) == SOFTMAX else None
            if method in _TRANSPARENT_METHODS and q is None:
                return self.kind(expr.func.value, fn, order, depth + 1)
        local = self.facts.resolve_callee(expr.func, fn)
        if local is not None:
            return self.returns_kind(local, depth + 1, self.facts.call_info(expr))
        instance = self.instance_of(expr.func, fn, order, depth + 1)
        if instance is not None:
            return self.instance_output_kind(instance, depth + 1, self.facts.call_info(expr))
        return None

    def kind_on_every_path(self, expr: cst.BaseExpression, fn: FunctionInfo, order: int) -> str | None:
        """`kind`, when every assignment that may reach `expr` agrees: not `if args.loss == "mse": out =
        softmax(out)`, whose other path keeps the logits."""
        name = dotted_name(expr) if isinstance(expr, (cst.Name, cst.Attribute)) else None
        candidates = self.reaching_candidates(name, fn, order) if name is not None else []
        use = self.facts.branches_at.get(order, ())
        if len(candidates) == 1 and candidates[0].context.conditions and not set(candidates[0].context.branches) <= set(use):
            return None  # (`out = softmax(out)` under a test the use is not under: the other path skips it)
        if len(candidates) < 2:
            return self.kind(expr, fn, order)
        kinds = {self.kind(a.value, fn, a.context.order) for a in candidates}
        return kinds.pop() if len(kinds) == 1 else None

    def _kind_from_callers(self, fn: FunctionInfo, param: str, depth: int) -> str | None:
        kinds = set()
        sites = self.call_sites(fn)
        for site in sites:
            arg = self.argument_for(fn, param, site)
            if arg is None:
                return None
            kinds.add(self.kind(arg, site.function, site.context.order, depth + 1))
        return kinds.pop() if len(kinds) == 1 else None

    def returns_kind(self, fn: FunctionInfo, depth: int = 0, site: CallInfo | None = None) -> str | None:
        """The kind every `return` of `fn` has, if they all agree. Called from `site`, the branches its
        literal arguments rule out are left out: `self.compare(a, b, train=True)` skips the
        `if not train: out = torch.sigmoid(out)` before `return out`."""
        def ruled_out(branches) -> bool:
            return site is not None and self.branches_ruled_out(branches, fn, self, site)

        kinds = set()
        for ret, order in fn.returns:
            if ret.value is None:
                return None
            if ruled_out(self.facts.branches_at.get(order, ())):
                continue
            if isinstance(ret.value, cst.Name) and site is not None:
                held = self.reaching_assignment(ret.value.value, fn, order, lambda a: ruled_out(a.context.branches))
                if held is not None and held is not _AMBIGUOUS and len(held.targets) == 1 and held.value is not None:
                    kinds.add(self.kind(held.value, fn, held.context.order, depth + 1))
                    continue
            kinds.add(self.kind(ret.value, fn, order, depth + 1))
        return kinds.pop() if len(kinds) == 1 else None

    def loss_called(self, call: CallInfo) -> str | None:
        """The torch loss a call computes, qualified: `F.cross_entropy(...)` is itself;
        `criterion(...)` and `nn.CrossEntropyLoss()(...)` are the class the object was built from.
        A constructor call (`nn.CrossEntropyLoss(weight)`) computes nothing."""
        if call.qualname is not None:
            return call.qualname if call.qualname.startswith("torch.nn.functional.") else None
        choices = self._attribute_choices(call.node.func, call.function)
        inst = self.instance_of(call.node.func, call.function, call.context.order) if choices is None else None
        if inst is None and choices is None:
            inst = self._inherited_instance(call.node.func, call.function)
        if inst is not None:
            if inst.qualname is None and inst.cls is not None and _forward_hands_input_to_cross_entropy(inst.facts, inst.cls):
                return "torch.nn.CrossEntropyLoss"  # a project loss whose forward is cross-entropy on its input
            return _public_torch_name(inst.qualname) or self._torch_loss_base(inst)
        # `criterion = SoftTargetCrossEntropy() if mixup else LabelSmoothingCrossEntropy(0.1) if smooth
        # else nn.CrossEntropyLoss()`: whichever branch ran, a loss that takes logits.
        if choices is not None:
            choices = self._chosen_by_the_same_tests(choices, call) or choices
            built: set[str] | None = set()
            for value, method, order in choices:
                more = {"torch.nn.CrossEntropyLoss"} if self._logit_function(value, method) else self._constructors(value, method, order, 1)
                built = built | more if built is not None and more is not None else None
        else:
            built = self._constructors(call.node.func, call.function, call.context.order, 0)
        built = {_public_torch_name(q) for q in built} if built is not None else None
        if built and len(built) > 1:
            # `AngleLoss() if opt.angle else nn.CrossEntropyLoss()`, where AngleLoss unpacks its input (`cos_theta,
            # phi_theta = input`): a tensor reaching the loss goes to the other choices
            built = {q for q in built if not self._unpacks_its_input(q)} or built
        cross_entropy = {q for q in built or () if q == "torch.nn.CrossEntropyLoss" or _is_timm_cross_entropy(q) or self._cross_entropy_on_input(q)}
        if built and cross_entropy == built:
            return "torch.nn.CrossEntropyLoss"
        if built and cross_entropy and built - cross_entropy == {"torch.nn.BCEWithLogitsLoss"}:
            return LOGIT_LOSSES  # `BCEWithLogitsLoss() if mixup else CrossEntropyLoss()`: logits either way
        if built == {"torch.nn.BCEWithLogitsLoss"}:
            return "torch.nn.BCEWithLogitsLoss"  # (the only loss that can reach here, by the tests it sits under)
        if built and cross_entropy and not (built - cross_entropy) & _PROBABILITY_LOSSES:
            # CLAM's `SmoothTop1SVM(...) if args.bag_loss == "svm" else nn.CrossEntropyLoss()`, or a shared
            # fine-tuning loop handed `MultiLabelSoftMarginLoss()` by one script and `CrossEntropyLoss()` by
            # another: the other choices take scores too (beside a loss on probabilities, `MSELoss()` for a
            # Brier score, the softmax may be that choice's, and the choice is left open)
            return CROSS_ENTROPY_AMONG
        return None

    def _inherited_instance(self, expr, fn: FunctionInfo, named=_LOSS_ATTRIBUTE, depth: int = 0) -> Instance | None:
        """`self.loss(y_hat, y)` in a subclass whose base class's `__init__` built `self.loss =
        nn.CrossEntropyLoss()` (the continual-learning networks of EEG-classification-CL); `named` says which
        attributes are worth the lookup."""
        name = dotted_name(expr)
        if name is None or not name.startswith("self.") or name.count(".") != 1 or fn.cls is None:
            return None
        if not named.search(name[5:]):
            return None  # (only a loss or a model matters: `self.conv1(x)` of a detectron2 head is not looked up the bases)
        if self._attribute_value(fn.cls, name) is not None:
            return None  # the class sets it itself: instance_of has answered
        inherited = self._inherited_attribute(fn.cls, name, [])
        if inherited is None:
            return None
        chain, value, method, at = inherited
        return chain[-1][0].instance_of(value, method, at, depth)

    def _logit_function(self, value, fn: FunctionInfo, depth: int = 0) -> bool:
        """A plain function (or a lambda around one) whose first argument goes through log_softmax or
        cross-entropy: OFA's `cross_entropy_loss_with_soft_target(pred, soft_target)`, chosen beside
        `nn.CrossEntropyLoss()` by a flag, takes logits too."""
        if depth > 3:
            return False
        if isinstance(value, cst.Lambda):
            params = [p.name.value for p in value.params.params]
            body = value.body
            return (
                isinstance(body, cst.Call) and bool(params) and bool(body.args)
                and dotted_name(body.args[0].value) == params[0] and self._logit_function(body.func, fn, depth + 1)
            )
        name = dotted_name(value)
        found = None
        if name and "." not in name and name in self.facts.toplevel_functions:
            found = (self.facts, self.facts.toplevel_functions[name])
        elif name and self.project is not None:
            found = self.project.function_named(self.facts, name)
        if found is None or not found[1].params:
            return False
        facts, helper = found
        flow, first = self.flow_for(facts), helper.params[0]
        for c in helper.calls:
            if not c.node.args or dotted_name(c.node.args[0].value) != first:
                continue
            if c.qualname in _LOGIT_TAKERS:
                return True
            inst = flow.instance_of(c.node.func, helper, c.context.order)
            if inst is not None and inst.qualname in _LOGIT_TAKERS:
                return True
            if c.qualname is None and flow._logit_function(c.node.func, helper, depth + 1):
                return True
        return False

    @staticmethod
    def _torch_loss_base(inst: Instance) -> str | None:
        """`class RobustCrossEntropyLoss(nn.CrossEntropyLoss)` whose forward hands its input on unchanged
        (`return super().forward(input, target.long())`), or keeps torch's: the torch loss it computes."""
        cls = inst.cls
        base = next((b for b in cls.bases if b.startswith("torch.nn.") and b.endswith("Loss")), None) if cls else None
        if base is None:
            return None
        forward = cls.methods.get("forward")
        if forward is None:
            return base
        first = forward.params[1] if len(forward.params) > 1 else None
        hands_on = any(
            c.method == "forward" and calls_on_super(c.node) and c.node.args
            and _reshaped_from(c.node.args[0].value, first)  # (`super().forward(pred.transpose(1, 2), label)`)
            for c in forward.calls
        )
        return base if hands_on else None

    def _attribute_choices(self, expr, fn: FunctionInfo) -> list | None:
        """Every value an attribute is given, when it is given more than one: `self.loss_fn =
        nn.CrossEntropyLoss()` if a flag is off, else `label_smoothed_nll_loss`. (Re-assignments of
        the attribute from itself, `self.criterion = self.criterion.cuda()`, are the same choice.)"""
        name = dotted_name(expr)
        if name is None or not name.startswith("self.") or fn.cls is None:
            return None
        choices = [
            (a.value, method, a.context.order)
            for method in fn.cls.methods.values()
            for a in method.assigns
            if a.augmented is None and a.targets == (name,) and a.value is not None and name not in names_in(a.value)
        ]
        return choices if len(choices) > 1 else None

    def _chosen_by_the_same_tests(self, choices: list, call: CallInfo) -> list:
        """The choices an attribute can hold where `call` runs, when both sit under tests of the object's
        own settings: RecBole's `if self.loss_type == "BPR": self.loss_fct = BPRLoss() elif ...: self.loss_fct
        = nn.CrossEntropyLoss()`, then `if self.loss_type == "BPR": ... else: self.loss_fct(logits, pos_items)`
        reaches only the cross-entropy. (A test on anything else than `self.` settings decides nothing here.)"""
        taken = self._settings_taken(call.context.branches)
        if not taken:
            return choices
        return [
            (value, method, order) for value, method, order in choices
            if _agree(taken, self._settings_taken(self.facts.branches_at.get(order, ()), method))
        ]

    def _assigned_under_the_same_tests(self, candidates: list, order: int) -> list:
        """The assignments that can reach a use at `order` given the `if` tests both sit under: a loss chosen
        by `if task == 'B': loss_func = nn.BCEWithLogitsLoss() elif task == 'M': loss_func = nn.CrossEntropyLoss()`
        and called under `elif task == 'M':` is the cross-entropy. Only tests of plain names and constants
        are compared (a test that calls something may answer differently the second time)."""
        use = self._plain_tests_taken(self.facts.branches_at.get(order, ()))
        if not use:
            return candidates
        kept = [a for a in candidates if _agree(use, self._plain_tests_taken(self.facts.branches_at.get(a.context.order, ())))]
        return kept or candidates

    def _plain_tests_taken(self, branches) -> dict[str, bool]:
        return self._tests_taken(branches, lambda test: not calls_within(test))

    def _tests_taken(self, branches, accept, rewrite: cst.CSTTransformer | None = None) -> dict[str, bool]:
        """code of each accepted `if` test among `branches` (rewritten first, if asked) -> whether its body
        (True) or its else branch was taken."""
        out = {}
        for if_id, branch in branches:
            test = self.facts.if_tests.get(if_id)
            if test is not None and rewrite is not None:
                test = test.visit(rewrite)
            if test is not None and accept(test):
                out[cst.Module([]).code_for_node(test)] = branch == 0
        return out

    def _settings_taken(self, branches, method: FunctionInfo | None = None) -> dict[str, bool]:
        """code of an `if` test on `self.` settings -> whether its body (True) or else branch was taken.
        In `method`, a parameter it stores as a setting reads as that setting: MolCLR's `__init__` tests
        `config['dataset']['task']` after `self.config = config`, `_step` tests `self.config[...]`."""
        stored = {
            a.value.value: a.targets[0] for a in (method.assigns if method is not None else ())
            if isinstance(a.value, cst.Name) and a.value.value in method.params and len(a.targets) == 1
            and a.targets[0].startswith("self.") and a.targets[0].count(".") == 1
        }
        return self._tests_taken(branches, _reads_only_self, _AsSettings(stored) if stored else None)

    def _cross_entropy_on_input(self, name: str) -> bool:
        """A project loss whose forward hands its first input to `F.cross_entropy` (DeepLabV3+'s
        `FocalLoss`, chosen beside `nn.CrossEntropyLoss` by a flag): it takes logits too."""
        found = self._project_class(name)
        return found is not None and _forward_hands_input_to_cross_entropy(found[0], found[1])

    def _unpacks_its_input(self, name: str) -> bool:
        """A project loss whose forward unpacks its first input into parts (`cos_theta, phi_theta = input`):
        it is handed a tuple of outputs, never one tensor."""
        found = self._project_class(name)
        forward = found[0].find_method(found[1], "forward") if found is not None else None
        if forward is None or len(forward.params) < 2:
            return False
        first = forward.params[1]
        return any(len(a.targets) > 1 and dotted_name(a.value) == first for a in forward.assigns if a.value is not None)

    def _project_class(self, name: str):
        found = lookup_class(self.project, self.facts, name)
        last = name.rsplit(".", 1)[-1]
        if found is None and last in self.facts.imported:  # qualified through a package's `__init__` re-export
            found = lookup_class(self.project, self.facts, last)
        return found

    def _constructors(self, expr, fn: FunctionInfo, order: int, depth: int) -> set[str] | None:
        """The qualified classes `expr` may have been constructed from, over every branch and call site;
        None when one path cannot be followed."""
        if depth > 4:
            return None
        if isinstance(expr, cst.Call):
            if isinstance(expr.func, cst.Attribute) and expr.func.attr.value in MODULE_CHAIN:
                return self._constructors(expr.func.value, fn, order, depth + 1)  # `criterion.cuda()`
            q = self.facts.qualify(expr.func)
            if q is None and isinstance(expr.func, cst.Name) and expr.func.value in self.facts.classes:
                q = expr.func.value  # `criterion = FocalLoss(gamma=2)`, a class of this file
            return {q} if q else None
        if isinstance(expr, cst.IfExp):  # `LabelSmoothing(ls) if ls > 0 else nn.CrossEntropyLoss()`
            sides = [self._constructors(side, fn, order, depth + 1) for side in (expr.body, expr.orelse)]
            return sides[0] | sides[1] if None not in sides else None
        name = dotted_name(expr)
        if name is None:
            return None
        unpacked = self.unpacking(name, fn, order)
        if unpacked is not None:  # `model, criterion = set_model(opt)`
            value, index, width, at = unpacked
            found = set()
            for o in self._element_origins(value, index, width, fn, at, depth):
                if o is None:
                    return None
                more = self.flow_of(o)._constructors(o.call, o.function, o.order, depth + 1)
                if more is None:
                    return None
                found |= more
            return found or None
        candidates = self.reaching_candidates(name, fn, order)
        module = self.facts.module_function
        if not candidates and fn is not module and name not in fn.params and name not in fn.assigned_names():
            # a script's global `criterion`, chosen at module level and called inside `def train(epoch):`
            candidates, fn = self.reaching_candidates(name, module, 1 << 62), module
        if len(candidates) > 1:
            candidates = self._assigned_under_the_same_tests(candidates, order)
        if len(candidates) > 1:
            # (`if objective == "regression": loss_func = nn.MSELoss() elif ...: nn.CrossEntropyLoss() else:
            # nn.BCEWithLogitsLoss()`: TabSurvey's regression loss never takes class scores, so what the
            # classifier objectives are handed decides; a Brier-score `MSELoss` under `if args.brier:` still counts)
            candidates = [a for a in candidates if not self._regression_branch(a)] or candidates
        if candidates:
            found: set[str] = set()
            for a in candidates:
                if len(candidates) > 1 and isinstance(a.value, (cst.Name, cst.Attribute)) and self._logit_function(a.value, fn):
                    # `criterion = cross_entropy_with_label_smoothing` in one branch, `nn.CrossEntropyLoss()` in the other
                    found.add("torch.nn.CrossEntropyLoss")
                    continue
                more = self._constructors(a.value, fn, a.context.order, depth + 1)
                if more is None:
                    return None
                found |= more
            return found
        if name in fn.params:
            found = set()
            sites = self.call_sites_anywhere(fn)
            for flow, site in sites:  # main.py builds it, engine.py calls it
                if _misses_required_arguments(fn, site):
                    continue  # `evaluate(model, criterion, loader, device=d)` for `evaluate(args, model, ...)`: raises
                arg = self.argument_for(fn, name, site)
                more = flow._constructors(arg, site.function, site.context.order, depth + 1) if arg is not None else None
                if more is None:
                    return None
                found |= more
            if not sites and "." not in name:
                return self._built_elsewhere_in_file(name, fn, depth)
            return found or None
        return None

    def _regression_branch(self, assign) -> bool:
        """The assignment sits in the body of an `if` whose test names a regression objective, or in the
        `else` of tests that name the classification objectives (SAINT's `if objective == "binary": ...
        elif objective == "classification": ... else: criterion = nn.MSELoss()`)."""
        tests = [(side, self.facts.module.code_for_node(test)) for at, side in assign.context.branches
                 if (test := self.facts.if_tests.get(at)) is not None]
        if any(side == 0 and _REGRESSION_TEST.search(code) for side, code in tests):
            return True
        return bool(tests) and all(side == 1 for side, _ in tests) and any(_CLASSIFICATION_TEST.search(c) for _, c in tests)

    def _built_elsewhere_in_file(self, name: str, fn: FunctionInfo, depth: int) -> set[str] | None:
        """PipeGCN's `def evaluate_trans(name, model, g, loss_fcn)`, which nothing calls: its `loss_fcn` is
        taken to be what the file's other functions build under that name (`loss_fcn = nn.CrossEntropyLoss()`
        in `run()`), when they build it, and only a loss, everywhere."""
        found: set[str] = set()
        for a in self.facts.assigns:
            if a.targets != (name,) or a.function is fn or a.value is None or a.augmented:
                continue
            if not isinstance(a.value, (cst.Call, cst.IfExp)):
                return None
            more = self._constructors(a.value, a.function, a.context.order, depth + 1)
            if more is None:
                return None
            found |= more
        return found if found and all("Loss" in q.rsplit(".", 1)[-1] for q in found) else None

    # -- where an object was made -------------------------------------------------
    def origin(self, expr: cst.BaseExpression, fn: FunctionInfo, order: int) -> "Origin | None":
        """The one call that produced the value of `expr`, if every path agrees on it."""
        return _agreed(self.origins(expr, fn, order))

    def origins(self, expr: cst.BaseExpression, fn: FunctionInfo, order: int, depth: int = 0) -> list:
        """Every call that may have produced the value of `expr` (None for a path that cannot be
        followed), with the function each ran in: through names, `self.` attributes, parameters
        (every call site, including a class's constructions for `__init__`), local functions'
        returns, and iteration wrappers (`enumerate(loader)`, `tqdm(loader)`).

        Answers are memoised per (expression, function, position): a recursive function with many
        call sites (`collate` calling itself per element) would otherwise fan out exponentially.
        A question met again while being answered is a cycle, and unknown."""
        if depth > 10:
            return [None]
        key = (id(expr), id(fn), order)
        known = self._origins_memo.get(key)
        if known is not None:
            return list(known[1])
        self._origins_memo[key] = (expr, (None,))  # in progress: a cycle reads as unknown
        found = self._origins(expr, fn, order, depth)
        self._origins_memo[key] = (expr, tuple(found))  # holding expr keeps its id from being reused
        return found

    def _origins(self, expr: cst.BaseExpression, fn: FunctionInfo, order: int, depth: int) -> list:
        if isinstance(expr, cst.Call):
            name = dotted_name(expr.func)
            iterated = _iterated_argument(expr) if _is_iteration_wrapper(name) else None
            if iterated is not None:  # (`tqdm(desc="train", iterable=loader)` too)
                return self.origins(iterated, fn, order, depth + 1)
            returned = self._returns_of(expr, fn, depth)
            if returned is not None:
                return [o for flow, value, where, at in returned for o in flow.origins(value, where, at, depth + 1)] or [None]
            return [Origin(expr, fn, order, self.facts)]
        if (
            isinstance(expr, cst.Subscript) and len(expr.slice) == 1 and isinstance(expr.slice[0].slice, cst.Index)
            and isinstance(expr.slice[0].slice.value, cst.Integer)
        ):  # `create_loader(datasets, samplers, ...)[0]`: an element of a returned list
            return self._indexed_origins(expr.value, int(expr.slice[0].slice.value.value, 0), fn, order, depth + 1)
        if isinstance(expr, cst.IfExp):  # `sampler = None if rank == -1 else DistributedSampler(ds)`
            return [o for part in (expr.body, expr.orelse) if not is_none(part) for o in self.origins(part, fn, order, depth + 1)]
        name = dotted_name(expr)
        if name is None:
            return [None]
        unpacked = self.unpacking(name, fn, order)
        if unpacked is not None:  # `loader, sampler = make_loaders(...)`
            value, index, width, at = unpacked
            return self._element_origins(value, index, width, fn, at, depth)
        looped = self._loop_element_origins(name, fn, order, depth)
        if looped is not None:  # `for dataset, sampler in zip(datasets, samplers): DataLoader(..., sampler=sampler)`
            return looped
        candidates = self.reaching_candidates(name, fn, order)
        if candidates:  # every branch's assignment is a possible origin
            return [o for a in candidates for o in self.origins(a.value, fn, a.context.order, depth + 1)]
        held = self.value_of(name, fn, order)
        if held is not None:
            return self.origins(held[0], held[1], held[2], depth + 1)
        if name in fn.params:
            found = []
            # (a constructor's parameter: its class built, or handed on through `super().__init__`, in
            # another file of the project when this one has no call)
            sites = self.call_sites_anywhere(fn) if fn.name == "__init__" else [(self, s) for s in self.call_sites(fn)]
            for flow, site in sites:
                arg = flow.argument_for(fn, name, site)
                found.extend(flow.origins(arg, site.function, site.context.order, depth + 1) if arg is not None else [None])
            return found or [None]
        if name.startswith("self.") and fn.cls is not None:  # `self._sampler, self._loader = self._setup_data()`
            for method in fn.cls.methods.values():
                unpacked = self.unpacking(name, method, 1 << 62)
                if unpacked is not None:
                    value, index, width, at = unpacked
                    return self._element_origins(value, index, width, method, at, depth)
            inherited = self._inherited_attribute(fn.cls, name, [(self, fn.cls)])
            if inherited is not None:  # `self.train_data = train_data` in a base class's constructor
                chain, value, method, at = inherited
                return self._origins_down_the_chain(chain, value, method, at, depth)
        enclosing = fn.parent
        if "." not in name and enclosing is not None and not enclosing.is_module and name not in fn.assigned_names():
            # a closure's variable assigned in branches of the enclosing function:
            # `train_loader = MixUpWrapper(train_loader) if mixup` ... `def train(epoch): for x in train_loader`
            return self.origins(expr, enclosing, 1 << 62, depth + 1)
        return [None]

    def _loop_element_origins(self, name: str, fn: FunctionInfo, order: int, depth: int) -> list | None:
        """Origins of a `for` loop's variable, when that loop (not an assignment after it) gave `name`
        its value: the elements of what it iterates, or of the matching `zip(...)` argument."""
        loops = [l for l in fn.loops if name in l.targets and l.order < order and isinstance(l.node, cst.For)]
        if not loops:
            return None
        loop = max(loops, key=lambda l: l.order)
        latest = self.reaching_assignment(name, fn, order)
        if latest is _AMBIGUOUS or (latest is not None and latest.context.order > loop.order):
            return None
        target, iterated = loop.node.target, loop.node.iter
        if isinstance(target, cst.Name):
            return self.element_origins(iterated, fn, loop.order, depth + 1)
        names = [dotted_name(e.value) for e in target.elements] if isinstance(target, (cst.Tuple, cst.List)) else []
        if name not in names or not isinstance(iterated, cst.Call) or any(a.star or a.keyword for a in iterated.args):
            return [None]
        index, called = names.index(name), dotted_name(iterated.func)
        if called == "zip" and len(iterated.args) == len(names):
            return self.element_origins(iterated.args[index].value, fn, loop.order, depth + 1)
        if called == "enumerate" and len(names) == 2 and index == 1 and iterated.args:
            return self.element_origins(iterated.args[0].value, fn, loop.order, depth + 1)
        return [None]

    def _indexed_origins(self, container: cst.BaseExpression, index: int, fn: FunctionInfo, order: int, depth: int) -> list:
        """Origins of `container[index]`: that element of a literal (`return probs, feats`), else any element."""
        if depth > 10:
            return [None]
        if isinstance(container, (cst.List, cst.Tuple)):
            elements = container.elements
            if any(isinstance(e, cst.StarredElement) for e in elements) or not -len(elements) <= index < len(elements):
                return [None]
            return self.origins(elements[index].value, fn, order, depth + 1)
        if isinstance(container, cst.Call):
            returned = self._returns_of(container, fn, depth)
            if not returned:
                return [None]
            return [o for flow, v, where, at in returned for o in flow._indexed_origins(v, index, where, at, depth + 1)]
        name = dotted_name(container)
        grown = name is not None and any(c.receiver == name and c.method in ("append", "extend") for c in fn.calls)
        candidates = self.reaching_candidates(name, fn, order) if name is not None and not grown else []
        if candidates:
            return [o for a in candidates for o in self._indexed_origins(a.value, index, fn, a.context.order, depth + 1)]
        return self.element_origins(container, fn, order, depth + 1)

    def element_origins(self, container: cst.BaseExpression, fn: FunctionInfo, order: int, depth: int = 0) -> list:
        """Origins of any element of a list or tuple: a literal's elements, what is appended to a list
        built in a loop (`samplers = []` ... `samplers.append(DistributedSampler(ds))`), through
        parameters and project functions' returns. `None` elements hold nothing and are left out."""
        if depth > 10:
            return [None]
        if isinstance(container, (cst.List, cst.Tuple)):
            return [
                o for e in container.elements if not isinstance(e, cst.StarredElement) and not is_none(e.value)
                for o in self.origins(e.value, fn, order, depth + 1)
            ]
        if isinstance(container, cst.Call):
            returned = self._returns_of(container, fn, depth)
            if not returned:
                return [None]
            return [o for flow, v, where, at in returned for o in flow.element_origins(v, where, at, depth + 1)]
        name = dotted_name(container)
        if name is None:
            return [None]
        unpacked = self.unpacking(name, fn, order)
        if unpacked is not None:  # `loaders, samplers = get_datasets(cfg)`: the list returned in that place
            value, index, width, at = unpacked
            return self._element_origins(value, index, width, fn, at, depth + 1, elements=True)
        candidates = self.reaching_candidates(name, fn, order)
        if candidates:
            found = [o for a in candidates for o in self.element_origins(a.value, fn, a.context.order, depth + 1)]
            for c in fn.calls:
                if c.receiver == name and c.method == "append" and len(c.node.args) == 1:
                    found += self.origins(c.node.args[0].value, fn, c.context.order, depth + 1)
                elif c.receiver == name and c.method == "extend" and len(c.node.args) == 1:
                    found += self.element_origins(c.node.args[0].value, fn, c.context.order, depth + 1)
            return found
        if name in fn.params:  # `def create_loader(datasets, samplers, ...)` in data.py, called from main.py
            found = []
            for flow, site in self.call_sites_anywhere(fn):
                arg = self.argument_for(fn, name, site)
                found.extend(flow.element_origins(arg, site.function, site.context.order, depth + 1) if arg is not None else [None])
            return found or [None]
        return [None]

    def _returns_of(self, call: cst.Call, fn: FunctionInfo, depth: int):
        """(flow, value, function, order) for each `return value` of the function `call` runs, when
        that function is in this file or (with a project) in another file of it; None otherwise."""
        local = self.facts.resolve_callee(call.func, fn)
        flow = self
        if local is None and self.project is not None and depth < 8:
            name = dotted_name(call.func)
            found = self.project.function_named(self.facts, name)  # (also `data.make_loader(...)`, `Class.method`)
            if found is None or not isinstance(found[1], FunctionInfo):
                return None
            flow, local = self.flow_for(found[0]), found[1]
        if local is None:
            return None
        return [(flow, r.value, local, at) for r, at in local.returns if r.value is not None]

    def unpacking(self, name: str, fn: FunctionInfo, order: int):
        """(value, index, width, order) when the assignment reaching `name` unpacks a tuple into it."""
        a = self.reaching_assignment(name, fn, order)
        if a is None or a is _AMBIGUOUS or len(a.targets) < 2 or a.value is None or not isinstance(a.node, cst.Assign):
            return None
        if len(a.node.targets) != 1 or not isinstance(a.node.targets[0].target, (cst.Tuple, cst.List)):
            return None
        elements = a.node.targets[0].target.elements
        names = [dotted_name(e.value) if not isinstance(e, cst.StarredElement) else None for e in elements]
        if None in names or names.count(name) != 1:
            return None
        return a.value, names.index(name), len(names), a.context.order

    def _element_origins(self, value, index: int, width: int, fn: FunctionInfo, order: int, depth: int,
                         elements: bool = False) -> list:
        """Origins of element `index` of a `width`-tuple: a literal's element, or each return's. With
        `elements`, the origins of what that element holds, itself a list: `return [train_loader,
        test_loader], [train_sampler, test_sampler]`."""
        if isinstance(value, (cst.Tuple, cst.List)):
            if len(value.elements) != width or any(isinstance(e, cst.StarredElement) for e in value.elements):
                return [None]
            take = self.element_origins if elements else self.origins
            return take(value.elements[index].value, fn, order, depth + 1)
        if isinstance(value, cst.Call) and depth < 10:
            returned = self._returns_of(value, fn, depth)
            if returned:
                return [
                    o for flow, v, where, at in returned
                    for o in flow._element_origins(v, index, width, where, at, depth + 1, elements)
                ]
        if isinstance(value, cst.Name) and depth < 10 and not elements:  # `return loaders`, a list built by appends: any element
            return self.element_origins(value, fn, order, depth + 1)
        return [None]

    def flow_of(self, origin: Origin) -> "DataFlow":
        """The dataflow of the file an origin is in, to follow its arguments further."""
        return self.flow_for(origin.facts)

    # -- what an object is -------------------------------------------------------
    def instance_of(self, expr: cst.BaseExpression, fn: FunctionInfo, order: int, depth: int = 0) -> Instance | None:
        """The class `expr` is an instance of: `model` after `model = Net().to(device)`."""
        if depth > 8:
            return None
        if isinstance(expr, cst.Call):
            if isinstance(expr.func, cst.Attribute) and expr.func.attr.value in MODULE_CHAIN:
                return self.instance_of(expr.func.value, fn, order, depth + 1)
            q = self.facts.qualify(expr.func)
            if q in MODEL_WRAPPERS and expr.args:  # DDP(model), torch.compile(model): the model inside
                return self.instance_of(expr.args[0].value, fn, order, depth + 1)
            if q == "torch.nn.Sequential":
                return Instance(self.facts, sequential=expr)
            if q is not None and q.startswith("torch."):
                if q.rsplit(".", 1)[-1][:1].islower():
                    if q.endswith(".convert_sync_batchnorm") and expr.args:  # returns the model it converts
                        return self.instance_of(expr.args[0].value, fn, order, depth + 1)
                    return None  # `torch.load(path)`, `torch.hub.load(...)`: a function, its result unknown
                return Instance(self.facts, qualname=q)
            found = lookup_class(self.project, self.facts, dotted_name(expr.func))
            if found is not None:
                return Instance(found[0], cls=found[1])
            if isinstance(expr.func, cst.Attribute) and expr.func.attr.value in _LOADING_CONSTRUCTORS:
                # `DonutModel.from_pretrained(path)`, `LitModel.load_from_checkpoint(ckpt)`: an instance of a project class
                found = lookup_class(self.project, self.facts, dotted_name(expr.func.value))
                if found is not None:
                    return Instance(found[0], cls=found[1])
            returned = self._returns_of(expr, fn, depth)
            if returned:  # `model = build_model(cfg)` with build_model in the project
                made = {flow.instance_of(v, where, at, depth + 1) for flow, v, where, at in returned}
                if len(made) == 1 and None not in made:
                    return made.pop()
                if self._returned_classes(expr, fn, depth + 1) is not None:
                    return None  # one of several project classes (`load_model(path, kind)`): `instances_of` lists them
            name = q or dotted_name(expr.func)
            return Instance(self.facts, factory=name) if is_model_factory(name) else None
        if isinstance(expr, cst.Attribute) and expr.attr.value in ("module", "_orig_mod"):
            # `model.module` of `DDP(net)` / `torch.compile(net)`: what the wrapper holds, as the wrapper's own instance says
            return self.instance_of(expr.value, fn, order, depth + 1)
        name = dotted_name(expr)
        if name is None:
            return None
        held = self.value_of(name, fn, order)
        if held is None and "." not in name:
            unpacked = self.unpacking(name, fn, order)
            if unpacked is not None:  # `model, classifier, criterion = self.set_model(args, model)`
                return self._element_instance(*unpacked, fn, depth)
        if held is not None:
            found = self.instance_of(held[0], held[1], held[2], depth + 1)
            value = held[0]
            if found is None and isinstance(value, cst.Call) and value.args and dotted_name(value.args[0].value) == name:
                # `model = amp.initialize(model, opt_level="O1")`, `model = convert_sync_bn(model)`: the same model
                return self.instance_of(value.args[0].value, held[1], held[2], depth + 1)
            return found
        if name.startswith("self.") and _MODEL_ATTRIBUTE.search(name[5:]) and name not in fn.assigned_names():
            # `self.model.predict(batch)` in FaKnow's `BaseGNNTrainer`, whose base `BaseTrainer.__init__` (in
            # another file) stores `self.model = model`: what the base constructor was given
            inherited = self._inherited_instance(expr, fn, _MODEL_ATTRIBUTE, depth + 1)
            if inherited is not None:
                return inherited
        if name in fn.params:
            # (memoized per parameter: helpers that hand their parameters on to each other through many call
            # sites made this search exponential, 300 s on imageio's vendored tifffile; an answer found with
            # at least as much depth left is reused)
            key = (id(fn), name)
            known = self._param_instances.get(key)
            if known is not None and known[0] <= depth:
                return known[1]
            found = set()
            for flow, site in self.call_sites_anywhere(fn):
                arg = self.argument_for(fn, name, site)
                if arg is None:
                    found.add(None)
                    break
                found.add(flow.instance_of(arg, site.function, site.context.order, depth + 1))
            result = found.pop() if len(found) == 1 and None not in found else self._annotated_class(fn, name)
            self._param_instances[key] = (depth, result)
            return result
        return None

    def _element_instance(self, value, index: int, width: int, order: int, fn: FunctionInfo, depth: int) -> Instance | None:
        """The instance element `index` of a `width`-tuple holds, when every return of the function that makes
        it agrees: `return model, classifier, criterion` after `classifier = LinearClassifier(...)`."""
        if isinstance(value, (cst.Tuple, cst.List)):
            if len(value.elements) != width or any(isinstance(e, cst.StarredElement) for e in value.elements):
                return None
            return self.instance_of(value.elements[index].value, fn, order, depth + 1)
        if not isinstance(value, cst.Call):
            return None
        returned = self._returns_of(value, fn, depth)
        if not returned:
            return None
        found = {flow._element_instance(v, index, width, at, where, depth + 1) for flow, v, where, at in returned}
        return found.pop() if len(found) == 1 and None not in found else None

    def _annotated_class(self, fn: FunctionInfo, name: str) -> Instance | None:
        """`def report_validation_loss(trainer: DiffusionPriorTrainer, ...)`: a project class named by the
        parameter's annotation, when the call sites do not tell."""
        found = lookup_class(self.project, self.facts, annotation_of(fn, name))
        return Instance(found[0], cls=found[1], declared=True) if found is not None else None

    def instances_of(self, expr, fn: FunctionInfo, order: int, depth: int = 0, partial: bool = False) -> list[Instance] | None:
        """Every class `expr` may be an instance of, over branches, call sites and globals; None when
        one path is unknown (with `partial`, the classes of the paths that are known)."""
        if depth > 6:
            return None
        several = self._returned_classes(expr, fn, depth) if isinstance(expr, cst.Call) else None
        if several is not None:
            return several
        one = self.instance_of(expr, fn, order, depth)
        if one is not None:
            return [one]
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value in MODULE_CHAIN:
            return self.instances_of(expr.func.value, fn, order, depth + 1, partial)  # `(A(...) if c else B(...)).to(device)`
        if isinstance(expr, cst.IfExp):
            sides = [self.instances_of(side, fn, order, depth + 1, partial) for side in (expr.body, expr.orelse)]
            if None in sides and not partial:
                return None
            return [i for side in sides for i in side or ()] or None
        name = dotted_name(expr)
        if name is None:
            return None
        where, before = fn, order
        if not self.reaching_candidates(name, fn, order) and name not in fn.params and not fn.is_module:
            where, before = self.facts.module_function, 1 << 62  # a global
        candidates = self.reaching_candidates(name, where, before)
        if candidates:
            found = []
            for a in candidates:
                if is_none(a.value):
                    continue  # `f0_decoder = None` ... `if args.f0: f0_decoder = Decoder(...)`: no model on that path
                more = self.instances_of(a.value, where, a.context.order, depth + 1, partial)
                if more is None and not partial:
                    return None
                found.extend(more or ())
            return found or None
        if name in fn.params:
            found = []
            for flow, site in self.call_sites_anywhere(fn):
                arg = self.argument_for(fn, name, site)
                more = flow.instances_of(arg, site.function, site.context.order, depth + 1, partial) if arg is not None else None
                if more is None and not partial:
                    return None
                found.extend(more or ())
            return found or None
        return None

    def _returned_classes(self, call: cst.Call, fn: FunctionInfo, depth: int) -> list[Instance] | None:
        """Every class a project factory call may return, when that is more than one (`load_model(path,
        model_type)`, whose branches build ConvE or RotatE); None otherwise."""
        kinds = [flow.instances_of(v, where, at, depth + 1) for flow, v, where, at in self._returns_of(call, fn, depth) or ()]
        if kinds and None not in kinds and len({id(i.cls) for more in kinds for i in more}) > 1:
            return [i for more in kinds for i in more]
        return None

    def call_sites_anywhere(self, fn: FunctionInfo) -> list:
        """(flow, call) for the calls of `fn` in this file, or else in the project's other files
        (`from evaluation import evaluate` in main.py)."""
        here = self.call_sites(fn)
        if here or self.project is None or fn.parent is None or not fn.parent.is_module:
            return [(self, site) for site in here]
        # a class's `__init__`: its constructions in other files (HumanML3D's `LengthEstTrainer(opt, estimator)`
        # in the training script, for the `self.estimator = estimator` it keeps)
        name = fn.cls.name if fn.name == "__init__" and fn.cls is not None and fn.cls.name in self.facts.classes else fn.name
        return [(self.flow_for(facts), site) for facts, site in self.project.callers_elsewhere(self.facts, name)]

    def instance_output_kind(self, inst: Instance, depth: int = 0, site: CallInfo | None = None) -> str | None:
        """What calling the instance returns: a class whose forward ends in softmax, a Sequential ending in one.
        Called at `site`, the forward's branches its literal arguments rule out are left out:
        `self.encoder(xs, softmax=False)` skips `if softmax: x = self.softmax(x)`."""
        if inst.qualname in _PROB_MODULES:
            return _PROB_MODULES[inst.qualname]
        if inst.sequential is not None:
            args = [a.value for a in inst.sequential.args if a.keyword is None and not a.star]
            if args:
                last = Instance(inst.facts, qualname=inst.facts.qualify(args[-1].func) if isinstance(args[-1], cst.Call) else None)
                return self.flow_for(inst.facts).instance_output_kind(last, depth + 1)
            return None
        if inst.cls is not None:
            forward = inst.facts.find_method(inst.cls, "forward")
            if forward is not None:
                return self.flow_for(inst.facts).returns_kind(forward, depth + 1, site)
        return None


_MOVES_AND_CASTS = MODULE_CHAIN - {"train", "eval", "share_memory"}  # (what leaves a module's mode alone)


_UNKNOWN = object()


def _super_init_of(call: CallInfo, class_name: str) -> bool:
    """`super().__init__(...)` in the constructor of a class that names `class_name` as a base."""
    owner = call.function.cls
    return (
        call.method == "__init__" and call.function.name == "__init__" and owner is not None and calls_on_super(call.node)
        and any(b.rsplit(".", 1)[-1] == class_name for b in owner.written_bases)
    )


def _literal(node: cst.BaseExpression | None):
    """The value of a string, integer or True/False/None literal; _UNKNOWN for anything else."""
    if isinstance(node, cst.SimpleString):
        return node.evaluated_value
    if isinstance(node, cst.Integer):
        return node.evaluated_value
    if isinstance(node, cst.Name) and node.value in ("True", "False", "None"):
        return {"True": True, "False": False, "None": None}[node.value]
    return _UNKNOWN


def _parameter_tested(test: cst.BaseExpression | None, params) -> tuple | None:
    """(param, literals, equal) for `param == "x"`, `param != "x"`, `param in ("x", "y")` and
    `param not in (...)`; None for any other test."""
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1 or not isinstance(test.left, cst.Name):
        return None
    param, target = test.left.value, test.comparisons[0]
    if param not in params or param in ("self", "cls"):
        return None
    operator, right = target.operator, target.comparator
    if isinstance(operator, (cst.Equal, cst.NotEqual)):
        literals = (_literal(right),)
    elif isinstance(operator, (cst.In, cst.NotIn)) and isinstance(right, (cst.Tuple, cst.List, cst.Set)):
        literals = tuple(_literal(e.value) for e in right.elements)
    else:
        return None
    if _UNKNOWN in literals:
        return None
    return param, literals, isinstance(operator, (cst.Equal, cst.In))


def flag_tested(test: cst.BaseExpression | None, params, kept: dict[str, str] | None = None) -> tuple[str, bool] | None:
    """(param, truthy) for `if train:` (True) and `if not train:` (False); with `kept` (attribute ->
    constructor parameter), also for `if self.use_batch_norm:` after `self.use_batch_norm = use_batch_norm`."""
    negated = False
    while isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        test, negated = test.expression, not negated
    if isinstance(test, cst.Name) and test.value in params and test.value not in ("self", "cls"):
        return test.value, not negated
    if kept and isinstance(test, cst.Attribute) and dotted_name(test) in kept:
        return kept[dotted_name(test)], not negated
    if negated:
        return None
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        # `if hasattr(args, 'dropout') and args.dropout:` holds only when each side does
        sides = [flag_tested(side, params, kept) for side in (test.left, test.right)]
        return next((found for found in sides if found is not None and found[1]), None)
    held = test.args[0].value if isinstance(test, cst.Call) and dotted_name(test.func) == "hasattr" and test.args else (
        test.value if isinstance(test, cst.Attribute) else None
    )  # `hasattr(args, 'dropout')`, `args.dropout`: never true of an `args` that is None
    if isinstance(held, cst.Name) and held.value in params and held.value not in ("self", "cls"):
        return held.value, True
    return None


def _parameter_in_test(test: cst.BaseExpression | None, params) -> str | None:
    """The parameter an `if` test compares with literals or tests as a flag (or one side of an `and` does:
    nnU-Net's `if run_online_evaluation and self.log_images:`)."""
    if _is_and(test):
        return _parameter_in_test(test.left, params) or _parameter_in_test(test.right, params)
    compared = _parameter_tested(test, params) or flag_tested(test, params)
    return compared[0] if compared is not None else None


def _test_outcome(test: cst.BaseExpression, param: str, value) -> bool | None:
    """Whether `test` holds when `param` is the literal `value`; None when that is not known
    (an `and` is known false when one side is)."""
    if value is _UNKNOWN:
        return None
    if _is_and(test):
        sides = (_test_outcome(test.left, param, value), _test_outcome(test.right, param, value))
        return False if False in sides else None
    compared = _parameter_tested(test, (param,))
    if compared is not None:
        _, literals, equal = compared
        return (value in literals) == equal
    flag = flag_tested(test, (param,))
    return bool(value) == flag[1] if flag is not None else None


def _is_and(test) -> bool:
    return isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And)


class _AsSettings(cst.CSTTransformer):
    """`config[...]` -> `self.config[...]` for the parameters a method stores on `self`."""

    def __init__(self, stored: dict[str, str]) -> None:
        super().__init__()
        self.stored = stored

    def leave_Attribute(self, original_node: cst.Attribute, updated_node: cst.Attribute) -> cst.BaseExpression:
        return updated_node.with_changes(attr=original_node.attr)  # `x.config` names no parameter

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.BaseExpression:
        target = self.stored.get(original_node.value)
        return cst.parse_expression(target) if target else updated_node


def _reads_only_self(test: cst.BaseExpression) -> bool:
    """Every variable the expression reads is `self` (`self.loss_type == "BPR"`, `not self.use_ce`)."""
    roots: list[str] = []

    class _Roots(cst.CSTVisitor):
        def visit_Attribute(self, node: cst.Attribute) -> bool:
            node.value.visit(self)
            return False

        def visit_Name(self, node: cst.Name) -> None:
            if node.value not in ("True", "False", "None"):
                roots.append(node.value)

    test.visit(_Roots())
    return bool(roots) and all(r == "self" for r in roots)


def _agree(taken: dict[str, bool], other: dict[str, bool]) -> bool:
    """Two sets of taken `if` tests (code -> branch) never take a test they share different ways."""
    return all(taken.get(test, way) == way for test, way in other.items())


def _public_torch_name(qualified: str | None) -> str | None:
    """`torch.nn.modules.loss.CrossEntropyLoss` (TransUNet imports it from there) and
    `torch.nn.modules.CrossEntropyLoss` (ShannonAI's MRC-NER) are `torch.nn.CrossEntropyLoss`."""
    if qualified is not None and qualified.startswith("torch.nn.modules.") and qualified.count(".") in (3, 4):
        return "torch.nn." + qualified.rsplit(".", 1)[-1]
    return qualified


def _forward_hands_input_to_cross_entropy(facts, cls) -> bool:
    """A loss class whose forward hands its first input to `F.cross_entropy` or `log_softmax` (DeepLabV3+'s
    `FocalLoss`, a masked cross-entropy that first selects the unmasked rows of it, wise-ft's
    `LabelSmoothing`), or to a `self.ce = nn.CrossEntropyLoss()` of its own (arcface's `FocalLoss`) or one
    it builds as it runs: it takes logits."""
    forward = facts.find_method(cls, "forward")
    if forward is None or len(forward.params) < 2:
        return False
    first = forward.params[1]
    own = {  # `self.ce = nn.CrossEntropyLoss()` in __init__ (or `nn.CrossEntropyLoss().cuda()`: Pixel2Mesh), or
        # `wce_loss = nn.CrossEntropyLoss(weight=self.weight)` built in forward itself (TransMIL's weighted CE)
        t for m in cls.methods.values() for a in m.assigns if isinstance(under_moves(a.value), cst.Call)
        and facts.qualify(under_moves(a.value).func) in _LOGIT_TAKERS for t in a.targets
        if t.startswith("self.") or m is forward and t.isidentifier()
    }
    for c in forward.calls:
        if c.node.args and _reshaped_from(c.node.args[0].value, first) and (c.qualname in _LOGIT_TAKERS or c.dotted in own):
            return True
        if c.method == "log_softmax" and c.receiver == first:  # `x.log_softmax(-1)`
            return True
    return False


_RESHAPING = frozenset({"transpose", "permute", "view", "reshape", "contiguous", "flatten", "float", "squeeze", "unsqueeze"})


def _reshaped_from(node: cst.BaseExpression, name: str | None) -> bool:
    """`pred`, or `pred.transpose(1, 2).contiguous()`: the same values, laid out differently."""
    while isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in _RESHAPING:
        node = node.func.value
    return name is not None and dotted_name(node) == name


def under_moves(node: cst.BaseExpression) -> cst.BaseExpression:
    """What `.to(device).float()` and the like are called on: `model` in `model.to(rank)`."""
    while isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in _MOVES_AND_CASTS:
        node = node.func.value
    return node
