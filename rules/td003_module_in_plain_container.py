"""TD003: submodules kept in a plain list, dict or tuple attribute of an nn.Module."""

from __future__ import annotations

import re

import libcst as cst

from torchdoctor.dataflow import is_none, under_moves
from torchdoctor.facts import AssignInfo, calls_within, dotted_name, exclusive_branches, names_in, repeated_sequence
from torchdoctor.rule import Rule

_REGISTERING = {
    "ModuleList", "ModuleDict", "Sequential", "add_module", "register_module", "setattr", "__setattr__", "ParameterList",
}  # (`self.__setattr__(f"fc{i}", fc)` registers like `setattr(self, ...)`)


class ModuleInPlainContainer(Rule):
    code = "TD003"
    name = "module-in-plain-container"
    severity = "error"
    summary = "Submodules stored in a plain list/dict/tuple are invisible to .parameters(), .to() and state_dict()"
    rationale = """
        `nn.Module` registers a submodule only when it is assigned as an attribute
        directly or held in `nn.ModuleList`/`nn.ModuleDict`/`nn.Sequential`. Modules
        inside a plain Python `list`, `dict` or `tuple` are not registered: their
        parameters are missing from `model.parameters()` (so the optimizer never
        trains them), `model.to(device)` leaves them on the CPU, and `state_dict()`
        does not save them.
    """
    bad = """
        import torch.nn as nn

        class MLP(nn.Module):
            def __init__(self, sizes):
                super().__init__()
                self.layers = [nn.Linear(a, b) for a, b in zip(sizes, sizes[1:])]  # expect: TD003

            def forward(self, x):
                for layer in self.layers:
                    x = layer(x).relu()
                return x
    """
    good = """
        import torch.nn as nn

        class MLP(nn.Module):
            def __init__(self, sizes):
                super().__init__()
                self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in zip(sizes, sizes[1:]))
                self.names = ["in", "hidden", "out"]

            def forward(self, x):
                for layer in self.layers:
                    x = layer(x).relu()
                return x
    """
    fixed = """
        import torch.nn as nn

        class MLP(nn.Module):
            def __init__(self, sizes):
                super().__init__()
                self.layers = nn.ModuleList([nn.Linear(a, b) for a, b in zip(sizes, sizes[1:])])

            def forward(self, x):
                for layer in self.layers:
                    x = layer(x).relu()
                return x
    """
    fix_hint = "Hold submodules in `nn.ModuleList` (for lists and tuples) or `nn.ModuleDict` (for dicts with string keys)."
    triggers = ("self.",)  # a cross-file subclass may never spell "Module" or "torch"

    def check(self, ctx):
        facts, training = ctx.facts, ctx.training
        for cls in (*facts.classes.values(), *facts.nested_classes):
            if not training.is_module_class(facts, cls):
                continue
            methods = list(cls.methods.values())
            assigns = [a for m in methods for a in m.assigns]
            calls = [c for m in methods for c in m.calls]
            registering: dict[str, list] = {}  # name -> the calls that register what it holds
            for call in calls:
                last = (call.dotted or "").rsplit(".", 1)[-1]
                # (or a project module built from the whole list, `OpSequential(self.input_stem)`: it registers them)
                handed_whole = last not in _REGISTERING and any(
                    isinstance(a.value, (cst.Name, cst.Attribute)) for a in call.node.args
                ) and training.constructs_module(call.node) and not (call.qualname or "").startswith("torch.")
                if last in _CONTAINERS and call.function.name == "forward" and not _stored_on_self(call):
                    continue  # `fwd = nn.Sequential(self.linear_1, *self.middle)` in forward: built per call, registers nothing
                if (last in _REGISTERING or handed_whole) and "property" not in call.function.decorators:
                    # (a `@property` that returns `nn.ModuleList([e.ema_model for e in self.ema_unets])` builds
                    # a view on each access; it registers nothing on the module)
                    names = {
                        n for arg in _registered_arguments(call, last) for n in names_in(arg.value) - _only_read_through(arg.value)
                    } if last in _REGISTERING else {
                        dotted_name(arg.value) for arg in call.node.args if isinstance(arg.value, (cst.Name, cst.Attribute))
                    }  # (a module handed whole; not `Wrapper(rnn, input_size=first_rnn.re_module.output_size)`)
                    # `for i, m in enumerate(self.extra): self.add_module(f"m{i}", m)` (the element handed in; not
                    # `for index, stage in enumerate(self.stages): stage(x)`, a call of it that a class shares a name with)
                    names |= {loop.iter_name for loop in call.context.loops if loop.iter_name and names & set(loop.targets)}
                    # `for container in [a, b, c, d]: for name, m in container.named_children(): self.add_module(name, m)`:
                    # what the loops walk, when their variables reach the call (not `for _ in range(len(self.projects))`)
                    for loop in reversed(call.context.loops):
                        if isinstance(loop.node, cst.For) and names & set(loop.targets):
                            names |= names_in(loop.node.iter)
                    # `module_list = sum(zip(self.layers, elus), ())[:-1]` then `nn.Sequential(*module_list)`
                    # (FrEIA): a local built from lists just before registers what they hold
                    # (not `d_model = self.blocks[0].node_to_stalk.in_features`: a size read off an element)
                    names |= {n for a in call.function.assigns if a.targets and a.targets[0] in names and len(a.targets) == 1
                              and "." not in a.targets[0] and a.value is not None and a.context.order < call.context.order
                              for n in names_in(a.value) - _only_read_through(a.value)}
                    for name in names:
                        registering.setdefault(name, []).append(call)
            registered = set(registering)
            # `Encoder(mha=self.shared[i])`, `build_attention(shared=self.compress[0])`: the list only holds
            # layers that other modules take in (and register); a plain list keeps them from being registered twice
            handed_on = {
                dotted_name(arg.value.value) for call in calls
                if any(isinstance(a.value, cst.Subscript) for a in call.node.args)
                and training.constructs_module(call.node)  # a module that takes the layer in (not `tie_weights(...)`)
                for arg in call.node.args
                if isinstance(arg.value, cst.Subscript) and dotted_name(arg.value.value)
            }
            # containers filled later: `self.blocks = []` then `self.blocks.append(Block())`
            filled_with_modules: dict[str, list] = {}  # container -> the contexts of the statements filling it
            filled_values: dict[str, list] = {}  # container -> what `append` puts in it
            for call in calls:
                if call.method in ("append", "extend", "insert") and call.receiver:
                    filled_values.setdefault(call.receiver, []).extend((call, a.value) for a in call.node.args)
                    # (a local name is registered only by its own function: `layer` of `build_blocks` is not
                    # the `layer` that `build_neck` appends)
                    here = {n for n, where in registering.items()
                            if n is not None and ("." in n or any(c.function is call.function for c in where))}
                    if any(
                        _holds_module(training, a.value)
                        or (_names_a_module(training, call, a.value)
                            and not _registered_elsewhere(a.value, here, call.function.assigns, call.function.calls))
                        for a in call.node.args
                    ):
                        filled_with_modules.setdefault(call.receiver, []).append(call.context)
            for a in assigns:
                for t in a.targets:
                    if t.endswith("[]") and a.value is not None and training.constructs_module(a.value):
                        filled_with_modules.setdefault(t[:-2], []).append(a.context)
                    if a.augmented == "AddAssign" and a.value is not None and _holds_module(training, a.value):
                        filled_with_modules.setdefault(t, []).append(a.context)  # `self.heads += [nn.Linear(...)]`
                        filled_values.setdefault(t, []).append((a, a.value))
            local_sources = _local_container_sources(assigns)
            placed_by_hand = _placed_by_hand(assigns)
            for a, attr in _attribute_assignments(assigns):
                if attr in handed_on or attr in placed_by_hand:
                    continue
                if attr in registered and any(_registers_on_its_path(c, a, attr, registering[attr]) for c in registering[attr]):
                    continue  # wrapped later; but `if ...: self.x = [...] else: ...; self.x = nn.ModuleList(self.x)` is not
                value = a.value
                kind = _container_kind(value)
                holds = kind is not None and _holds_module(training, value)
                if not holds and kind is not None and (_is_empty(value) or _only_placeholders(value)) and _filled_after(
                    a, filled_with_modules.get(attr)
                ):
                    holds = True  # (not by the other branch: `if sparse: self.embeds = {}` ... `else: self.embeds = ModuleDict()`)
                if not holds and isinstance(value, cst.Name) and value.value in filled_with_modules:
                    made_as_container = value.value in local_sources or not any(
                        b.targets == (value.value,) for b in assigns  # `layers = ModuleList([])`: registered
                    )
                    if value.value not in registered and made_as_container:
                        holds, kind = True, local_sources.get(value.value, "list")
                if not holds and kind is not None:
                    # (a registration in the other branch does not count: MapTR's `if share: self.cls =
                    # _get_clones(fc_cls, n) else: self.cls = [fc_cls for _ in range(n)]`)
                    # (nor one of what the name held before: `reg = nn.Sequential(*reg)` registers the old list)
                    reachable = {
                        name for name, where in registering.items()
                        if any(c.function is not a.function or not exclusive_branches(c.context.branches, a.context.branches)
                               and not _rebound_between(name, c, a) for c in where)
                    }
                    holds = _lists_unregistered_modules(training, a, attr, assigns, reachable)
                if not holds or _only_losses(value):
                    continue
                if _deleted_after(ctx.facts, a, attr):
                    continue  # VMamba's `self.x_proj = (Linear, Linear)`, stacked into one Parameter, then `del self.x_proj`
                if _only_stateless(ctx, value) and not _filled_with_stateful(ctx, a, filled_values.get(attr)):
                    continue  # (but `self.layers = [nn.ReLU()]`, then a Conv2d block appended per pooling step, is not)
                if _is_empty(value) and _fills_only_losses(filled_values.get(attr)):
                    continue  # mmf's MultiLoss: `loss_fn = MMFLoss(params)`, `self.losses.append(loss_fn)`
                if _is_empty(value) and _fills_only_stateless(ctx, filled_values.get(attr)):
                    continue  # a tracker's `self.tracks += [Track(...) ...]`: modules with no parameters or mode
                yield ctx.report(
                    a.node,
                    f"'{attr}' keeps submodules in a plain {kind}, so their parameters are not registered "
                    f"(not trained, not moved by .to(), not saved); use nn.{'ModuleDict' if kind == 'dict' else 'ModuleList'}",
                    replace=_wrap_fix(ctx, value, kind),
                )


def _registers_on_its_path(call, a: AssignInfo, attr: str, registering: list) -> bool:
    """The registering call wraps what `a` stored on every path from it: a call of another method, or one in
    the same method outside any `if` that `a` is not in. A wrap under an `if` of its own (the neural
    operators' `if self.complex_data: self.channel_mlp = nn.ModuleList([ComplexValued(x) for x in
    self.channel_mlp])`) leaves the list plain on the other path, unless a registration sits there too or
    the test reads the container itself (`if self.layers:` with nothing to register otherwise)."""
    if call.function is not a.function:
        return True
    if exclusive_branches(call.context.branches, a.context.branches):
        return False
    own = set(a.context.branches)
    for if_id, side in call.context.branches:
        if (if_id, side) in own or any((if_id, 1 - side) in other.context.branches for other in registering):
            continue
        return any(attr in names_in(test) for test in call.context.conditions if test not in a.context.conditions)
    return True


def _registered_arguments(call, last: str) -> list:
    """The arguments a registering call registers: every one for `nn.ModuleList([...])` or `add_module(name, m)`;
    for `setattr(obj, name, value)` only the value, and only when set on `self` (diffusers' FreeU sets
    `setattr(upsample_block, "s1", s1)` on each element of `self.up_blocks`: it registers nothing on the model)."""
    args = list(call.node.args)
    if last == "setattr" and call.receiver is None:
        return args[2:3] if args and (dotted_name(args[0].value) or "").split(".", 1)[0] == "self" else []
    return args


def _deleted_after(facts, a: AssignInfo, attr: str) -> bool:
    """`del self.x_proj` later in the method that builds it: a temporary holder whose weights the
    module copies into parameters of its own before dropping it. (Not `del self.layers[i].attn.bias`,
    which drops a part of one element and keeps the list.)"""
    fn = a.function
    if fn.node is None:
        return False
    written = facts.module.code_for_node(fn.node)
    return re.search(rf"^\s*del\s+(?:[\w.]+\s*,\s*)*{re.escape(attr)}\s*(?:[,;#]|$)", written, re.M) is not None


_CONTAINERS = frozenset({"Sequential", "ModuleList", "ModuleDict"})


def _stored_on_self(call) -> bool:
    """The container a call builds is kept as an attribute of the module (`self.fwd = nn.Sequential(...)`)."""
    return any(
        any(t.startswith("self.") for t in a.targets) and a.value is not None and any(c is call.node for c in calls_within(a.value))
        for a in call.function.assigns
    )


def _attribute_assignments(assigns: list[AssignInfo]):
    """(assignment, `self.` attribute) for plain assignments, and the first attribute of a chained one
    (`self.a = self.b = [...]`: one list, one finding); not `+=`, which extends what the attribute
    already is (its first assignment decides)."""
    for a in assigns:
        if a.value is None or a.augmented:
            continue
        chained = isinstance(a.node, cst.Assign) and len(a.node.targets) > 1
        if len(a.targets) != 1 and not chained:
            continue
        attr = next((t for t in a.targets if t.startswith("self.")), None)
        if attr is not None:
            yield a, attr


def _container_kind(value: cst.BaseExpression) -> str | None:
    if isinstance(value, (cst.List, cst.ListComp)):
        return "list"
    if isinstance(value, (cst.Dict, cst.DictComp)):
        return "dict"
    if isinstance(value, cst.Tuple):
        return "tuple"
    if isinstance(value, cst.Call) and dotted_name(value.func) in ("list", "dict", "tuple"):
        return dotted_name(value.func)
    return None


def _only_placeholders(value: cst.BaseExpression) -> bool:
    """`[None, None, None, None]` or `[None] * n`: slots that item assignments fill later (DeepLabCut's
    `self.coam_stages[pos - 1] = CoAMBlock(...)`)."""
    value = repeated_sequence(value)
    return isinstance(value, cst.List) and bool(value.elements) and all(
        isinstance(e, cst.Element) and is_none(e.value) for e in value.elements)


def _is_empty(value: cst.BaseExpression) -> bool:
    if isinstance(value, (cst.List, cst.Dict, cst.Tuple)):
        return not value.elements
    return isinstance(value, cst.Call) and not value.args


def _placed_by_hand(assigns: list[AssignInfo]) -> set[str]:
    """Containers whose elements the class moves itself: `self.dinov2[0] = self.dinov2[0].to(x.device)`
    (DeDoDe keeps a frozen backbone in a list on purpose, "to not show parameters to DDP")."""
    out = set()
    for a in assigns:
        for t in a.targets:
            if t.endswith("[]") and isinstance(a.value, cst.Call):
                value = under_moves(a.value)
                if value is not a.value and isinstance(value, cst.Subscript) and dotted_name(value.value) == t[:-2]:
                    out.add(t[:-2])
    return out



# torchmetrics' metrics are nn.Modules whose states are buffers: kept in a plain dict, `.to(device)` (and
# Lightning's device placement) never reaches them, and their first `update` meets tensors on another device
_METRIC_CLASS = re.compile(r"^torchmetrics\.([\w.]+\.)?[A-Z]\w*$")


def _holds_module(training, value: cst.BaseExpression) -> bool:
    if training.constructs_module(value):
        return True
    if isinstance(value, cst.Call) and _METRIC_CLASS.match(training.facts.qualify(value.func) or ""):
        return True
    if isinstance(value, cst.IfExp):  # `[Block(gpsa=True) if i < k else Block(gpsa=False) for i in range(n)]`
        # (or None where a slot has no module: chemprop's `None if predictor is None else nn.ModuleList(...)`)
        sides = [side for side in (value.body, value.orelse) if not is_none(side)]
        return bool(sides) and all(_holds_module(training, side) for side in sides)
    if isinstance(value, (cst.List, cst.Tuple)):
        return any(_holds_module(training, el.value) for el in value.elements if isinstance(el, cst.Element))
    if isinstance(value, cst.Dict):
        return any(isinstance(el, cst.DictElement) and _holds_module(training, el.value) for el in value.elements)
    if isinstance(value, cst.ListComp):
        return _holds_module(training, value.elt)
    if isinstance(value, cst.DictComp):
        return _holds_module(training, value.value)
    if isinstance(value, (cst.GeneratorExp)):
        return _holds_module(training, value.elt)
    if isinstance(value, cst.Call) and dotted_name(value.func) in ("list", "tuple", "dict") and value.args:
        return _holds_module(training, value.args[0].value)
    return False


def _names_a_module(training, where, value: cst.BaseExpression) -> bool:
    """`block = Block(dim)` ... `self.blocks.append(block)` (or `self.blocks = [block, ...]`): a local name
    the function of `where` (a call or an assignment) builds a module into before it."""
    if not isinstance(value, cst.Name):
        return False
    if any(training.constructs_module(v) for v in _assigned_before(where, value.value)):
        return True
    # `res2, channels = self.make_stage(...)`, whose builder returns `nn.Sequential(*layers), out_channels`
    return any(
        len(a.targets) > 1 and value.value in a.targets and a.context.order < where.context.order
        and training.builds_module_at(a.value, a.targets.index(value.value))
        for a in where.function.assigns
    )


def _assigned_before(where, name: str) -> list[cst.BaseExpression]:
    """The values the function of `where` (a call or an assignment) gives `name` before it, in order."""
    return [
        a.value for a in where.function.assigns
        if a.targets == (name,) and a.value is not None and a.context.order < where.context.order
    ]


def _lists_unregistered_modules(training, a: AssignInfo, attr: str, assigns, registered: set) -> bool:
    """`self.concurent = [b0, b1, b2]` (or `{"embed": embed, "conv": conv}`) after `b0 = nn.Sequential(...)`
    in the same method, kept nowhere else; or `self.class_embed = [self.class_embed for _ in range(n)]`,
    which replaces the registered module by a list of it."""
    value = a.value
    for element in _elements(value):  # (a dict's values too: `self.foot = {"embed": embed, "conv": conv}`)
        if dotted_name(element) == attr and any(
            b.targets == (attr,) and b.context.order < a.context.order and training.constructs_module(b.value)
            for b in a.function.assigns
        ):
            return True
        if _names_a_module(training, a, element) and not _registered_elsewhere(element, registered, assigns, a.function.calls):
            return True
        # `self.submodules = [submodule for k in range(num_layers)]` after `assert isinstance(submodule, nn.Module)`:
        # a module handed in, repeated in a plain list (not `self._teacher = [teacher]`, a deliberate hiding)
        if isinstance(value, cst.ListComp) and isinstance(element, cst.Name) and training.declares_module(a.function, element.value) \
                and not _registered_elsewhere(element, registered, assigns, a.function.calls):
            return True
        if _moves_each_built_module(training, a, value, registered, assigns):
            return True
    return False


def _moves_each_built_module(training, a: AssignInfo, value: cst.BaseExpression, registered: set, assigns) -> bool:
    """`self.layer_list = [l.to(self.device) for l in module_list]`, where the function filled the local
    `module_list` with layers it built (`module_list.append(Block(...))`, `module_list.extend([nn.Linear(...)])`):
    the same modules, moved, in a plain list."""
    if not isinstance(value, cst.ListComp) or value.for_in.inner_for_in is not None:
        return False
    target, source = value.for_in.target, value.for_in.iter
    if not isinstance(target, cst.Name) or not isinstance(source, cst.Name):
        return False
    if dotted_name(under_moves(value.elt)) != target.value:
        return False
    if _registered_elsewhere(source, registered, assigns, a.function.calls):
        return False
    built = []
    for c in a.function.calls:
        if c.receiver != source.value or c.context.order > a.context.order or not c.node.args:
            continue
        arg = c.node.args[0].value
        if c.method == "append":
            built.append(arg)
        elif c.method == "extend" and isinstance(arg, (cst.List, cst.Tuple)):
            built += [e.value for e in arg.elements]
    return any(_builds_stateful_module(training, b) for b in built)


def _only_read_through(node: cst.CSTNode) -> set[str]:
    """Names a container's argument only reads an attribute of (`self.foot["backbone"].feature_dims` in
    `nn.ModuleList(nn.Conv2d(d, 256, 1) for d in self.foot["backbone"].feature_dims)`): the container
    registers what the expression builds, not what those names hold."""
    whole: set[str] = set()
    through: set[str] = set()

    def visit(n: cst.CSTNode, read_through: bool) -> None:
        name = dotted_name(n) if isinstance(n, (cst.Name, cst.Attribute)) else None
        if name is not None:
            (through if read_through else whole).add(name)
        elif isinstance(n, cst.Attribute):  # `x[0].feature_dims`, `f().attr`: only an attribute of x is read
            visit(n.value, True)
        elif isinstance(n, cst.Subscript):  # `x[0]` is an element of x, read through when the subscript is
            visit(n.value, read_through)
            for element in n.slice:
                visit(element, False)
        elif isinstance(n, cst.Call) and isinstance(n.func, cst.Name) and n.func.value == "len":
            for arg in n.args:  # `d * len(self.blocks)`: only the count of what it holds is read
                visit(arg.value, True)
        else:
            for child in n.children:
                visit(child, False)

    visit(node, False)
    return through - whole


def _rebound_between(name: str, call, a: AssignInfo) -> bool:
    """`name` is assigned again after `call` (or by the statement holding it) and before `a`."""
    return any(
        b.targets == (name,) and call.context.order <= b.context.order < a.context.order
        for b in a.function.assigns
    )


def _registered_elsewhere(value: cst.BaseExpression, registered: set, assigns, calls=()) -> bool:
    """`self.add_module(f"conv{k}", conv)` or `self.conv1 = conv` beside `self.convs.append(conv)`:
    the list only keeps references to modules registered another way; also through another list that
    is registered (rlpyt's `sequence.append(maxp_layer)` beside `maxp_layers.append(maxp_layer)`, then
    `self.conv = nn.Sequential(*sequence)`)."""
    name = value.value if isinstance(value, cst.Name) else None
    return name in registered or any(
        a.value is not None and dotted_name(a.value) == name and any(t.startswith("self.") for t in a.targets)
        for a in assigns
    ) or name is not None and any(
        c.method in ("append", "extend", "insert") and c.receiver in registered and any(dotted_name(x.value) == name for x in c.node.args)
        for c in calls
    )


def _filled_after(a: AssignInfo, fills: list | None) -> bool:
    """Some statement filling the container can run after this assignment: not only in a branch
    that excludes it."""
    return any(not exclusive_branches(f.branches, a.context.branches) for f in fills or ())


def _only_stateless(ctx, value: cst.BaseExpression) -> bool:
    """Every element is a module with no parameters, buffers or mode of its own (`[series_decomp(k)
    for k in kernels]`, a moving average; `[nn.Identity() for _ in kernels]`): nothing is lost in a plain list."""
    elements = _elements(value)
    return bool(elements) and all(ctx.training.constructs_stateless(ctx.facts, e) for e in elements)


def _fills_only_stateless(ctx, fills: list | None) -> bool:
    """Everything put in the container later (appended, or added as a list) is a module with no parameters,
    buffers or mode of its own."""
    return bool(fills) and all(
        _only_stateless(ctx, value) if isinstance(value, (cst.List, cst.Tuple, cst.ListComp)) else
        ctx.training.constructs_stateless(ctx.facts, _built_as(call, value))
        for call, value in fills
    )


def _built_as(call, value: cst.BaseExpression) -> cst.BaseExpression:
    """The construction a name appended to the container was last given (`td_aug = TimeDomainSpecAugment(...)`
    ... `self.augment.append(td_aug)`), or the value itself."""
    return (_assigned_before(call, value.value) or [value])[-1] if isinstance(value, cst.Name) else value


def _filled_with_stateful(ctx, a: AssignInfo, fills: list | None) -> bool:
    """Something appended to the container after this assignment, outside a branch that excludes it,
    is a module built in the call with parameters or a mode of its own."""
    return any(
        not exclusive_branches(call.context.branches, a.context.branches) and _builds_stateful_module(ctx.training, value)
        for call, value in fills or ()
    )


def _builds_stateful_module(training, value: cst.BaseExpression) -> bool:
    """A module construction right here whose module has parameters or a mode of its own (a Conv2d block,
    not an `nn.ReLU()`)."""
    return isinstance(value, cst.Call) and training.constructs_module(value) and not training.constructs_stateless(
        training.facts, value
    )


def _only_losses(value: cst.BaseExpression) -> bool:
    """Every element is a loss module (`{name: CLIPLoss(device, clip_model=name) for name in clip_models}`,
    StyleGAN-NADA's frozen CLIP judges): networks that score the output and are not trained, kept out of
    the optimizer and the checkpoint on purpose."""
    elements = _elements(value)
    return bool(elements) and all(_builds_loss(e) for e in elements)


def _fills_only_losses(fills: list | None) -> bool:
    """Everything appended to a container is a loss module, built in the call or just before it."""
    return bool(fills) and all(
        _builds_loss(_built_as(call, value))
        for call, value in fills
    )


def _builds_loss(value: cst.BaseExpression) -> bool:
    """`CLIPLoss(...)`, `MMFLoss(params)`, `FocalCriterion()`: a loss module by its class name."""
    return isinstance(value, cst.Call) and re.search(r"(Loss|Criterion)$", (dotted_name(value.func) or "").rsplit(".", 1)[-1]) is not None


def _elements(value: cst.BaseExpression) -> list[cst.BaseExpression]:
    """What a container literal or comprehension holds."""
    if isinstance(value, (cst.ListComp, cst.GeneratorExp)):
        return [value.elt]
    if isinstance(value, cst.DictComp):
        return [value.value]
    if isinstance(value, (cst.List, cst.Tuple, cst.Dict)):
        return [e.value for e in value.elements if isinstance(e, (cst.Element, cst.DictElement))]
    return []


def _local_container_sources(assigns: list[AssignInfo]) -> dict[str, str]:
    out = {}
    for a in assigns:
        if len(a.targets) == 1 and "." not in a.targets[0] and a.value is not None:
            kind = _container_kind(a.value)
            if kind:
                out[a.targets[0]] = kind
    return out


def _wrap_fix(ctx, value: cst.BaseExpression, kind: str):
    """`[...]` -> `nn.ModuleList([...])`; only where the result behaves the same."""
    prefix = ctx.facts.torch_nn_prefix()
    if prefix is None:
        return None
    if kind == "list" and _is_empty(value):  # `self.blocks = []` later filled by append
        return value, cst.parse_expression(f"{prefix}.ModuleList()")
    if kind in ("list", "tuple") and isinstance(value, (cst.List, cst.ListComp, cst.Tuple)):
        inner = value
        if isinstance(value, cst.Tuple):
            inner = cst.List(elements=[el.with_changes(comma=cst.MaybeSentinel.DEFAULT) for el in value.elements])
        new = cst.parse_expression(f"{prefix}.ModuleList()").with_changes(args=[cst.Arg(inner)])
        return value, new
    if kind == "dict" and isinstance(value, cst.Dict) and all(
        isinstance(el, cst.DictElement) and isinstance(el.key, cst.SimpleString) for el in value.elements
    ):
        new = cst.parse_expression(f"{prefix}.ModuleDict()").with_changes(args=[cst.Arg(value)])
        return value, new
    return None
