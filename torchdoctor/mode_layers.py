"""Whether a model can act differently in train and eval mode.

A model whose class holds no Dropout, BatchNorm, spectral norm or `self.training` use computes the same in either
mode, so a missing `model.eval()` changes nothing (TD005 stays silent). Library models are judged
by what their constructors are given where the library declares it (PyG's and diffusers' `dropout=`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import libcst as cst
import libcst.matchers as matchers

from torchdoctor.dataflow import flag_tested, under_moves
from torchdoctor.facts import FunctionInfo, argument, calls_within, default_of, dotted_name
from torchdoctor.project import lookup_class

# PyG models whose only mode-dependent parts are a `dropout=`/`norm=` they are given
PYG_BASIC_GNNS = frozenset({"GCN", "GraphSAGE", "GIN", "GAT", "PNA", "EdgeCNN", "LightGCN", "Node2Vec", "MetaPath2Vec"})
_PRETRAINED_HELPER = re.compile(r"token|config|processor|scheduler", re.I)  # `tokenizer_class.from_pretrained(...)`
_HELPER_OBJECT = re.compile(r"(Transform|Transforms|Coder|Matcher|Sampler|Tokenizer|Scheduler|Meter|Logger|Config|Processor)$")
_MODE_LAYERS = {
    "Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout",
    "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "SyncBatchNorm", "LazyBatchNorm1d", "LazyBatchNorm2d",
    "LazyBatchNorm3d", "TransformerEncoderLayer", "TransformerDecoderLayer", "Transformer",
    "TransformerEncoder", "TransformerDecoder",
}
_DROPOUT_IF_GIVEN = {"RNN", "LSTM", "GRU", "MultiheadAttention", "Embedding"}
_CONTAINERS = {"Module", "Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict"}
_MODE_FUNCTIONS = {"torch.nn.functional.dropout", "torch.nn.functional.batch_norm", "torch.dropout",
                   "torch.nn.functional.dropout2d", "torch.nn.functional.alpha_dropout"}
# Where each of them takes its training flag: without one, or with a literal, it ignores the module's
# mode (`F.dropout(e1, training=True)`, and `F.dropout(x, 0.5)`, whose default is True, drop in eval mode too)
_MODE_FLAG = {"torch.nn.functional.dropout": ("training", 2), "torch.nn.functional.dropout2d": ("training", 2),
              "torch.nn.functional.alpha_dropout": ("training", 2), "torch.dropout": ("train", 2),
              "torch.nn.functional.batch_norm": ("training", 5)}
# Weight wrappers that act on the mode: spectral norm runs a power iteration (and updates its `u`
# vector) on every forward in training mode only
_MODE_WRAPPERS = {"torch.nn.utils.spectral_norm", "torch.nn.utils.parametrizations.spectral_norm"}


class ModeLayers:
    """Whether a model class contains anything that behaves differently in train and eval mode."""

    def __init__(self, training, flow) -> None:
        self.training = training
        self.flow = flow
        self._cache: dict[int, bool] = {}
        self._unread: dict[int, set[int]] = {}  # `__init__` node -> calls whose layers no attribute read keeps
        self._params_followed: set[tuple[int, str]] = set()  # (constructor or builder, parameter) being followed

    def instance_has_mode_layers(self, inst) -> bool:
        if inst.cls is not None:
            return self.class_has_mode_layers(inst.facts, inst.cls)
        if inst.sequential is not None:
            if not inst.sequential.args:
                return True  # `nn.Sequential()` filled later with add_module(...): contents unknown
            info = inst.facts.call_info(inst.sequential)
            where = (info.function, info.context.order) if info is not None else None
            return any(self._sequential_part_has(inst.facts, a.value, where) for a in inst.sequential.args)
        if inst.qualname:
            return self._torch_layer_has(inst.qualname, None)
        return True

    def _sequential_part_has(self, facts, value, where, depth: int = 0) -> bool:
        """An argument of `nn.Sequential(...)`: a construction, or a name its building function gives one.
        A part that cannot be read (randomized smoothing's `nn.Sequential(normalize_layer, model)`, the model
        picked by an if/elif chain; a list filled by `append`) may hold anything."""
        fn = where[0] if where is not None else None
        if isinstance(value, cst.Call):
            return self._call_has(facts, value, fn, 0)
        if isinstance(value, (cst.List, cst.Tuple)):
            return not value.elements or any(self._sequential_part_has(facts, e.value, where, depth) for e in value.elements)
        if isinstance(value, (cst.ListComp, cst.GeneratorExp)):
            return self._sequential_part_has(facts, value.elt, where, depth)
        if not isinstance(value, (cst.Name, cst.Attribute)):
            return False  # (Super-SloMo's `*list(vgg16.children())[0][:22]`: a slice of a library model, not read)
        name = dotted_name(value)
        if name is None or where is None or depth > 2:
            return True
        held = self.flow.flow_for(facts).value_of(name, fn, where[1])
        if held is None or held[0] is value:
            return True
        return self._sequential_part_has(facts, held[0], (held[1], held[2]), depth + 1)

    def class_has_mode_layers(self, facts, cls, depth: int = 0) -> bool:
        key = id(cls.node)
        if key in self._cache:
            return self._cache[key]
        self._cache[key] = True  # cycles and deep trees: assume yes
        if depth > 16:
            return True
        answer = self._compute(facts, cls, depth)
        self._cache[key] = answer
        return answer

    def own_layers_have_modes(self, facts, cls) -> bool:
        """Whether the class's own layers (not a module handed to its constructor) act on the mode: a
        diffusion sampler built around a UNet it is given has none of its own."""
        return self._compute(facts, cls, 0, handed_in=False)

    def _compute(self, facts, cls, depth, handed_in: bool = True) -> bool:
        for base, written in zip(cls.bases, cls.written_bases):
            if base in ("torch.nn.Module", "torch.nn.modules.module.Module", "object"):
                continue  # (`class Module(object)` of a from-scratch framework: no mode of its own)
            if _mode_free_torch_layer(base):
                continue  # `class Conv1d1x1(nn.Conv1d)`: a torch layer that acts the same in either mode
            # a base of this file, or of another file of the project (salina's `Agent(nn.Module)` in agent.py)
            found = lookup_class(self.training.project, facts, written)
            if found is not None:
                if self.class_has_mode_layers(found[0], found[1], depth + 1):
                    return True
                continue
            return True  # an unknown base class may hold anything
        if handed_in and self._wraps_unknown_module(facts, cls, depth):
            return True
        for method in cls.methods.values():
            if _sets_training(method):
                return True
            # (LapIRN's `self.input_feature_extract(c_in, c_out)`, whose `if batchnorm:` branch, off by default,
            # no call of the class takes: a helper method holds only the layers its calls can build)
            if self._runs_mode_layer(facts, method, depth, _builder_sites(cls, method)):
                return True
        if any(self._call_has(facts, call, None, depth) for call in _class_level_calls(cls)):
            return True  # `MODELS = {"resnet18": models.resnet18(), ...}` in the class body, picked in `__init__`
        return "self.training" in facts.module.code_for_node(cls.node)

    def _runs_mode_layer(self, facts, method: FunctionInfo, depth: int, sites=()) -> bool:
        """Some call of the method builds or runs a layer that acts on the mode; with the `sites` that call
        the method, only a call on a branch one of them can take."""
        flow = self.flow.flow_for(facts) if sites else None
        return any(
            self._call_has(facts, call.node, method, depth) for call in self._layer_calls(facts, method)
            if not (sites and call.context.branches and all(
                flow.branches_ruled_out(call.context.branches, method, flow, site) for site in sites))
        )

    def method_has_modes(self, facts, cls, method) -> bool:
        """Whether one method of a module may act differently in eval mode: the class's mode layers
        count, but `F.dropout(..., training=self.training)` only in the method that calls it (a
        GNN's layer-wise `inference()` skips the dropout its `forward` applies)."""
        for base in cls.bases:
            if base not in ("torch.nn.Module", "torch.nn.modules.module.Module"):
                return self.class_has_mode_layers(facts, cls)
        if self._wraps_unknown_module(facts, cls, 0):
            return True
        if any(self._call_has(facts, call, None, 0) for call in _class_level_calls(cls)):
            return True  # (layers built in the class body: which method reads them is not followed)
        reach = _reach(facts, cls, method)
        for m in cls.methods.values():
            if reach is not None and m not in reach.methods:
                continue
            for call in self._layer_calls(facts, m):
                if m is not method and (call.qualname or "") in _MODE_FUNCTIONS:
                    continue
                if reach is not None and id(call.node) in reach.unread_layers:
                    continue
                if self._call_has(facts, call.node, m, 0):
                    return True
        ran = reach.methods if reach is not None else [method]
        return any(m.node is not None and "self.training" in facts.module.code_for_node(m.node) for m in ran)

    def _layer_calls(self, facts, method: FunctionInfo):
        """The calls of a method that may build or run a layer: not library calls outside `__init__`
        whose result is not kept on self (`Chem.MolFromSmiles(s)` in `decode`), though a class of the
        project imported there is one (`from counting.modules import Decoder` in a builder method)."""
        kept = _kept_on_self(method) if method.name != "__init__" else None
        # (not a layer built into an attribute nothing reads: MNISTCNN's `self.dropout1 = nn.Dropout2d(0.25)`,
        # its use commented out)
        unused = self._unread_in_init(facts, method) if method.name == "__init__" else set()
        for call in method.calls:
            if id(call.node) in unused:
                continue
            if kept is not None and id(call.node) not in kept and _library_call(facts, call.node):
                if lookup_class(self.training.project, facts, dotted_name(call.node.func)) is None:
                    continue
            if _built_to_copy_weights_from(facts, method, call.node):
                continue
            yield call

    def _unread_in_init(self, facts, init: FunctionInfo) -> set[int]:
        """`_unread_attribute_layers`, worked out once per `__init__` (each model run asks again)."""
        key = id(init.node)
        found = self._unread.get(key)
        if found is None:
            found = self._unread[key] = _unread_attribute_layers(facts, init)
        return found

    @staticmethod
    def _runs_module_passed_in(cls) -> bool:
        """`def __init__(self, model): self.model = model` ... `self.model(x)`: a wrapper whose
        inner model is whatever the caller passed, so it may hold anything."""
        return bool(_modules_passed_in(cls))

    def _wraps_unknown_module(self, facts, cls, depth: int) -> bool:
        """The class runs a module handed to it, and some construction may hand it one with modes."""
        return self._runs_module_passed_in(cls) and not self._handed_only_mode_free(facts, cls, depth)

    def _handed_only_mode_free(self, facts, cls, depth: int) -> bool:
        """Every construction of the wrapper in the project hands it modules we can see are mode-free:
        DGL's JT-VAE builds `DGLJTNNEncoder(vocab, hidden, self.embedding)` after
        `self.embedding = nn.Embedding(...)`. Unknown when some construction cannot be read."""
        init = cls.methods.get("__init__")
        project = self.training.project
        if init is None or project is None or depth > 16:
            return False
        passed = _modules_passed_in(cls)
        sites = constructions_of(project, facts, cls)
        if not sites:
            return False
        for site_facts, site in sites:
            flow = self.flow.flow_for(site_facts)
            for param in passed:
                arg = flow.argument_for(init, param, site)
                if arg is None and not any(a.star for a in site.node.args) and _mode_free_default(facts, init, param):
                    continue  # `activation=F.relu` left to its default: a function, no module
                made = self._construction_of(flow, site, arg)
                if made is None or self._call_has(site_facts, made, site.function, depth + 1):
                    return False
        return True

    @staticmethod
    def _construction_of(flow, site, arg) -> cst.Call | None:
        """The call that built what `arg` names at the construction site: itself, a local's value, or the
        value a `self.` attribute of the site's class was given."""
        if isinstance(arg, cst.Call):
            built = under_moves(arg)
            return built if isinstance(built, cst.Call) else None
        name = dotted_name(arg) if arg is not None else None
        if name is None:
            return None
        if name.startswith("self.") and site.function.cls is not None:
            values = [
                a.value for m in site.function.cls.methods.values() for a in m.assigns
                if a.targets == (name,) and a.value is not None
            ]
            value = under_moves(values[0]) if len(values) == 1 else None
            return value if isinstance(value, cst.Call) else None
        held = flow.value_of(name, site.function, site.context.order)
        value = under_moves(held[0]) if held is not None else None  # (`model = UNet(...).to(device)`)
        return value if isinstance(value, cst.Call) else None

    def _call_has(self, facts, node, fn, depth) -> bool:
        found = lookup_class(self.training.project, facts, dotted_name(node.func))
        if found is not None:
            if not self.training.is_module_class(found[0], found[1]):
                return False
            return self.class_has_mode_layers(found[0], found[1], depth + 1) and not self._built_without_modes(
                found[0], found[1], facts, node, depth
            )
        builder = self._imported_builder(facts, node)
        if builder is not None and depth < 12:
            # DETR's `transformer = build_transformer(args)`, a builder in another file of the project: the
            # layers it builds, as its own file sees them
            home, function = builder
            return any(self._call_has(home, c.node, function, depth + 1) for c in function.calls)
        q = facts.qualify(node.func)
        if q == "functools.partial" and node.args and depth < 6:
            # `gat_layer = partial(HardGAO, k=k)`: the layers it will build are the class's
            return self._call_has(facts, cst.Call(func=node.args[0].value), fn, depth + 1)
        if q is not None:
            if q in _MODE_FUNCTIONS:
                return _follows_mode(q, node)
            if q in _MODE_WRAPPERS:
                return True
            if q.startswith("torch.nn.") and q.rsplit(".", 1)[-1][:1].isupper():
                rate = _dropout_rate(q, node)
                if rate is not None:  # `nn.Dropout(dropout)` with `dropout=0.` all the way down: an identity
                    return self._rate_may_drop(facts, fn, rate, depth)
                return self._torch_layer_has(q, node)
            if q.startswith("torch."):
                return False
            if q.startswith("diffusers.") and (q.rsplit(".", 1)[-1][:1].isupper() or q.endswith((".from_pretrained", ".from_config"))):
                # diffusers' models have no BatchNorm and default to dropout 0.0: only a `dropout=` given says otherwise
                return any(a.keyword is not None and a.keyword.value == "dropout" and not _zero(a.value) for a in node.args)
            if q.startswith("torch_geometric.nn.") and (q.endswith("Conv") or q.rsplit(".", 1)[-1] in PYG_BASIC_GNNS):
                # PyG's message-passing layers and basic GNNs (dropout 0.0 and no norm by default) hold no mode
                # layer unless given a `dropout=`/`norm=` or an inner network (`GINConv(Sequential(..., BatchNorm1d))`)
                return any(a.keyword is not None and a.keyword.value in ("dropout", "norm") for a in node.args) or any(
                    self._construction_has(facts, a.value, fn, depth + 1) for a in node.args
                )
            if _TORCHVISION_VGG.match(q) and fn is not None and _only_features_read(fn, node):
                return False  # `vgg19(pretrained=True).features` sliced into a perceptual loss: no Dropout, no BatchNorm
            return self._unknown_constructor(q)
        name = dotted_name(node.func)
        if isinstance(node.func, cst.Call) and dotted_name(node.func.func) == "eval" and fn is not None and fn.name == "__init__":
            return True  # BBN's `self.backbone = eval(cfg.BACKBONE.TYPE)(cfg, ...)`: whichever class the config names
        if name is not None and name.endswith((".from_pretrained", ".from_config")) and name.count(".") == 1:
            # CodeT5's `model_class.from_pretrained(path)`, the class looked up in a table of Hugging Face
            # classes by model type: a pretrained network may hold anything (not a tokenizer or a config)
            return not _PRETRAINED_HELPER.search(name)
        if name is None or "." in name:
            return False  # method calls on tensors and submodules
        local = facts.resolve_callee(node.func, fn)
        if local is not None:
            return self._builder_has(facts, node, local, depth) if depth < 12 else True
        if name in facts.imported:
            return self._unknown_constructor(name)
        if fn is not None and fn.name == "__init__":
            kind = self._layer_kind_variable(facts, fn, name, depth)
            if kind is not None:
                return kind
        return name[:1].isupper() and not name.endswith(("Error", "Exception", "Warning"))  # (`raise KeyError(...)`)

    def _imported_builder(self, facts, node: cst.Call) -> tuple | None:
        """(facts, function) for a call of a function imported by name from another file of the project."""
        project = self.training.project
        if project is None or not isinstance(node.func, cst.Name) or node.func.value not in facts.imported:
            return None
        hit = project.resolve_imported(facts, node.func.value)
        return hit if hit is not None and isinstance(hit[1], FunctionInfo) else None

    def _built_without_modes(self, cls_facts, cls, facts, node: cst.Call, depth: int) -> bool:
        """This construction leaves out every mode layer the class holds: FlowNet's `ConvBlock(64, 128)`,
        whose `if self.use_batch_norm: self.batch_norm = nn.BatchNorm2d(...)` needs `use_batch_norm=True`.
        Only for a plain nn.Module whose other methods hold no mode layer of their own."""
        init = cls.methods.get("__init__")
        site = facts.call_info(node)
        if init is None or site is None or depth > 4:
            return False
        if any(base not in ("torch.nn.Module", "torch.nn.modules.module.Module") for base in cls.bases):
            return False
        if _acts_on_training_flag(cls_facts, cls):
            return False
        if any(m is not init and self._runs_mode_layer(cls_facts, m, depth + 1) for m in cls.methods.values()):
            return False
        stored, caller = cls.stored_params(), self.flow.flow_for(facts)
        with_modes = [c for c in self._layer_calls(cls_facts, init) if self._call_has(cls_facts, c.node, init, depth + 1)]
        return bool(with_modes) and all(
            _flag_rules_out(cls_facts, c.context.branches, init, stored, caller, site) for c in with_modes
        )

    def _builder_has(self, facts, node: cst.Call, builder: FunctionInfo, depth: int) -> bool:
        """A function of the file that builds layers, as this call runs it: a layer behind a flag the
        call leaves off is never built (`make_layers(cfg)` with `if batch_norm: ... BatchNorm2d(v)`
        and `batch_norm=False` by default)."""
        site = facts.call_info(node)
        flow = self.flow.flow_for(facts) if site is not None else None
        return any(
            self._call_has(facts, c.node, builder, depth + 1) for c in builder.calls
            if site is None or not (c.context.branches and flow.branches_ruled_out(c.context.branches, builder, flow, site))
        )

    def _layer_kind_variable(self, facts, fn: FunctionInfo, name: str, depth: int) -> bool | None:
        """A constructor calls a class it holds in a variable. `base = CNNBase if image else MLPBase`: the
        classes it is given. A loop variable over a config (`for from_, block, args in cfg:
        layers.append(block(*args))`), a class handed in as a parameter, or one looked up
        (`block = eval(block)`): the layer may be anything. None: not such a variable (`init_ = lambda m: ...`)."""
        if any(name in loop.targets for loop in fn.loops):
            return True
        given = [a.value for a in fn.assigns if a.targets == (name,) and a.value is not None]
        if any(isinstance(v, cst.Lambda) for v in given):
            return None
        classes = []
        for v in given:
            for alt in (v.body, v.orelse) if isinstance(v, cst.IfExp) else (v,):
                if isinstance(alt, (cst.Name, cst.Attribute)) and (dotted_name(alt) or "").rsplit(".", 1)[-1][:1].isupper():
                    classes.append(alt)
                elif not (isinstance(alt, cst.Name) and alt.value == name):  # (`block if ... else block`)
                    return True  # `eval(block)`, `LAYERS[kind]`: looked up at run time
        if classes:
            return any(self._call_has(facts, cst.Call(func=c), fn, depth + 1) for c in classes)
        if name in fn.params:
            return self._factory_param_has(facts, fn, name, depth)
        return None

    def _factory_param_has(self, facts, init: FunctionInfo, param: str, depth: int) -> bool:
        """A layer factory handed to a constructor and called there (FFA-Net's `conv=default_conv`, then
        `Group(conv, dim, ...)`), or handed on by a builder function (`def make_net(norm=nn.BatchNorm2d):
        return Net(norm_layer=norm)`): whether what the project passes (or the default) may build a layer
        that acts on the mode."""
        return self._param_may(facts, init, param, depth, self._factory_arg_has)

    def _param_may(self, facts, init: FunctionInfo, param: str, depth: int, judge) -> bool:
        """Whether any value the parameter takes may act on the mode, by `judge(facts, fn, value, depth)`:
        what every construction (or call) in the project passes, or the default where one passes nothing.
        Unknown (True) when some construction cannot be read."""
        project, key = self.training.project, (id(init), param)
        if project is None or depth > 16 or key in self._params_followed:
            return True
        if init.name == "__init__" and init.cls is not None:
            sites = constructions_of(project, facts, init.cls)
        elif init.cls is None and init.parent is not None and init.parent.is_module:
            sites = [(facts, c) for c in self.flow.flow_for(facts).call_sites(init)]
            sites += project.callers_elsewhere(facts, init.name)
        else:
            return True
        self._params_followed.add(key)  # (a value handed down `FFA -> Group -> Block` is one hop each)
        try:
            if not sites:  # (a variant the project never builds: as its default would build it)
                return judge(facts, init, default_of(init, param), depth)
            for site_facts, site in sites:
                arg = self.flow.flow_for(site_facts).argument_for(init, param, site)
                if arg is None and any(a.star for a in site.node.args):
                    return True
                if arg is None and judge(facts, init, default_of(init, param), depth):
                    return True
                if arg is not None and judge(site_facts, site.function, arg, depth):
                    return True
            return False
        finally:
            self._params_followed.discard(key)

    def _factory_arg_has(self, facts, fn, arg, depth: int) -> bool:
        """What a factory argument builds: a class or function it names, any of a list of them
        (DehazeFormer's `norm_layer=[RLN, RLN, ...]`), or an element of one (`norm_layer[0]`)."""
        if isinstance(arg, cst.Subscript):
            arg = arg.value
        if isinstance(arg, (cst.List, cst.Tuple)):
            return any(self._factory_arg_has(facts, fn, e.value, depth) for e in arg.elements)
        if not isinstance(arg, (cst.Name, cst.Attribute)) or dotted_name(arg) == "None":
            return True
        if isinstance(arg, cst.Name) and fn is not None and arg.value in fn.params:
            return self._factory_param_has(facts, fn, arg.value, depth)  # handed on from the caller's own caller
        return self._call_has(facts, cst.Call(func=arg), fn, depth)

    def _rate_may_drop(self, facts, fn, rate, depth: int) -> bool:
        """A dropout rate that may be above zero: not a literal 0, nor a parameter that every construction
        leaves at (or sets to) 0 (Fusformer's `FeedForward(dim, mlp_dim, dropout=dropout)` under
        `Transformer_E(..., dropout=0.)`)."""
        if isinstance(rate, (cst.Integer, cst.Float)):
            return rate.evaluated_value != 0
        if isinstance(rate, cst.Name) and fn is not None and rate.value in fn.params:
            return self._param_may(facts, fn, rate.value, depth, self._rate_may_drop)
        return True

    def builds_mode_layer(self, facts, node: cst.Call, fn: FunctionInfo) -> bool:
        """Whether the construction `node` (written in fn) builds a layer that acts on the mode."""
        return self._call_has(facts, node, fn, 0)

    def _construction_has(self, facts, node, fn, depth) -> bool:
        return isinstance(node, cst.Call) and self._call_has(facts, node, fn, depth)

    @staticmethod
    def _torch_layer_has(q: str, node) -> bool:
        last = q.rsplit(".", 1)[-1]
        if last in _MODE_LAYERS:
            return True
        if last in _DROPOUT_IF_GIVEN and node is not None:
            return any(a.keyword is not None and a.keyword.value == "dropout" for a in node.args)
        return False

    @staticmethod
    def _unknown_constructor(q: str) -> bool:
        """A class or factory from another library (torchvision, timm, ...): it may hold anything."""
        last = q.rsplit(".", 1)[-1]
        if q.startswith(("collections.", "typing.", "dataclasses.")):
            return False  # `self._modules = OrderedDict()` in a from-scratch framework's Module: a container
        if q.startswith("torchvision.transforms."):
            return False  # SAM 2's `Resize`, `Normalize`, `ToTensor`: preprocessing, the same in both modes
        if last.endswith("_") and not last.startswith("_"):
            return False  # timm's `trunc_normal_(self.meta1.weight, std=.02)`: an in-place initializer
        if _HELPER_OBJECT.search(last):
            return False  # detectron2's `Box2BoxTransform`, a tokenizer, a sampler: objects with no layers
        return last[:1].isupper() or "model" in q.lower() or "net" in last.lower()


# torchvision's plain VGGs: Dropout sits in `classifier` only, and `features` has no BatchNorm (the `_bn` ones do)
_TORCHVISION_VGG = re.compile(r"^torchvision\.models\.(vgg\.)?vgg(11|13|16|19)$")


def _only_features_read(fn: FunctionInfo, made: cst.Call) -> bool:
    """`vgg = torchvision.models.vgg19(pretrained=True).to(device)` and then only `vgg.features` read."""
    held = next((a.targets[0] for a in fn.assigns if len(a.targets) == 1 and a.targets[0].isidentifier()
                 and a.value is not None and any(c is made for c in calls_within(a.value))), None)
    if held is None or fn.node is None:
        return False
    reads, features = 0, 0

    class _Reads(cst.CSTVisitor):
        def visit_AssignTarget(self, node: cst.AssignTarget) -> bool:
            return False

        def visit_Attribute(self, node: cst.Attribute) -> None:
            nonlocal features
            features += isinstance(node.value, cst.Name) and node.value.value == held and node.attr.value == "features"

        def visit_Name(self, node: cst.Name) -> None:
            nonlocal reads
            reads += node.value == held

    fn.node.body.visit(_Reads())
    return reads > 0 and reads == features


@dataclass
class _Reach:
    methods: list  # the method, what it calls on self, and what `__init__` calls (layer builders)
    unread_layers: set[int]  # `self.<name> = Layer(...)` in `__init__` with <name> read by none of them


_WALKS_ITSELF = re.compile(r"self\.(modules|children|named_modules|named_children|_modules)\b|getattr\(\s*self|__dict__|vars\(\s*self")
_SELF_ATTRIBUTE = re.compile(r"\bself\.(\w+)")


def _reach(facts, cls, method: FunctionInfo) -> _Reach | None:
    """What one method of a module can run: the methods it calls on self, transitively, and the layers
    stored by `__init__` in attributes those methods read (AudioDec's `Generator.forward` runs its encoder
    and decoder; the quantizer, with its `self.training` use, runs only in `encode`). None when the class
    may reach its layers another way: walking its own submodules, or handing `self` to a function."""
    if method.node is None or cls.node is None or _WALKS_ITSELF.search(facts.module.code_for_node(cls.node)):
        return None
    init = cls.methods.get("__init__")
    ran = _called_on_self(facts, cls, [method])
    built = _called_on_self(facts, cls, [init]) if init is not None else []
    read: set[str] = set()
    for m in ran:
        if any(isinstance(a.value, cst.Name) and a.value.value == "self" for c in m.calls for a in c.node.args):
            return None  # `run_blocks(self, x)`: a function of the file reads what it likes
        read |= set(_SELF_ATTRIBUTE.findall(_without_comments(facts.module.code_for_node(m.node))))
    unread = set()
    if init is not None and init not in ran:
        # (an attribute `__init__` itself hands on, `TreeEncoder(..., self.embedding)`, is read there)
        mentions = _SELF_ATTRIBUTE.findall(_without_comments(facts.module.code_for_node(init.node)))
        stores = [a.targets[0][5:] for a in init.assigns if len(a.targets) == 1 and a.targets[0].startswith("self.")]
        read |= {name for name in set(mentions) if mentions.count(name) > stores.count(name)}
        for attribute, value in _stored_calls(init):
            if attribute not in read:
                unread |= _built_in(value)
    return _Reach(ran + [m for m in built if m not in ran], unread)


def _called_on_self(facts, cls, start: list) -> list:
    """The methods given and every method of the class they call on self (`self.encode(x)`, `self(x)`,
    a property read as `self.head`), transitively."""
    seen = [m for m in start if m is not None]
    i = 0
    while i < len(seen):
        m = seen[i]
        i += 1
        for c in m.calls:
            name = "forward" if c.dotted == "self" else c.method if c.receiver == "self" else None
            callee = cls.methods.get(name) if name else None
            if callee is not None and callee not in seen:
                seen.append(callee)
        if m.node is not None:
            for name in _SELF_ATTRIBUTE.findall(facts.module.code_for_node(m.node)):
                callee = cls.methods.get(name)
                if callee is not None and callee not in seen and any(
                    isinstance(d.decorator, cst.Name) and d.decorator.value == "property" for d in callee.node.decorators
                ):
                    seen.append(callee)
    return seen


def _mode_free_torch_layer(q: str) -> bool:
    """A torch.nn layer class that holds no mode of its own (Conv1d, Linear, LayerNorm), as a base class:
    not a container (`nn.Sequential`, whose layers its subclass hands in), a mode layer, or a recurrent
    layer whose `dropout=` its subclass may pass."""
    if not q.startswith("torch.nn.") or q.count(".") != 2:
        return False
    last = q.rsplit(".", 1)[-1]
    return last[:1].isupper() and last not in _MODE_LAYERS and last not in _DROPOUT_IF_GIVEN and last not in _CONTAINERS


def _follows_mode(q: str, node: cst.Call) -> bool:
    """A functional dropout or batch norm whose training flag is an expression (`training=self.training`),
    not missing nor a literal."""
    keyword, position = _MODE_FLAG[q]
    flag = argument(node, position, keyword)
    return flag is not None and not (isinstance(flag, cst.Name) and flag.value in ("True", "False"))


def _dropout_rate(q: str, node: cst.Call) -> cst.BaseExpression | None:
    """The rate given to a dropout layer (`nn.Dropout(p)`, `nn.Dropout(p=0.1)`), or None (not a dropout
    layer, or the default rate of 0.5)."""
    last = q.rsplit(".", 1)[-1]
    if not last.endswith("Dropout") and last not in ("Dropout1d", "Dropout2d", "Dropout3d"):
        return None
    for i, a in enumerate(node.args):
        if a.keyword is not None and a.keyword.value == "p" or a.keyword is None and i == 0 and not a.star:
            return a.value
    return None


def constructions_of(project, facts, cls) -> list:
    """(file facts, call) for every construction of a class of `facts`: in its own file and in the
    project's other files (when there is a project)."""
    elsewhere = project.callers_elsewhere(facts, cls.name) if project is not None else []
    return [(facts, c) for c in facts.calls if c.dotted == cls.name] + elsewhere


def _sets_training(method: FunctionInfo) -> bool:
    """The method assigns a `training` flag (`self.training = mode`)."""
    return any(a.targets and "training" in a.targets[0] for a in method.assigns)


def _acts_on_training_flag(facts, cls) -> bool:
    """The class sets or reads `self.training` itself (`if self.training: x = x + noise`)."""
    return any(_sets_training(m) for m in cls.methods.values()) or "self.training" in facts.module.code_for_node(cls.node)


def _mode_free_default(facts, init: FunctionInfo, param: str) -> bool:
    """The parameter's default is None or a torch function (`activation=F.relu`), not a module."""
    default = default_of(init, param)
    if default is None:
        return False
    if isinstance(default, cst.Name) and default.value == "None":
        return True
    q = facts.qualify(default) or ""
    return q.startswith("torch.") and q.rsplit(".", 1)[-1][:1].islower()


def _class_level_calls(cls) -> list[cst.Call]:
    """The calls in the class body's own assignments (class attributes), outside its methods."""
    if cls.node is None:
        return []
    return [
        call for statement in cls.node.body.body if isinstance(statement, cst.SimpleStatementLine)
        for small in statement.body if isinstance(small, (cst.Assign, cst.AnnAssign)) and small.value is not None
        for call in matchers.findall(small.value, matchers.Call())
    ]


def _builder_sites(cls, method: FunctionInfo) -> list:
    """The `self.<method>(...)` calls of a helper method that only the class's own methods call (a layer
    builder such as `def input_feature_extract(self, ..., batchnorm=False)`); [] for the module's entry
    points, for a method that is also used another way, or for one called from nowhere."""
    if method.name.startswith("__") or method.name in ("forward", "train", "eval") or method.node is None:
        return []
    dotted = f"self.{method.name}"
    sites = [c for m in cls.methods.values() if m is not method for c in m.calls if c.dotted == dotted]
    return sites if sites and all(s.function.name == "__init__" or s.function.cls is cls for s in sites) else []


def _modules_passed_in(cls) -> list[str]:
    """The `__init__` parameters stored on self and then called as modules (`self.embedding = embedding`
    ... `self.embedding(tokens)`; not `self.vocab = vocab`), or whose elements are called (an ensemble's
    `[m(x) for m in self.models]`)."""
    called = {c.dotted for m in cls.methods.values() for c in m.calls}
    # (or whose submodules are: DETR's segmentation head keeps the detector it is given and runs
    # `self.detr.backbone(samples)`, `self.detr.transformer(...)`)
    parts = {c.dotted.rsplit(".", 1)[0] for m in cls.methods.values() for c in m.calls
             if c.dotted and c.dotted.count(".") == 2 and c.method not in _PLAIN_OBJECT_METHODS and not c.method.startswith("_")}
    stored = cls.stored_params()
    elements = _elements_called(cls, {attr for attr in stored if attr not in called})
    return [param for attr, param in stored.items() if attr in called or attr in parts or attr in elements]


# methods of the plain objects a module is often handed (loggers, tokenizers, vocabularies, writers)
_PLAIN_OBJECT_METHODS = frozenset({
    "info", "debug", "warning", "warn", "error", "log", "write", "print", "encode", "decode", "tokenize", "get", "put",
    "append", "extend", "update", "add", "save", "load", "close", "flush", "format", "items", "keys", "values",
    "add_scalar", "add_image", "index", "lookup", "convert_tokens_to_ids", "convert_ids_to_tokens", "sample", "step",
})


def _elements_called(cls, attributes: set[str]) -> set[str]:
    """Those of `attributes` whose elements a method calls: `for m in self.models: m(x)`,
    `[m(x) for m in self.models]`, `self.models[i](x)`."""
    found = set()
    for method in cls.methods.values():
        if not attributes - found or method.node is None:
            continue
        called = {c.dotted for c in method.calls if c.dotted and "." not in c.dotted}
        for c in method.calls:
            if isinstance(c.node.func, cst.Subscript) and dotted_name(c.node.func.value) in attributes:
                found.add(dotted_name(c.node.func.value))
        for loop in matchers.findall(method.node, matchers.For() | matchers.CompFor()):
            target = loop.target.value if isinstance(loop.target, cst.Name) else None
            if target in called and dotted_name(loop.iter) in attributes:
                found.add(dotted_name(loop.iter))
    return found


def _flag_rules_out(facts, branches, init: FunctionInfo, stored: dict[str, str], caller, site) -> bool:
    """Some `if` around a statement of `__init__` tests a flag parameter (or the `self.` attribute that keeps
    it) that this construction leaves false, or sets false: `if self.use_batch_norm:` after
    `self.use_batch_norm = use_batch_norm`, for `ConvBlock(64, 128)`."""
    for if_id, branch in branches:
        tested = flag_tested(facts.if_tests.get(if_id), init.params, stored)
        if tested is None or tested[0] in init.assigned_names():
            continue
        param, truthy = tested
        value = caller.literal_argument(init, param, site)
        if (isinstance(value, bool) or value is None) and (bool(value) == truthy) != (branch == 0):
            return True  # (only a bool or None: the test holds exactly when the value is `truthy`)
    return False


_WEIGHT_READ = re.compile(r"(?:\.\w+)*\.(?:state_dict|named_parameters|parameters)\(")


def _built_to_copy_weights_from(facts, method: FunctionInfo, node: cst.Call) -> bool:
    """`vgg = models.vgg16(pretrained=True)` and then only `vgg.state_dict()` or `.named_parameters()`: a
    model built to copy its weights into this one's layers (CSRNet's frontend), never a layer itself."""
    names = [a.targets[0] for a in method.assigns if a.value is node and len(a.targets) == 1]
    if len(names) != 1 or "." in names[0] or method.node is None:
        return False
    code = facts.module.code_for_node(method.node)
    uses = list(re.finditer(rf"(?<![\w.]){re.escape(names[0])}\b", code))
    reads = [u for u in uses if not re.match(r"\s*=[^=]", code[u.end():])]
    return bool(reads) and all(_WEIGHT_READ.match(code, u.end()) for u in reads)


def _zero(value: cst.BaseExpression) -> bool:
    return isinstance(value, (cst.Integer, cst.Float)) and float(value.value) == 0


def _unread_attribute_layers(facts, init: FunctionInfo) -> set[int]:
    """Calls whose result `__init__` stores in a `self.<name>` that nothing in the file reads again, in a
    class that does not walk its own submodules (`self.modules()`, `self.children()`)."""
    cls = init.cls
    if cls is None or cls.node is None:
        return set()
    text = facts.module.code_for_node(cls.node)
    # (`self.apply(init_fn)` walks them too, but only to set weights: it runs none)
    if _WALKS_ITSELF.search(text):
        return set()
    source = _without_imports(_without_comments(facts.source))
    return {
        built for attribute, value in _stored_calls(init)
        if len(re.findall(r"\." + re.escape(attribute) + r"\b", source)) == 1
        for built in _built_in(value)
    }


def _stored_calls(init: FunctionInfo):
    """(attribute, call) for each `self.<attribute> = Call(...)` of an `__init__`."""
    for a in init.assigns:
        if isinstance(a.value, cst.Call) and len(a.targets) == 1 and a.targets[0].startswith("self.") and (
            a.targets[0].count(".") == 1
        ):
            yield a.targets[0][5:], a.value


def _built_in(value: cst.Call) -> set[int]:
    """ids of a stored call and of the layers built inside it (`nn.Sequential(nn.Conv1d(...), nn.BatchNorm1d(...))`)."""
    return {id(value)} | {id(c) for c in calls_within(value)}


def _without_comments(source: str) -> str:
    """The source with `#` comments blanked (a use commented out is no use)."""
    return re.sub(r"(?m)^([^#'\"\n]*)#.*$", r"\1", source)


def _without_imports(source: str) -> str:
    """The source with its import lines blanked (`from models.modules.projector import Projector` names a
    module, not the attribute `self.projector`)."""
    return re.sub(r"(?m)^[ \t]*(from|import)[ \t].*$", "", source)


def _kept_on_self(method: FunctionInfo) -> set[int]:
    """The calls whose result a method stores on `self` (`self.head = Head(...)` built lazily)."""
    return {
        id(under_moves(a.value)) for a in method.assigns
        if a.value is not None and any(t.startswith("self.") for t in a.targets)
    }


def _library_call(facts, node: cst.Call) -> bool:
    """A call of something imported from outside torch (`Chem.MolFromSmiles`, `np.array`), or at least not
    by a relative import (`from .modules import Base_VGG as build_encoder` in a builder method)."""
    q = facts.qualify(node.func) or ""
    return "." in q and not q.startswith(("torch", ".")) and dotted_name(node.func) is not None and (
        dotted_name(node.func).split(".", 1)[0] in facts.imports
    )
