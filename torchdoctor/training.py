"""Training-loop semantics shared by the rules, computed once per file.

Which calls are `backward()`, optimizer steps or gradient resets; which names
are optimizers; aliases such as `opt = self.optimizer`; which classes are
`nn.Module`s (also across files); what a loop does once calls to local helpers
are followed. Rules ask `ctx.training` instead of re-deriving any of it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

import libcst as cst

from torchdoctor.facts import (
    CallInfo,
    ClassInfo,
    FileFacts,
    FunctionInfo,
    LoopInfo,
    annotation_of,
    argument,
    calls_within,
    default_of,
    dotted_name,
    exclusive_branches,
    names_in,
    positional_args,
    within,
)

from torchdoctor.project import lookup_class, method_and_file

if TYPE_CHECKING:
    from torchdoctor.project import ProjectIndex

# (`opi`, `pg_opi`: ProG's spelling)
_OPTIMIZER_NAME = re.compile(r"(^|_)(opt|opi|optim|optimi[sz]er)s?(_|$|\d|[A-Z])|optimi[sz]er|^opt[A-Z_]", re.I)
# torch.nn.utils functions that hand back the module they are given, reparametrised
_STATELESS_BASES = frozenset({"torch.nn.Module", "torch.nn.modules.module.Module", "torch.nn.modules.loss._Loss"})
# Methods of a module that return the module itself: `Block(...).to(device)` is still a Block
_PLACING = frozenset({"to", "cuda", "cpu", "float", "half", "double", "bfloat16", "train", "eval", "requires_grad_"})
_RETURNS_ITS_MODULE = frozenset({"weight_norm", "spectral_norm", "orthogonal", "remove_weight_norm", "remove_spectral_norm"})
# `delta`, `x_adv`, `pgd_delta`, `noise`; not `theta` or `beta` (hand-made weights)
_PERTURBATION = re.compile(r"(^|_)(delta|eta|perturb\w*|perturbation|noise|adv|pgd)(_|\d|$)", re.I)
_TENSOR_FACTORY = re.compile(r"(zeros|ones|empty|full|rand|randn|randint|tensor)(_like)?$")
# `ema_optimizer = WeightEMA(model, ema_model)` (MixMatch and its descendants) averages weights: no gradients.
_NOT_OPTIMIZER = re.compile(r"sched|scaler|env|option|lr_|adjust|(^|_)ema(_|$)", re.I)
_LAYER_CLASS = re.compile(
    r"(Block|Layer|Conv\w*|Linear|Attention|Norm|Embed\w*|Encoder|Decoder|Head|MLP|Mlp|Module|Net|Stage|Cell|"
    r"Bottleneck|Transformer|Residual|Upsample|Downsample)(\d+[dD]|\d*)$"
)
MODULE_BASES = {
    "torch.nn.Module",
    "torch.nn.modules.module.Module",
    "torch.nn.Sequential",
    "torch.nn.ModuleList",
    "torch.nn.ModuleDict",
    "pytorch_lightning.LightningModule",
    "lightning.LightningModule",
    "lightning.pytorch.LightningModule",
    "lightning.pytorch.core.LightningModule",
    "pl.LightningModule",
    "torch.jit.ScriptModule",  # a subclass of nn.Module (YOLACT's `ScriptModuleWrapper`)
}
# nn.Module base classes of libraries whose code is not in the project
_LIBRARY_MODULE_BASE = re.compile(
    r"^(allennlp\.(models|modules)\.[\w.]*[A-Z]\w*|transformers\.([\w.]+\.)?\w*PreTrainedModel"
    r"|compressai\.models\.([\w.]+\.)?(CompressionModel|[A-Z]\w*Hyperprior|Cheng2020\w*|JointAutoregressiveHierarchicalPriors))$"
)
_HUGGING_FACE_MODEL = re.compile(
    r"^(transformers|pytorch_transformers|pytorch_pretrained_bert)\.([\w.]+\.)?(\w*(PreTrainedModel|Model)|[A-Z]\w*For[A-Z]\w*)$"
)
NOT_MODULE_CLASSES = {"Parameter", "UninitializedParameter", "UninitializedBuffer", "Buffer"}


@dataclass(frozen=True)
class Event:
    """One training-relevant call, seen from a loop (possibly through a helper it calls)."""

    kind: str  # "backward" | "step" | "reset"
    target: str | None  # the optimizer stepped, or what was reset ("opt", "model", "<grad>")
    node: cst.CSTNode  # the call or assignment in the source
    direct: bool  # in the loop's own body, not in a nested loop
    site: cst.CSTNode  # the statement in the loop that leads to it (the call itself when direct)
    inner: tuple = ()  # the if-branches it sits in inside the helpers between the site and it


def _part_of_library_model(facts: FileFacts, value: cst.BaseExpression | None) -> bool:
    """`torchvision.models.densenet121(pretrained=True).features`: a part of a library model, with its weights."""
    while isinstance(value, (cst.Attribute, cst.Subscript)):
        value = value.value
        if isinstance(value, cst.Call):
            q = facts.qualify(value.func) or dotted_name(value.func) or ""
            return q.startswith(("torchvision.models.", "timm.")) and q.rsplit(".", 1)[-1][:1].islower()
    return False


class TrainingFacts:
    def __init__(self, facts: FileFacts, project: "ProjectIndex | None") -> None:
        self.facts = facts
        self.project = project

    # -- aliases ---------------------------------------------------------------
    @cached_property
    def _aliases(self) -> dict[int, dict[str, str]]:
        """Per function: local name -> the dotted name it was assigned from (`opt = self.optimizer`)."""
        out: dict[int, dict[str, str]] = {}
        for fn in self.facts.functions:
            table: dict[str, str] = {}
            for a in fn.assigns:
                if a.augmented is None and len(a.targets) == 1 and "." not in a.targets[0]:
                    source = (dotted_name(a.value) or unwrapped_either_way(a.value)) if a.value is not None else None
                    # (`model = model.module`: the same network, unwrapped; no alias, or it would expand forever)
                    if source and source.split(".", 1)[0] != a.targets[0] and source not in ("None", "True", "False"):
                        table[a.targets[0]] = source
            out[id(fn)] = table
        return out

    def canonical(self, name: str | None, fn: FunctionInfo) -> str | None:
        if name is None:
            return None
        table = self._aliases.get(id(fn), {})
        for _ in range(5):
            head, dot, rest = name.partition(".")
            if head not in table:
                break
            name = table[head] + (dot + rest if dot else "")
        return name

    # -- optimizers ------------------------------------------------------------
    @cached_property
    def optimizer_names(self) -> set[str]:
        """Names assigned from an optimizer constructor anywhere in the file (`self.opt = Adam(...)`)."""
        names: set[str] = set()
        for a in self.facts.assigns:
            if isinstance(a.value, cst.Call) and self._constructs_optimizer(a.value):
                names.update(_optimizer_targets(a.targets))
        return names

    def _constructs_optimizer(self, call: cst.Call) -> bool:
        q = self.facts.qualify(call.func) or dotted_name(call.func) or ""
        last = q.rsplit(".", 1)[-1]
        if q.startswith("torch.optim.") and last[:1].isupper() and "lr_scheduler" not in q:
            return True
        if re.search(r"(optimi[sz]er|Optim)$", last):
            return True  # `ScheduledOptim(Adam(...), d_model, warmup)`: a wrapper that steps and resets its optimizer
        return bool(re.search(r"optimi[sz]er", last, re.I)) and "sched" not in last.lower()

    @cached_property
    def optimizer_models(self) -> dict[str, set[str]]:
        """Optimizer name -> models whose parameters it was built from (`Adam(netD.parameters())` -> {"netD"})."""
        return {name: set().union(*choices) for name, choices in self.optimizer_model_choices.items()}

    @cached_property
    def optimizer_model_choices(self) -> dict[str, list[set[str]]]:
        """Optimizer name -> the models of each construction bound to it: GrowNet's `opt = Adam(m.parameters())`
        for each weak learner, then `opt = Adam(net_ensemble.parameters())` for the corrective step."""
        out: dict[str, list[set[str]]] = {}
        for targets, first in self._optimizer_constructions():
            models = {
                dotted_name(c.func.value)
                for c in calls_within(first)
                if isinstance(c.func, cst.Attribute) and c.func.attr.value in ("parameters", "named_parameters")
            }
            models.discard(None)
            for t in targets:
                out.setdefault(t, []).append(models)
        return out

    @cached_property
    def optimizer_tensors(self) -> dict[str, set[str]]:
        """Optimizer name -> the tensors it was built over by name: `RMSprop([x_bl], lr=1e-2)` searches an
        input (an attribution baseline), whose gradient no model's `zero_grad()` resets."""
        out: dict[str, set[str]] = {}
        for targets, first in self._optimizer_constructions():
            if isinstance(first, (cst.List, cst.Tuple)) and first.elements and not calls_within(first):
                names = {dotted_name(e.value) for e in first.elements if isinstance(e, cst.Element)}
                if None not in names:
                    for t in targets:
                        out.setdefault(t, set()).update(names)
        return out

    @cached_property
    def optimizer_wrapped(self) -> dict[str, set[str]]:
        """Wrapper name -> the optimizers handed to it by name: `self.sched = ScheduledOptim(self.optim, lr)`,
        whose `zero_grad()` resets the optimizer it wraps."""
        out: dict[str, set[str]] = {}
        for targets, first in self._optimizer_constructions():
            if (inner := dotted_name(first)) is not None:
                for t in targets:
                    out.setdefault(t, set()).add(inner)
        return out

    def _optimizer_constructions(self):
        """(the names it is assigned to, its first argument) for every optimizer built in the file."""
        for a in self.facts.assigns:
            if isinstance(a.value, cst.Call) and self._constructs_optimizer(a.value) and a.value.args:
                yield _optimizer_targets(a.targets), a.value.args[0].value

    def is_optimizer(self, name: str | None) -> bool:
        if not name:
            return False
        if name in self.optimizer_names:
            return True
        last = name.rsplit(".", 1)[-1]
        return bool(_OPTIMIZER_NAME.search(last)) and not _NOT_OPTIMIZER.search(last)

    # -- events ----------------------------------------------------------------
    def event_of(self, call: CallInfo) -> tuple[str, str | None] | None:
        """Classify a call as backward, optimizer step or gradient reset."""
        m = call.method
        fn = call.function
        if call.qualname and call.qualname.startswith("torch.distributed.autograd."):
            return None  # distributed autograd keeps gradients per context: nothing to reset
        if m is not None and m.endswith(("backward", "backwards")) and "hook" not in m or call.qualname == "torch.autograd.backward":
            # `loss.backward()`, `self.backwards(loss)`, Lightning's `manual_backward`, DINOv2's `model.forward_backward(data)`
            return "backward", None
        if m is not None and m.startswith("step_") and "schedul" not in m and call.receiver is not None and self.is_optimizer(call.receiver):
            # ScheduledOptim.step_and_update_lr(); not omnivision's `self.optim.step_schedulers(where)`
            return "step", self.canonical(call.receiver, fn)
        if m in ("step", "zero_grad") and call.receiver is None:
            element = _element_of(call)  # `optimizers[name].step()`: pytorch-kaldi keeps one optimizer per network
            key = _literal_key(call)
            if element is not None and key is not None and self.is_optimizer(key):
                # 2D-TAN's engine, `state['optimizer'].step(closure)`: one entry of a dict, named by its key
                return ("step" if m == "step" else "reset"), f'{element[:-2]}["{key}"]'
            if element is not None and self.is_optimizer(element):
                return ("step" if m == "step" else "reset"), self.canonical(element, fn)
        if m == "step" and call.receiver is not None:
            receiver = self.canonical(call.receiver, fn)
            if "scaler" in call.receiver.rsplit(".", 1)[-1].lower() or call.receiver in self._grad_scalers:
                # `scaler.step(opt)`, `self.scaler_G.step(self.opt_G)`, arcface's `amp = GradScaler(...)`
                given = argument(call.node, 0, "optimizer")  # `scaler.step(opt)`, `scaler.step(optimizer=opt)`
                target = _optimizer_written(given) if given is not None else None
                if target and self._named_once(target):
                    return None  # PaCo's `scaler.step(optimier)`: a misspelt name, no optimizer (a NameError)
                return ("step", self.canonical(target, fn)) if target else None
            if self.is_optimizer(receiver) or self.is_optimizer(call.receiver):
                return "step", receiver
            return None
        scaled = self.scaler_call_steps(call)
        if scaled is not None:
            return "step", scaled
        # torch_xla's `xm.optimizer_step(opt)`; not a trainer's own `optimizer_step(step_scheduler=True)`
        args = positional_args(call.node) if m == "optimizer_step" else []
        target = _optimizer_written(args[0]) if args else None
        if target and self.is_optimizer(target):
            return "step", self.canonical(target, fn)
        if m == "zero_grad":
            return "reset", self.canonical(call.receiver, fn) if call.receiver else "<all>"
        if m in ("zero_", "detach_", "requires_grad_") and call.receiver and (
            call.receiver.endswith(".grad") or call.receiver.endswith(".grad.data")
        ):
            if self._is_perturbation(_base(call.receiver), fn):
                return None  # `delta.grad.zero_()`: the gradient of an adversarial perturbation, not of the model
            return "reset", "<grad>"
        if m in ("clear_grad", "reset_grad", "zero_grads"):
            return "reset", "<grad>"
        if m in ("add_", "sub_") and call.receiver and _base(call.receiver) in _grad_owners(call.node.args):
            return "step", "<manual>"  # p.data.add_(-lr * p.grad): a hand-written SGD step
        return None

    def _named_once(self, name: str) -> bool:
        """The name's head appears once in the whole file and nothing is star-imported: it is bound nowhere."""
        head = name.split(".", 1)[0].split("[", 1)[0]
        source = self.facts.source
        return head.isidentifier() and "import *" not in source and len(re.findall(rf"\b{head}\b", source)) == 1

    @cached_property
    def _grad_scalers(self) -> set[str]:
        """Names the file binds to a `GradScaler(...)`, whatever they are called (arcface's `amp`)."""
        return {a.targets[0] for a in self.facts.assigns if len(a.targets) == 1 and isinstance(a.value, cst.Call)
                and (self.facts.qualify(a.value.func) or "").endswith("GradScaler")}

    def scaler_call_steps(self, call: CallInfo) -> str | None:
        """The optimizer that `loss_scaler(loss, optimizer, ...)` steps: timm's NativeScaler (used by DeiT,
        MAE, BEiT, ConvNeXt) scales the loss, runs backward and steps the optimizer in one call."""
        name = call.method or ""
        if "scaler" not in name.lower() or name[:1].isupper() or (call.qualname or "").startswith("torch."):
            return None
        args = positional_args(call.node)
        optimizer = dotted_name(args[1]) if len(args) > 1 else None
        return self.canonical(optimizer, call.function) if optimizer and self.is_optimizer(optimizer) else None

    def _is_perturbation(self, name: str, fn: FunctionInfo) -> bool:
        """`delta = torch.zeros(b, 3, 32, 32).cuda()`: an adversarial perturbation the code makes itself,
        in fn or at module level, not a parameter of a model. (By its name too: a textbook's hand-made
        weights, `w1 = torch.randn(d, h, requires_grad=True)`, are trained with the same statements.)"""
        if not _PERTURBATION.search(name):
            return False
        scopes = [fn] + ([self.facts.module_function] if not fn.is_module else [])
        return any(a.targets == (name,) and self.made_by_tensor_factory(a.value) for scope in scopes for a in scope.assigns)

    def made_by_tensor_factory(self, value) -> bool:
        """`torch.zeros(b, 3, 32, 32).cuda()`, `torch.tensor(x, requires_grad=True)`: a new tensor."""
        while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and not (
            self.facts.qualify(value.func) or ""
        ).startswith("torch."):
            value = value.func.value  # `.cuda()`, `.uniform_(-eps, eps)`, `.requires_grad_()`
        q = (self.facts.qualify(value.func) or "") if isinstance(value, cst.Call) else ""
        return q.startswith("torch.") and bool(_TENSOR_FACTORY.match(q.rsplit(".", 1)[-1]))

    def _fresh_leaf_each_iteration(self, update, loop: LoopInfo) -> bool:
        """`logit_tensor = torch.tensor(logit, requires_grad=True)` earlier in the same iteration as
        `logit_tensor.data -= lr * logit_tensor.grad`: a new leaf every time, whose gradient starts empty."""
        name = _base(update.targets[0])
        return any(
            a.targets == (name,) and loop in a.context.loops and a.context.order < update.context.order
            and self.made_by_tensor_factory(a.value)
            for a in loop.assigns
        )

    def loop_events(self, loop: LoopInfo, depth: int = 3) -> list[Event]:
        """Backward, step and reset events of one iteration of `loop`, following local helpers."""
        events: list[Event] = []
        seen: set[int] = set()
        for call in loop.calls:
            direct = call.context.loop is loop
            if not direct and call.context.loop.parent is loop and self.event_of(call) == ("step", "<manual>"):
                direct = True  # `for p in model.parameters(): p.data.add_(-lr * p.grad)`
            elif not direct and call.context.loop.parent is loop and self.over_optimizers(call.context.loop):
                direct = True  # `for opt in optimizers: opt.step()`: every optimizer, once per iteration
            self._collect(call, direct, call.node, events, {}, depth, seen)
        for a in loop.assigns:
            if resets_grad(a):
                events.append(Event("reset", "<grad>", a.node, a.context.loop is loop, a.node))
            elif _manual_update(a) and not self._is_perturbation(_base(a.targets[0]), loop.function) and (
                not self._fresh_leaf_each_iteration(a, loop)
            ):
                # (`delta.data = delta + eps * delta.grad.sign()` moves an attack's perturbation, not the model)
                events.append(Event("step", "<manual>", a.node, _outside_param_loop(a, loop), a.node))
        return events

    def function_events(self, fn: FunctionInfo, depth: int = 3) -> list[Event]:
        """Backward, step and reset events of one call of `fn`, following local helpers: a per-batch method
        such as CycleGAN's `optimize_parameters()`, which a loop elsewhere calls once per iteration. Direct:
        outside any loop of fn's own (or in one over the optimizers)."""
        events: list[Event] = []
        self._collect_body(fn, True, fn.node, events, {}, depth, {id(fn)}, False, ())
        return events

    def _collect(self, call, direct, site, events, subst, depth, seen, in_step: bool = False, inner: tuple = ()) -> None:
        """`in_step`: inside the body of a call that is itself a step (`optim_schedule.step_and_update_lr()`),
        whose wrapped `self._optimizer.step()` is the same step, not another; its resets still count.
        `inner`: the branches of the helpers on the way (TAPE's `ForwardRunner.step()` steps on every path
        but resets only in its distributed fp16 branch)."""
        kind = self.event_of(call)
        if kind is not None and not (in_step and kind[0] == "step"):
            target = _substitute(kind[1], subst)
            events.append(Event(kind[0], target, call.node, direct, site, inner))
            if kind[0] == "step" and self.scaler_call_steps(call) is not None:
                events.append(Event("backward", None, call.node, direct, site, inner))  # (the scaler's own backward)
        if depth <= 0:
            return
        in_step = in_step or (kind is not None and kind[0] == "step")
        callees = []
        local = self.facts.resolve_function(call) or self.method_of_local_instance(call)
        if local is not None:
            callees.append((local, _bind(local, call, subst, self)))
        for name in _passed_callables(call):  # closures and callbacks passed along: LBFGS `opt.step(closure)`
            fn = self.facts.resolve_callee(name, call.function, call.context.order)
            if fn is not None:
                callees.append((fn, dict(subst)))
        for fn, binding in callees:
            if id(fn) in seen:
                continue
            seen.add(id(fn))
            self._collect_body(fn, direct, site, events, binding, depth - 1, seen, in_step, inner)
            seen.discard(id(fn))

    def _collect_body(self, fn, direct, site, events, subst, depth, seen, in_step: bool, inner: tuple) -> None:
        """The events of one run of fn's body: its calls (direct when outside fn's own loops, or in one over
        the optimizers) and its `.grad` resets."""
        for inner_call in fn.calls:
            loop = inner_call.context.loop
            inner_direct = direct and (loop is None or loop.parent is None and self.over_optimizers(loop))
            self._collect(inner_call, inner_direct, site, events, subst, depth, seen, in_step, inner + inner_call.context.branches)
        for a in fn.assigns:
            if resets_grad(a):
                events.append(Event("reset", "<grad>", a.node, direct and a.context.loop is None, site, inner + a.context.branches))

    def over_optimizers(self, loop: LoopInfo) -> bool:
        """`for opt in self.optimizers:` walks the optimizers, not the data: its body runs once per step
        (so does `for name in optimizers.keys():` over a dict of them, pytorch-kaldi's, or `for key in optimizers:`)."""
        if any(self.is_optimizer(t) for t in loop.targets):
            return True
        walked = loop.node.iter if isinstance(loop.node, cst.For) else None
        if isinstance(walked, cst.Call) and isinstance(walked.func, cst.Attribute) and walked.func.attr.value in ("keys", "values", "items"):
            return self.is_optimizer(dotted_name(walked.func.value))
        # `for key in optimizer: optimizer[key].step()` over fast-coref's dict of them
        return isinstance(walked, (cst.Name, cst.Attribute)) and self.is_optimizer(dotted_name(walked))

    def method_of_local_instance(self, call: CallInfo) -> FunctionInfo | None:
        """`manager.step_optimizers(step)` with `manager = TrainingManager(model)` built in this file, or
        `self.optimizer.step()` with `self.optimizer = NorMuonAndAdam(...)`: a class whose step resets."""
        receiver = call.receiver
        if receiver is None or call.method is None:
            return None
        if receiver.startswith("self.") and receiver.count(".") == 1:  # `self.optimizer = NorMuonAndAdam(...)`
            owner = call.function.self_class()
            scopes = list(owner.methods.values()) if owner is not None else []
        elif "." in receiver:
            return None
        else:
            scopes = [call.function] + ([self.facts.module_function] if not call.function.is_module else [])
        cls = self._local_class_of(receiver, scopes)
        if cls is None and receiver in call.function.params and not call.function.is_module:
            # `def run_train_epoch(runner, loader)`, called as `run_train_epoch(runner, loader)` after
            # `runner = ForwardRunner(model, optimizer)` (TAPE): the class every caller in this file hands in
            found = set()
            for site in self.facts.calls_of(call.function):
                handed = _bind(call.function, site, {}, self).get(receiver)
                scopes = [site.function] + ([self.facts.module_function] if not site.function.is_module else [])
                found.add(self._local_class_of(handed, scopes) if handed and "." not in handed else None)
            cls = found.pop() if len(found) == 1 else None
        return self.facts.find_method(cls, call.method) if cls is not None else None

    def _local_class_of(self, name: str, scopes) -> "ClassInfo | None":
        """The class of this file that `name = Class(...)` builds in one of the scopes."""
        for scope in scopes:
            for a in scope.assigns:
                if a.targets == (name,) and isinstance(a.value, cst.Call) and isinstance(a.value.func, cst.Name):
                    cls = self.facts.classes.get(a.value.func.value)
                    if cls is not None:
                        return cls
        return None

    def unknown_calls_taking(self, loop: LoopInfo, name: str, beside: cst.CSTNode | None = None) -> bool:
        """Whether the loop hands `name` to code this file cannot see (which might reset it),
        on a path that can run with `beside` (a call in the other branch of an `if` cannot)."""
        where = self.facts.call_info(beside) if isinstance(beside, cst.Call) else None
        for call in loop.calls:
            if self.facts.resolve_function(call) is not None or self.event_of(call) is not None:
                continue
            if where is not None and exclusive_branches(call.context.branches, where.context.branches):
                continue
            callee = call.method or call.dotted or ""
            # (`scheduler.step(optimizer, epoch)`: SimpleAICV's own scheduler sets the learning rate it is handed;
            # `logger.consume(loss=loss, optimizer=optimizer)`: a logger reads the learning rate)
            owner = call.receiver.rsplit(".", 1)[-1] if call.receiver else ""
            reader = bool(owner) and bool(_LR_HELPER.search(owner) or _LOGGING_OBJECT.search(owner))
            if (call.method in _HARMLESS_CALLS or _LR_HELPER.search(call.method or "") or reader
                    or _CHECKPOINTING.match(callee) or (call.qualname or "").startswith(_STATE_ONLY_API)
                    or call.dotted in _CONTAINER_BUILTINS
                    or self._project_helper_without_reset(call)):
                continue
            for arg in call.node.args:
                arg_name = self.canonical(dotted_name(arg.value), call.function)
                if arg_name and within(name, arg_name):
                    return True
        return False

    @staticmethod
    def updates_from_own_grad(name: str, value) -> bool:
        """`w -= lr * w.grad`, `w.add_(-lr * w.grad)`: an update of `name` computed from its own gradient."""
        nodes = value.args if isinstance(value, cst.Call) else [value]
        return _base(name) in _grad_owners(nodes)

    def _project_helper_without_reset(self, call: CallInfo) -> bool:
        """`clip_gradient(optimizer, 5.0)` from the project's utils.py, or `snapshot_manager.register(...,
        optimizer=optimizer)` of a project class: harmless if it resets nothing."""
        if self.project is None or call.dotted is None:
            return False
        found = self.project.function_named(self.facts, call.dotted)  # `clip(opt)`, `util.clip_grad_norm(opt, m)`
        fns = [found[1]] if found is not None else self._project_methods(call)
        if not fns and call.receiver is not None and "." not in call.receiver and call.method and _HOOK_METHOD.match(call.method):
            # `for h in self.hooks: h.on_step_end(model=..., optimizer=self.opt)`: a hook of unknown class; harmless
            # when every method of that name the project defines is (simple_task_pytorch's checkpoint hooks)
            hooks = [m for _, m in self.project.methods_named(self.facts, call.method)]
            return bool(hooks) and all(resets_nothing(m) for m in hooks)
        return bool(fns) and all(hasattr(fn, "calls") and resets_nothing(fn) for fn in fns)

    def _project_methods(self, call: CallInfo) -> list:
        """The methods `manager.register(...)` may run, for `manager = SnapshotManager(...)` built in the same
        function (in either branch of an `if`: arcface's `PartialFC(...)` or `PartialFCAdamW(...)`); `__call__`
        for `callback_logging(step, loss, opt)` after `callback_logging = CallBackLogging(...)`, or a module's
        `forward` (arcface's `module_partial_fc(embeddings, labels, opt)`). Empty when any is unknown."""
        owner, method = (call.receiver, call.method) if call.receiver is not None else (call.dotted, "__call__")
        if owner is None or "." in owner:
            return []
        built = [a.value for a in call.function.assigns if a.targets == (owner,)]
        if built and all(isinstance(b, cst.Call) for b in built):
            class_names = [dotted_name(b.func) for b in built]
        elif not built and owner in call.function.params:  # `def trainer(snapshot_manager: SnapshotManager, ...)`
            class_names = [annotation_of(call.function, owner)]
        else:
            return []
        methods = []
        for class_name in class_names:
            found = lookup_class(self.project, self.facts, class_name)
            one = found and (method_and_file(self.project, *found, method)
                             or method == "__call__" and method_and_file(self.project, *found, "forward"))
            if not one:
                return []
            methods.append(one[1])
        return methods

    # -- modules -----------------------------------------------------------------
    def is_module_class(self, facts: FileFacts, cls: ClassInfo, depth: int = 0) -> bool:
        if depth > 6:
            return False
        for base, written in zip(cls.bases, cls.written_bases):
            if base.split(".", 1)[0] in OTHER_FRAMEWORKS:
                return False  # `megengine.module.Module`: lists of submodules are that framework's business
            # (`torch.nn.modules.batchnorm._BatchNorm`: a private base class is a module class too)
            if base in MODULE_BASES or (base.startswith("torch.nn.") and base.rsplit(".", 1)[-1].lstrip("_")[:1].isupper()):
                return True
            if _LIBRARY_MODULE_BASE.match(base):
                return True  # AllenNLP's `Model` and modules, Hugging Face's `PreTrainedModel`: nn.Modules
            if written.rsplit(".", 1)[-1] == "Module" and not base.startswith("torch.") and "/torch/" not in Path(facts.path).as_posix():
                # (torch's own files, `from .module import Module`, skip the lookup)
                own = self.project.find_class(facts, written) if self.project is not None else None
                if own is not None and own[1] is not cls and not own[1].bases and "/torch/" not in Path(own[0].path).as_posix():
                    # `import mytorch.nn as nn` ... `class Net(nn.Module)`: a teaching autograd engine's own
                    # Module, a plain class of the project (a vendored copy of torch's still counts as torch's)
                    return False
            if written.rsplit(".", 1)[-1] == "Module":
                return True  # `from .module import Module` inside torch itself, `nn.Module` aliases
            local = facts.classes.get(written)
            if local is not None and local is not cls:
                if self.is_module_class(facts, local, depth + 1):
                    return True
                continue
            if self.project is not None and written:
                found = self.project.find_class(facts, written)
                if found is not None and found[1] is not cls:
                    if self.is_module_class(found[0], found[1], depth + 1):
                        return True
                    continue
                alias = self.project.qualified_alias(facts, written)
                if alias is not None and alias.startswith("torch.nn.") and alias.rsplit(".", 1)[-1][:1].isupper():
                    return True
            if self._aliased_module_class(facts, written, depth):
                return True  # `BatchNorm2d = NaiveSyncBatchNorm` ... `class USBatchNorm2d(BatchNorm2d)`
            if _HUGGING_FACE_MODEL.match(base):
                return True  # Hugging Face models are nn.Modules (`BertForTokenClassification` too)
            if _LIBRARY_MODULE.match(base) and not base.endswith(("Weights", "Enum")):
                return True  # `vision_transformer.Encoder` (torchvision), mmseg's `BaseSegmentor`: library modules
            if base.rsplit(".", 1)[-1].endswith("Module") and not base.endswith("DataModule"):
                return True  # (Lightning's `LightningDataModule` holds loaders, not layers)
        return False

    def is_stateless_module_class(self, facts: FileFacts, cls: ClassInfo, depth: int = 0) -> bool:
        """A module with no parameters, buffers or train/eval behaviour of its own (Autoformer's
        `series_decomp`: an AvgPool and arithmetic): keeping it in a plain list loses nothing."""
        if depth > 4 or any(base not in _STATELESS_BASES for base in cls.bases):
            return False  # (torch's `_Loss` holds only its reduction: a loss built on it is arithmetic)
        for method in cls.methods.values():
            for call in method.calls:
                q = call.qualname or ""
                if call.method in ("register_buffer", "register_parameter") or q.rsplit(".", 1)[-1] == "Parameter":
                    return False
                if q.startswith("torch.nn.") and q.rsplit(".", 1)[-1][:1].isupper():
                    if not _stateless_torch_class(q, call.node):
                        return False
                    continue
                found = lookup_class(self.project, facts, call.dotted) if call.dotted else None
                if found is not None and self.is_module_class(found[0], found[1]):
                    if not self.is_stateless_module_class(found[0], found[1], depth + 1):
                        return False
            for a in method.assigns:  # `self.conv = self.conv_layer(...)`: a class handed in may hold anything
                if not any(t.startswith("self.") for t in a.targets):
                    continue
                if isinstance(a.value, cst.Call) and not self._plainly_stateless_value(facts, a.value, depth, cls):
                    return False
                if _part_of_library_model(facts, a.value):
                    return False
        return not any("self.training" in facts.module.code_for_node(m.node) for m in cls.methods.values() if m.node)

    def constructs_stateless(self, facts: FileFacts, value: cst.BaseExpression) -> bool:
        """`nn.Identity()`, `nn.ReLU()`, or a project module with no parameters, buffers or mode."""
        if not isinstance(value, cst.Call):
            return False
        q = facts.qualify(value.func) or ""
        if q.startswith("torch.nn.") and q.rsplit(".", 1)[-1][:1].isupper():
            return _STATELESS_LAYER.match(q.rsplit(".", 1)[-1]) is not None
        found = lookup_class(self.project, facts, dotted_name(value.func))
        return found is not None and self.is_stateless_module_class(found[0], found[1])

    def _plainly_stateless_value(self, facts: FileFacts, value: cst.Call, depth: int, cls: ClassInfo | None = None) -> bool:
        q = facts.qualify(value.func) or ""
        last = q.rsplit(".", 1)[-1]
        if q.startswith("torch.nn."):  # a layer (or an unweighted loss)
            return _stateless_torch_class(q, value) if last[:1].isupper() else True
        if q.startswith("torch."):  # a tensor, or an object that holds no parameters (a DataLoader)
            return True
        name = dotted_name(value.func)
        if name in _BUILTIN_VALUES:
            return True
        if isinstance(value.func, cst.Attribute) and value.func.attr.value in _TENSOR_MOVES and (dotted_name(value.func.value) or "").startswith("self."):
            return True  # `self.weights = self.weights.to(x.device)`: what the attribute holds, judged where it is built
        found = lookup_class(self.project, facts, name) if name else None
        if found is not None:
            return self.is_stateless_module_class(found[0], found[1], depth + 1)
        helper = facts.toplevel_functions.get(name) if name else None
        if helper is None and cls is not None and name and name.startswith("self.") and name.count(".") == 1:
            helper = cls.methods.get(name[5:])
        if helper is None or depth > 4:
            return False
        # (SpeechBrain-style augmenters' `self.data_loader = make_dataloader(dataset)`, a function of the file that
        # returns a DataLoader; `self.aug_spks = self._speed_to_speaker(speeds)`, a list of numbers)
        made = [_named_value(helper, r.value, at) for r, at in helper.returns if r.value is not None]
        return bool(made) and all(
            not isinstance(v, cst.Name) and not calls_within(v) if not isinstance(v, cst.Call)
            else self._plainly_stateless_value(facts, v, depth + 1, helper.cls)
            for v in made
        )

    def _builder_methods(self, called: str) -> list[FunctionInfo] | None:
        """The builder methods of this file's classes that `called` names: `MultiLabelDecoder.get_mlp`,
        `BiLSTM.LSTM` (a static builder), or `self.build_layer` (here or in a base class). None when
        `called` names no such method."""
        head, _, method = called.partition(".")
        if head in self.facts.classes and method in self.facts.classes[head].methods:
            return [self.facts.classes[head].methods[method]]
        if head == "self" and method and "." not in method:
            return [c.methods[method] for c in self.facts.classes.values() if method in c.methods]
        if method and "." not in method and head not in self.facts.imports:
            # `[col.make_encoder() for col in config.cols]`: an object of this file's classes whose every
            # `make_encoder` builds a layer (`CategoricalColumn.make_encoder` returns `nn.Embedding(...)`)
            defined = [c.methods[method] for c in self.facts.classes.values() if method in c.methods]
            return defined or None
        return None

    def _builder_returns(self, called: str) -> list[cst.BaseExpression] | None:
        """What those builder methods return, named locals followed to their value (`encoder_layer =
        nn.ModuleList([...]); return encoder_layer`)."""
        methods = self._builder_methods(called)
        if methods is None:
            return None
        # (`return SpectralNorm(conv) if self.spectral_norm else conv`: each side)
        return [_wrapped_value(m, v, at) for m in methods for r, at in m.returns if r.value is not None for v in _sides(r.value)]

    def builds_module_at(self, node: cst.BaseExpression, index: int) -> bool:
        """`res2, channels = self.make_stage(...)`: element `index` of what a builder method returns
        (`stage = Block(...)`, then `return stage, out_channels`) is a module."""
        called = dotted_name(node.func) if isinstance(node, cst.Call) else None
        methods = self._builder_methods(called) if called and called.startswith("self.") else None
        returns = [(m, r.value) for m in methods or () for r, _ in m.returns if r.value is not None]
        return bool(returns) and all(
            isinstance(v, cst.Tuple) and index < len(v.elements)
            and self.constructs_module(_named_value(m, v.elements[index].value), 1)
            for m, v in returns
        )

    def constructs_module(self, node: cst.BaseExpression, depth: int = 0) -> bool:
        """`nn.Linear(...)`, `MyBlock(...)` where MyBlock is an nn.Module of this project, or
        `conv_fn(...)` after `conv_fn = SeparableConv2d if separable else ConvBnAct2d`."""
        if isinstance(node, cst.Subscript) and isinstance(node.value, cst.Call) and _second_index(node):
            # mmcv's `build_norm_layer(cfg, channels)[1]`: the (name, layer) pair's layer
            return (self.facts.qualify(node.value.func) or "").rsplit(".", 1)[-1] in _MMCV_PAIR_BUILDERS
        if not isinstance(node, cst.Call):
            return False
        if isinstance(node.func, cst.Attribute) and node.func.attr.value in _PLACING and isinstance(node.func.value, cst.Call):
            return self.constructs_module(node.func.value, depth)  # `ConformerBlock(...).to(device)`
        if isinstance(node.func, cst.Name) and depth < 2 and node.func.value not in self.facts.imports:
            name = node.func.value
            registries = [a.value.value for a in self.facts.assigns if a.targets == (name,) and isinstance(a.value, cst.Subscript)]
            if registries and all(self._registry_of_modules(r) for r in registries):
                return True  # `GraphConv = _GNN_REGISTRY[conv_type]` ... `GraphConv(in_dim, hid_dim)`
            chosen = self._classes_assigned(name) + [  # `def __init__(self, ..., block_layers=Block)`: a class handed in, with its default
                alt for default in _param_defaults(self.facts, name) for alt in _class_alternatives(default)
            ]
            if chosen:
                return any(self.constructs_module(cst.Call(func=alt, args=node.args), depth + 1) for alt in chosen)
        if isinstance(node.func, cst.Subscript):
            return self._registry_of_modules(node.func.value)  # `kernel_registry[kind](d_model=h)`
        q = self.facts.qualify(node.func)
        if q is not None and q.startswith("mmcv.") and q.rsplit(".", 1)[-1] in _MMCV_LAYER_BUILDERS:
            return True  # `build_conv_layer(conv_cfg, ...)`: mmcv builds the layer its config names
        if q is not None and q.startswith("torch.nn."):
            last = q.rsplit(".", 1)[-1]
            if q.startswith("torch.nn.utils.") and last in _RETURNS_ITS_MODULE and node.args:
                return self.constructs_module(node.args[0].value, depth)  # `weight_norm(Conv1d(...))`
            return last[:1].isupper() and last not in NOT_MODULE_CLASSES
        called = dotted_name(node.func) or ""
        values = self._builder_returns(called) if depth < 2 else None
        if values is not None and (values or not called.startswith("self.")):
            # `MultiLabelDecoder.get_mlp(...)`, `self.build_encoder_layer(args, i)`: a builder method
            return bool(values) and all(self.constructs_module(v, depth + 1) for v in values)
        if called.startswith("self.") and called.count(".") == 1 and depth < 2:
            chosen = self._classes_assigned(called)  # `self.layer_type = {"gat": GATLayer, ...}.get(kind, GATLayer)`
            if chosen:
                return any(self.constructs_module(cst.Call(func=alt, args=node.args), depth + 1) for alt in chosen)
            return bool(_BUILDER_METHOD.match(called[5:]))
        helper, home = self._helper_function(called) if depth < 2 else (None, None)
        if helper is not None:
            values = [r.value for r, _ in helper.returns if r.value is not None]
            orders = [at for r, at in helper.returns if r.value is not None]
            returned = {dotted_name(v) for v in values}
            for param, arg in zip(helper.params, node.args):
                if arg.keyword is None and returned == {param}:  # `layer_init(nn.Linear(d, n), std)` returns the layer it is given
                    return self.constructs_module(arg.value, depth + 1)
            # `def _create_block(bt): return ResidualBlock(width, heads)` inside __init__, or Vim's module-level
            # `def create_block(...): block = Block(...); block.layer_idx = i; return block`; or a project
            # helper of another file, judged with that file's imports (`conv_block(cin, cout)` from blocks.py)
            judge = self if home is self.facts else TrainingFacts(home, self.project)
            if values and all(judge.constructs_module(_named_value(helper, v, at), depth + 1) for v, at in zip(values, orders)):
                return True
            if _returns_module_annotation(home, helper):
                return True  # `def _build_residual_block(...) -> nn.Module:` (its returns sit in `match` cases)
        if q == "copy.deepcopy" and node.args:  # `[copy.deepcopy(layer) for _ in range(n)]`: clones of a layer
            source = dotted_name(node.args[0].value) or ""
            copied = source.rsplit(".", 1)[-1]
            if _LAYER_NAME.search(copied) or self.constructs_module(node.args[0].value, depth + 1):
                return True
            # `[copy.deepcopy(self.encoder) for _ in range(n)]` after `self.encoder = Encoder(...)`
            if source.startswith("self.") and depth < 2:
                return any(
                    a.targets == (source,) and a.value is not None and self.constructs_module(a.value, depth + 1)
                    for a in self.facts.assigns
                )
            # `encoder = nn.TransformerEncoderLayer(...)` ... `[copy.deepcopy(encoder) for _ in range(n)]` (BENDR):
            # a local name, when every assignment to it in the file builds a module
            assigned = [a.value for a in self.facts.assigns if a.targets == (source,) and a.value is not None]
            return source.isidentifier() and depth < 2 and bool(assigned) and all(
                self.constructs_module(v, depth + 1) for v in assigned
            )
        name = dotted_name(node.func)
        found = lookup_class(self.project, self.facts, name)
        if found is not None:
            return self.is_module_class(found[0], found[1])
        nested = self.facts.function_classes.get(name or "")
        if nested and isinstance(node.func, cst.Name):  # `class Matching(torch.nn.Module)` written in `__init__`
            return all(self.is_module_class(self.facts, cls) for cls in nested)
        # A layer class from another library (`from timm.layers import Block`): judged by its name.
        last = (name or "").rsplit(".", 1)[-1]
        head = (name or "").split(".", 1)[0]
        qualified = self.facts.qualify(node.func) or ""
        if head in self.facts.imports and _BUILDER_METHOD.match(last):
            return True  # diffusers' `get_down_block(...)`: a library's block builder
        return head in self.facts.imports and not _NOT_A_MODULE.match(qualified) and (
            bool(_LAYER_CLASS.search(last)) and last[:1].isupper() or bool(_LIBRARY_MODULE.match(qualified))
        )


    def _registry_of_modules(self, expr: cst.BaseExpression) -> bool:
        """A module-level dict of this file, or one imported from the project, whose every value is a
        module class: `registry = {"conv": ConvKernel, "s4": SSKernelDPLR}`, indexed by a config string."""
        name = dotted_name(expr)
        if name and name.startswith("self.") and name.count(".") == 1:
            # `self.head_dict = {"policy": PolicyHead, "value": ValueHead}` in `__init__`, then
            # `self.head_networks[head] = self.head_dict[head]()`
            values = [a.value for cls in self.facts.all_classes for m in cls.methods.values()
                      for a in m.assigns if a.targets == (name,) and a.augmented is None]
            return len(values) == 1 and isinstance(values[0], cst.Dict) and bool(values[0].elements) \
                and self._holds_module_classes(self.facts, values[0])
        if not name or "." in name:
            return False
        value = self.facts.module_value(name)
        found = (self.facts, value) if value is not None else (
            self.project.module_value(self.facts, name) if self.project is not None else None
        )
        if found is None or not isinstance(found[1], cst.Dict) or not found[1].elements:
            return False
        return self._holds_module_classes(*found)

    def _holds_module_classes(self, facts: FileFacts, registry: cst.Dict) -> bool:
        """Every value of the dict literal is a module class (or a factory of one)."""
        for element in registry.elements:
            if not isinstance(element, cst.DictElement):
                return False
            q = facts.qualify(element.value) or ""
            if q.startswith("torch.nn.") and q.rsplit(".", 1)[-1][:1].isupper():
                continue
            cls = lookup_class(self.project, facts, dotted_name(element.value))
            if cls is not None and self.is_module_class(cls[0], cls[1]):
                continue
            # (a library layer by its name, `torch_geometric.nn.GCNConv`, or a factory function of that
            # file returning one: ProG's `"GIN": _make_gin_conv`)
            judge = self if facts is self.facts else TrainingFacts(facts, self.project)
            if cls is None and judge.constructs_module(cst.Call(func=element.value, args=()), 1):
                continue
            return False
        return True

    def _aliased_module_class(self, facts: FileFacts, written: str, depth: int) -> bool:
        """`written` is a module-level alias of a module class: a torch.nn class, a project module class,
        or one named as a layer (`from layers import NaiveSyncBatchNorm`, in a folder the project cannot see)."""
        for a in facts.module_function.assigns:
            if a.targets != (written,) or a.value is None:
                continue
            # (`ScriptModuleWrapper = torch.jit.ScriptModule if use_jit else nn.Module`: either is a module class)
            alternatives = _class_alternatives(a.value) if isinstance(a.value, cst.IfExp) else [a.value]
            if alternatives and all(self._names_module_class(facts, alt, written, depth) for alt in alternatives):
                return True
        return False

    def _names_module_class(self, facts: FileFacts, value: cst.BaseExpression, written: str, depth: int) -> bool:
        """`value` (one side of an alias) names a module class: torch's, the project's, or one named as a layer."""
        name = dotted_name(value)
        if not name or name == written:
            return False
        q = facts.qualify(value) or ""
        if q in MODULE_BASES or q.startswith("torch.nn.") and q.rsplit(".", 1)[-1][:1].isupper() or _LAYER_CLASS_NAME.search(name):
            return True
        found = lookup_class(self.project, facts, name)
        return found is not None and self.is_module_class(found[0], found[1], depth + 1)

    def declares_module(self, fn: FunctionInfo, param: str) -> bool:
        """A parameter the function says is a module: `def __init__(self, submodule: nn.Module)`, or a
        leading `assert isinstance(submodule, nn.Module)` in its body."""
        if param not in fn.params or fn.node is None:
            return False
        for p in (*fn.node.params.params, *fn.node.params.kwonly_params):
            if p.name.value == param and p.annotation is not None:
                return self._names_module_class(self.facts, p.annotation.annotation, param, 0)
        for line in fn.node.body.body:
            for small in getattr(line, "body", ()) if isinstance(line, cst.SimpleStatementLine) else ():
                test = small.test if isinstance(small, cst.Assert) else None
                if (isinstance(test, cst.Call) and dotted_name(test.func) == "isinstance" and len(test.args) == 2
                        and dotted_name(test.args[0].value) == param):
                    return self._names_module_class(self.facts, test.args[1].value, param, 0)
        return False

    def _classes_assigned(self, name: str) -> list[cst.BaseExpression]:
        """The classes assignments in this file may give `name` (`conv_fn = A if separable else B`)."""
        return [
            alt for a in self.facts.assigns if a.targets == (name,) and a.value is not None
            for alt in _class_alternatives(a.value) or _handed_in_class(a)
        ]

    def _helper_function(self, name: str | None) -> tuple[FunctionInfo | None, "FileFacts | None"]:
        """(a plain function called `name`: one defined in this file, at any depth, or imported from the
        project; the facts of the file it is written in)."""
        if not name or "." in name or name in self.facts.classes:
            return None, None
        local = [f for f in self.facts.functions if f.name == name and f.cls is None and not f.is_module]
        if local:
            return (local[0], self.facts) if len(local) == 1 else (None, None)
        found = self.project.resolve_imported(self.facts, name) if self.project is not None else None
        if found is not None and isinstance(found[1], FunctionInfo):
            return found[1], found[0]  # `from .network_utils import *` ... `layer_init(nn.Linear(d, n))`
        return None, None


_LAYER_CLASS_NAME = re.compile(r"(BatchNorm|GroupNorm|LayerNorm|Norm[123]d|Conv[123]d|Linear)$")
_BUILTIN_VALUES = {"int", "float", "str", "bool", "tuple", "list", "dict", "set", "len", "max", "min", "abs", "round", "range", "iter"}
_TENSOR_MOVES = {"to", "cuda", "cpu", "float", "double", "half", "type", "detach", "clone", "contiguous"}
_STATELESS_LAYER = re.compile(
    r"(\w*Pool\dd|\w*Pad\dd|ReLU\d*|LeakyReLU|GELU|SiLU|ELU|Mish|Sigmoid|Tanh|Softmax(2d)?|LogSoftmax|"
    r"Softplus|Hardtanh|Hardswish|Hardsigmoid|LogSigmoid|Flatten|Unflatten|Identity|Upsample\w*|PixelShuffle|PixelUnshuffle)$"
)
_BUILDER_METHOD = re.compile(
    r"^_?(build|make|create|get)_\w*(layer|block|encoder|decoder|head|conv|module|net|attention|embedding|stage|backbone|neck|"
    r"component|brick)s?$"
)
# mmcv's layer builders: each returns a module; `build_norm_layer` and `build_plugin_layer` a (name, module) pair
_MMCV_LAYER_BUILDERS = frozenset({"build_conv_layer", "build_activation_layer", "build_upsample_layer", "build_padding_layer"})
_MMCV_PAIR_BUILDERS = frozenset({"build_norm_layer", "build_plugin_layer"})
_LIBRARY_MODULE = re.compile(
    r"(torchvision\.models|timm\.models|timm\.layers)\.([\w.]+\.)?[A-Z]\w*$"
    r"|(mmcv|mmengine|mmseg|mmdet|mmdet3d|mmpose|mmaction|detectron2)\.[\w.]*\.\w*(Module|Model|Segmentor|Detector|Backbone|Head)$"
    r"|detectron2\.modeling\.(meta_arch|backbone|roi_heads|proposal_generator)\.[\w.]*\.[A-Z]\w*$"
    r"|diffusers\.([\w.]+\.)?\w*ModelMixin$|diffusers\.models\.([\w.]+\.)?[A-Z]\w*(?<!Output)(?<!Mixin)$"
    r"|tensordict\.nn\.[\w.]*Module\w*$"
    # Hugging Face modeling files: `BertEncoder`, `BertEmbeddings` (mmf's TorchScript-friendly subclasses)
    r"|transformers\.(models\.\w+\.)?modeling_\w+\.[A-Z]\w*(?<!Output)(?<!Config)(?<!Mixin)$"
    r"|classy_vision\.(losses|models|heads)\.([\w.]+\.)?Classy(Loss|Model|Head)$"  # VISSL's bases
    r"|ema_pytorch\.(EMA|PostHocEMA|KarrasEMA)$"  # lucidrains' EMA wrappers: modules that hold a copy of the model
    r"|mmcv\.cnn\.([\w.]+\.)?[A-Z]\w*$"  # mmcv's bricks: ConvModule, Scale, NonLocal2d, ...
    # TensorLy-Torch's tensors and layers are modules: `FactorizedTensor.new(shape, rank=...)` (neural operators)
    r"|tltorch\.([\w.]+\.)?(Factorized|Tensorized)\w*(\.(new|from_tensor|from_matrix|from_layer|from_embedding))?$"
    # fairseq's model bases (Graphormer's `Graphormer3D(BaseFairseqModel)`): nn.Modules
    r"|fairseq\.models\.([\w.]+\.)?(BaseFairseqModel|Fairseq\w*(Model|Encoder|Decoder))$"
    # compressai's entropy models and latent codecs (`EntropyBottleneckLatentCodec`): nn.Modules with parameters
    r"|compressai\.(latent_codecs|entropy_models|layers)\.([\w.]+\.)?[A-Z]\w*$"
    # torchdrug's tasks, models and layers (NBFNet's `KnowledgeGraphCompletionExt(tasks.KnowledgeGraphCompletion)`)
    r"|torchdrug\.(tasks|models|layers)\.([\w.]+\.)?[A-Z]\w*$"
)
# Library classes named like layers that are no nn.Module: DGL's distributed and sparse node embeddings
# live outside the module tree and are trained by their own sparse optimizers.
_NOT_A_MODULE = re.compile(r"dgl\.(distributed\.\w+|nn\.(pytorch\.)?(sparse_emb\.)?NodeEmbedding)$")
_LAYER_NAME = re.compile(r"(^|_)(layer|block|module|encoder_layer|decoder_layer|head|model)$", re.I)


def _returns_module_annotation(facts: FileFacts, fn: FunctionInfo) -> bool:
    """`def build(...) -> nn.Module:` (or `-> nn.Sequential`): the helper says it returns a module."""
    returns = fn.node.returns if fn.node is not None else None
    q = facts.qualify(returns.annotation) if returns is not None else None
    return q in ("torch.nn.Module", "torch.nn.Sequential", "torch.nn.ModuleList", "torch.nn.modules.module.Module")


def _sides(value: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The values a conditional expression may give (itself, when it is none)."""
    if isinstance(value, cst.IfExp):
        return _sides(value.body) + _sides(value.orelse)
    return [value]


def _wrapped_value(fn: FunctionInfo, value: cst.BaseExpression, at: int | None = None) -> cst.BaseExpression:
    """`_named_value`, and inside a call of a local name its value too: `conv = nn.Conv1d(...)` ...
    `return spectral_norm(conv)` returns `spectral_norm(nn.Conv1d(...))`."""
    value = _named_value(fn, value, at)
    if isinstance(value, cst.Call) and value.args and isinstance(value.args[0].value, cst.Name):
        inner = _named_value(fn, value.args[0].value)
        if inner is not value.args[0].value:
            return value.with_changes(args=[value.args[0].with_changes(value=inner), *value.args[1:]])
    return value


def _named_value(fn: FunctionInfo, value: cst.BaseExpression, at: int | None = None) -> cst.BaseExpression:
    """`m = torch.nn.LSTM(...)` ... `return m`: the value a returned local name was given; of several, the
    last one given before `at` outside any `if` or loop (`block = [conv, ...]`, then `block =
    nn.Sequential(*block)`: GeneFace's discriminator blocks)."""
    if isinstance(value, cst.Name):
        given = [a for a in fn.assigns if a.targets == (value.value,) and a.value is not None]
        if len(given) == 1:
            return given[0].value
        before = [a for a in given if at is not None and a.context.order < at]
        if before and not before[-1].context.conditions and not before[-1].context.loops and not before[-1].augmented:
            return before[-1].value
    return value


def _param_defaults(facts, name: str) -> list[cst.BaseExpression]:
    """The default values of parameters called `name`, in the file's functions."""
    return [d for fn in facts.functions if name in fn.params and (d := default_of(fn, name)) is not None]


def _stateless_torch_class(q: str, node: cst.Call) -> bool:
    """A torch class constructed at `node` that holds no parameter, buffer or mode: an activation, pooling
    or padding layer, or an unweighted loss."""
    return _STATELESS_LAYER.match(q.rsplit(".", 1)[-1]) is not None or _unweighted_loss(q, node)


def _unweighted_loss(q: str, node: cst.Call) -> bool:
    """`nn.MSELoss()`, `nn.HuberLoss(delta=d)`: a torch loss with no `weight`/`pos_weight` buffer holds nothing
    (chgnet's `CombinedLoss` picks one by name)."""
    last = q.rsplit(".", 1)[-1]
    if not last.endswith("Loss") or any(a.keyword is not None and a.keyword.value in ("weight", "pos_weight") for a in node.args):
        return False
    return not (last in _WEIGHT_FIRST_LOSSES and any(a.keyword is None for a in node.args))


# torch losses whose first positional argument is a class-weight tensor (kept as a buffer)
_WEIGHT_FIRST_LOSSES = frozenset({"CrossEntropyLoss", "NLLLoss", "BCELoss", "BCEWithLogitsLoss", "MultiLabelSoftMarginLoss", "MultiMarginLoss"})


def _handed_in_class(a) -> list[cst.BaseExpression]:
    """`self.operator_block = operator_block` from `def __init__(self, ..., operator_block=FNOBlocks)`: the
    class the parameter defaults to."""
    if not isinstance(a.value, cst.Name) or a.value.value not in a.function.params:
        return []
    default = default_of(a.function, a.value.value)
    return _class_alternatives(default) if default is not None else []


def _class_alternatives(value: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The class names a variable may hold: `Block`, `nn.Conv2d`, either side of `A if c else B`."""
    if isinstance(value, cst.IfExp):
        return _class_alternatives(value.body) + _class_alternatives(value.orelse)
    if isinstance(value, cst.Call) and dotted_name(value.func) in ("partial", "functools.partial") and value.args:
        return _class_alternatives(value.args[0].value)  # DM-Font's `ConvBlk = partial(ConvBlock, norm=norm)`
    table = None  # `{"gat": GATLayer, "custom": CustomGATLayer}.get(kind, GATLayer)`, `{"a": A, "b": B}[kind]`
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value == "get":
        table, default = value.func.value, [value.args[1].value] if len(value.args) > 1 else []
    elif isinstance(value, cst.Subscript):
        table, default = value.value, []
    if isinstance(table, cst.Dict):
        entries = [e.value for e in table.elements if isinstance(e, cst.DictElement)] + default
        return [alt for entry in entries for alt in _class_alternatives(entry)]
    name = dotted_name(value)
    last = name.rsplit(".", 1)[-1] if name else ""
    # (`norm_f = weight_norm if use_spectral_norm == False else spectral_norm`: each returns the module it wraps)
    return [value] if last[:1].isupper() or last in _RETURNS_ITS_MODULE else []


# Frameworks that borrow PyTorch's idioms (Module, eval(), no_grad) but are not PyTorch.
OTHER_FRAMEWORKS = {
    "megengine", "paddle", "mindspore", "jittor", "oneflow", "tensorflow", "jax", "flax", "mxnet", "tinygrad", "keras",
    "chainer", "theano",
}

def unwrapped_either_way(value) -> str | None:
    """`self.encoder.module if params.multi_gpu else self.encoder`: the same model, wrapped or not."""
    if not isinstance(value, cst.IfExp):
        return None
    names = {(dotted_name(branch) or "").removesuffix(".module") for branch in (value.body, value.orelse)}
    return names.pop() if len(names) == 1 and "" not in names else None


# `self.scheduler(self.optimizer, i, epoch)`, `adjust_lr(optimizer, epoch)`: learning-rate helpers set
# `param_groups[...]["lr"]` and leave gradients alone.
_LR_HELPER = re.compile(r"sched|(^|_)lr($|_)|learning_rate|warmup", re.I)
_LOGGING_OBJECT = re.compile(r"(^|_)(logger|writer|tracker|recorder|monitor|wandb)s?$", re.I)
# `model.checkpoint(model_dir, optimizer)`, `save_checkpoint(model, optimizer, path)`: a checkpoint
# reads the optimizer's state (or loads it); it does not touch the parameters' gradients.
# (`saver.save_recovery(model, optimizer, args, epoch)`: timm's CheckpointSaver)
_CHECKPOINTING = re.compile(r"^(save|checkpoint|save_checkpoint|save_model|save_state|save_recovery|save_\w*checkpoint|load|load_checkpoint|load_model|restore)$", re.I)
# `get_state_dict(model, optimizer)` of torch.distributed.checkpoint (FSDP's sharded checkpoints) reads state
_STATE_ONLY_API = ("torch.distributed.checkpoint.",)
# `DCP.save(dict(model=model, optimizer=optimizer), ...)`: packing the optimizer into a container resets nothing
_CONTAINER_BUILTINS = frozenset({"dict", "list", "tuple", "set"})
_HARMLESS_CALLS = {
    "scale_loss",  # apex: `with amp.scale_loss(loss, optimizer) as scaled: scaled.backward()`
    "master_params",
    "unscale_",
    "update",
    "get_lr",
    "get_last_lr",
    "clip_grad_norm_",
    "clip_gradients",
    "clip_grad_value_",
    "print",
    "log",
    "info",
    "debug",
    "append",
    "add_scalar",
    "format",
    "len",
    "isinstance",
    "hasattr",
    "type",
    "id",
    "getattr",
    "state_dict",
    "parameters",
    "named_parameters",
    "str",
    "repr",
}


def _optimizer_targets(targets: tuple[str, ...]) -> tuple[str, ...]:
    """`optimizer, scheduler = load_optimizer(args, model)`: the scheduler beside it is no optimizer; nor is
    the model beside it in `model, optimizer, lr_scheduler = setup_model_and_optimizer(cfg)` (GPT-NeoX),
    when another target is named like an optimizer."""
    if len(targets) == 1:
        return targets
    kept = tuple(t for t in targets if not _NOT_OPTIMIZER.search(t.rsplit(".", 1)[-1]))
    named = tuple(t for t in kept if _OPTIMIZER_NAME.search(t.rsplit(".", 1)[-1]))
    return named or kept


def _grad_owners(nodes) -> set[str]:
    """Base names whose `.grad` is read (`p` for `lr * p.grad`); `autograd.grad(...)` is a call, not a read."""
    owners: set[str] = set()

    class _V(cst.CSTVisitor):
        def visit_Call(self, n: cst.Call) -> bool:
            if isinstance(n.func, cst.Attribute):
                n.func.value.visit(self)  # look inside `x.grad.clone()` but not at the called name itself
            for arg in n.args:
                arg.visit(self)
            return False

        def visit_Attribute(self, n: cst.Attribute) -> bool:
            if n.attr.value == "grad":
                d = dotted_name(n.value)
                if d:
                    owners.add(_base(d))
            return True

    for node in nodes:
        (node.value if isinstance(node, cst.Arg) else node).visit(_V())
    return owners


def _second_index(node: cst.Subscript) -> bool:
    """`pair[1]`."""
    return (len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index)
            and isinstance(node.slice[0].slice.value, cst.Integer) and node.slice[0].slice.value.value == "1")


def _element_of(call: CallInfo) -> str | None:
    """`optimizers[k].step()`: the container's name as element targets are written (`optimizers[]`)."""
    func = call.node.func
    if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Subscript):
        return _optimizer_written(func.value)
    return None


def _literal_key(call: CallInfo) -> str | None:
    """The string key of `state['optimizer'].step()`."""
    func = call.node.func
    sub = func.value if isinstance(func, cst.Attribute) else None
    if not isinstance(sub, cst.Subscript) or len(sub.slice) != 1 or not isinstance(sub.slice[0].slice, cst.Index):
        return None
    key = sub.slice[0].slice.value
    return key.evaluated_value if isinstance(key, cst.SimpleString) and isinstance(key.evaluated_value, str) else None


def _optimizer_written(node: cst.BaseExpression) -> str | None:
    """`opt` or `self.opt` as written; an element of a container as its targets are written, so that
    `self.scaler.step(self.optimizers[uid])` steps what `self.optimizers[uid].zero_grad()` resets."""
    if isinstance(node, cst.Subscript):
        base = dotted_name(node.value)
        return f"{base}[]" if base else None
    return dotted_name(node)


def _base(name: str) -> str:
    return name.split(".", 1)[0]


def _manual_update(a) -> bool:
    """`w -= lr * w.grad`, `p.data = p.data - lr * p.grad`: a hand-written optimizer step."""
    if a.value is None or len(a.targets) != 1 or ".grad" in a.targets[0]:
        return False  # (`delta.grad[zero] = torch.randn_like(...)` edits the gradient, not the parameter)
    if a.augmented in ("SubtractAssign", "AddAssign") or a.augmented is None:
        return _base(a.targets[0]) in _grad_owners([a.value])
    return False


def _outside_param_loop(a, loop) -> bool:
    """A manual step usually sits in `for p in model.parameters()` inside the training loop."""
    return a.context.loop is loop or (a.context.loop is not None and a.context.loop.parent is loop)


def resets_grad(a) -> bool:
    """`p.grad = None`, `p.grad = torch.zeros_like(p)`; not `logits.grad /= norm`, which scales what is there,
    nor `delta.grad = delta.grad.sign()`, which keeps its direction."""
    targets, value = a.targets, a.value
    return a.augmented is None and any(t.endswith(".grad") for t in targets) and (
        isinstance(value, cst.Name) and value.value == "None" or isinstance(value, cst.Call)
    ) and not (set(targets) & names_in(value)) and not _picked_by_name(a) and not _retained_activation(a)


def _retained_activation(a) -> bool:
    """`features.retain_grad()` then `features.grad = None` between backward calls: the gradient of an
    activation kept for inspection, not of a parameter the optimizer steps."""
    owners = {t.removesuffix(".grad") for t in a.targets if t.endswith(".grad")}
    return any(c.method == "retain_grad" and c.receiver in owners for c in a.function.calls)


def _picked_by_name(a) -> bool:
    """`for name, p in model.named_parameters(): if "prototypes" in name: p.grad = None`: some
    parameters are frozen for a while; the others' gradients are not reset."""
    loop = a.context.loop
    owners = {_base(t) for t in a.targets if t.endswith(".grad")}
    others = set(loop.targets) - owners if loop is not None else set()
    if bool(others) and any(others & names_in(test) for test in a.context.conditions):
        return True
    # `if p.grad is not None and p.grad.sum() == 0: p.grad = None`: only the gradients that are all zero
    read = {n for test in a.context.conditions for n in names_in(test)}
    return any(n.startswith(f"{owner}.grad.") for owner in owners for n in read)


def _substitute(name: str | None, subst: dict[str, str]) -> str | None:
    if name is None or not subst:
        return name
    head, dot, rest = name.partition(".")
    if head in subst:
        return subst[head] + (dot + rest if dot else "")
    return name


def _bind(fn: FunctionInfo, call: CallInfo, subst: dict[str, str], training: TrainingFacts) -> dict[str, str]:
    """Map the callee's parameter names to the caller's argument names."""
    params = [p for p in fn.params if p not in ("self", "cls")]
    binding: dict[str, str] = {}
    positional = [a for a in call.node.args if a.keyword is None and not a.star]
    for param, arg in zip(params, positional):
        name = training.canonical(dotted_name(arg.value), call.function)
        if name:
            binding[param] = _substitute(name, subst) or name
    for arg in call.node.args:
        if arg.keyword is not None and arg.keyword.value in params:
            name = training.canonical(dotted_name(arg.value), call.function)
            if name:
                binding[arg.keyword.value] = _substitute(name, subst) or name
    return binding


def _passed_callables(call: CallInfo) -> list[cst.Name]:
    """Names a call hands on that may be called back: `opt.step(closure)`, and the functions in an
    options dict, `opt.step(options={"closure": closure})` or `options = {...}; opt.step(options)`
    (PyTorch-LBFGS' FullBatchLBFGS takes its closure that way)."""
    names: list[cst.Name] = []
    for arg in call.node.args:
        value = arg.value
        if isinstance(value, cst.Name):
            names.append(value)
            bound = _dict_bound_to(value.value, call)
            if bound is not None:
                value = bound
        if isinstance(value, cst.Dict):
            names.extend(e.value for e in value.elements if isinstance(e, cst.DictElement) and isinstance(e.value, cst.Name))
    return names


def _dict_bound_to(name: str, call: CallInfo) -> cst.Dict | None:
    """The dict literal last assigned to `name` before `call` in the same function."""
    bound = None
    for a in call.function.assigns:
        if a.targets == (name,) and a.context.order < call.context.order and a.augmented is None:
            bound = a.value if isinstance(a.value, cst.Dict) else None
    return bound


_HOOK_METHOD = re.compile(r"^on_\w+$")  # `on_step_end`, `on_train_batch_end`: a callback's hook


def resets_nothing(fn, depth: int = 0) -> bool:
    """The function neither resets nor steps anything, nor writes a `.grad`; nor do the methods of its own
    class it calls (`self.step()` of mini_trainer's `MultiLogger.consume` counts the logger's own steps)."""
    for c in fn.calls:
        own = fn.cls.methods.get(c.method) if fn.cls is not None and c.receiver == "self" and c.method else None
        if own is not None and own is not fn:
            if depth >= 3 or not resets_nothing(own, depth + 1):
                return False
        elif c.method in ("zero_grad", "zero_", "step") and not (
            c.method == "step" and _LR_HELPER.search(c.receiver or _element_of(c) or "")
        ):  # (`self.scheduler[0].step(n)` in GeneFace's `on_after_optimization` sets a learning rate)
            return False
    return not any(t.endswith(".grad") for a in fn.assigns for t in a.targets)
