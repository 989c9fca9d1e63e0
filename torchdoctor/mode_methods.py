"""A class's own pair of mode switches: `def train(self)` and `def eval(self)` on a trainer or a GAN
wrapper that holds several networks (AttGAN's `self.G`, `self.D`; d3rlpy's `Modules.set_train` and
`set_eval`). Evaluation code calls the wrapper's `eval()` and trusts it to switch every network that
`train()` switches; one it forgets runs the evaluation in training mode."""

from __future__ import annotations

import re
from dataclasses import dataclass

import libcst as cst

from torchdoctor.facts import ClassInfo, FunctionInfo, calls_on_super, dotted_name

# `eval`, `set_eval`, `eval_mode`, FullSubNet's `_set_models_to_eval_mode`: a switch, not an evaluation step
_MODE_METHOD = re.compile(r"^(set_|to_|set_to_|switch_to_)?(train|eval)(_mode)?$|_mode$")
_OPTIMIZER = re.compile(r"optim", re.I)


@dataclass(frozen=True)
class ForgottenSwitch:
    eval_method: FunctionInfo
    train_method: FunctionInfo
    forgotten: tuple[str, ...]  # receivers `train()` switches to training mode and `eval()` leaves there


def forgotten_by_eval_method(cls: ClassInfo) -> list[ForgottenSwitch]:
    """Each eval-named method of cls that switches fewer networks to eval mode than its train-named twin
    switches to training mode. A method that delegates to another method of the class (`self.train(False)`,
    `self._set_mode("eval")`) is not judged: what it switches is not written in it."""
    found = []
    if _OPTIMIZER.search(cls.name):
        return found  # schedule-free optimizers have train()/eval() too; they hold no Dropout or BatchNorm
    for name, method in cls.methods.items():
        if not _MODE_METHOD.search(name) or "eval" not in name:
            continue
        twin = cls.methods.get(name.replace("eval", "train"))
        if twin is None or _delegates(method) or _delegates(twin):
            continue
        to_train = _switched(twin, to_eval=False)
        to_eval = _switched(method, to_eval=True)
        # (a discriminator that only the backward steps run is never run by an evaluation)
        forgotten = tuple(r for r in to_train if r not in to_eval and not _run_only_to_train(cls, r))
        if to_train and forgotten:
            found.append(ForgottenSwitch(method, twin, forgotten))
    return found


def offers_mode_api(cls: ClassInfo) -> bool:
    """The class has mode switches of its own (`eval()`, `set_eval()`, `eval_mode()`): its callers use them."""
    return any(_MODE_METHOD.search(name) for name in cls.methods)


def _run_only_to_train(cls: ClassInfo, network: str) -> bool:
    """Every method of the class that runs the network backpropagates or steps (`backward_D`), or is
    called only by methods that do (`optimize_params` stepping the losses `backward_D` returns)."""
    methods = cls.methods.values()

    def trains(m: FunctionInfo) -> bool:
        return any(c.method in ("backward", "step") for c in m.calls)

    def callers(m: FunctionInfo) -> list[FunctionInfo]:
        return [o for o in methods if any(c.dotted == f"self.{m.name}" for c in o.calls)]

    running = [m for m in methods if any(c.dotted == network for c in m.calls) or _run_unwrapped(m, network)]
    return bool(running) and all(trains(m) or (callers(m) and all(trains(o) for o in callers(m))) for m in running)


def _run_unwrapped(method: FunctionInfo, network: str) -> bool:
    """`unwrap_model = self.accelerator.unwrap_model(self.G_Net)`, then `unwrap_model(input_imgs)`."""
    bound = {
        a.targets[0] for a in method.assigns
        if len(a.targets) == 1 and isinstance(a.value, cst.Call) and any(dotted_name(arg.value) == network for arg in a.value.args)
    }
    return bool(bound) and any(c.dotted in bound for c in method.calls)


def _switched(method: FunctionInfo, to_eval: bool) -> list[str]:
    """The receivers the method switches: `x.eval()` / `x.train(False)` to eval, `x.train()` /
    `x.train(True)` / `x.train(mode)` to training."""
    out: list[str] = []
    for call in method.calls:
        if not call.receiver or call.receiver in ("self", "super()") or call.method not in ("train", "eval"):
            continue
        if _OPTIMIZER.search(call.receiver.rsplit(".", 1)[-1]):
            continue
        if _to_eval(call) == to_eval and call.receiver not in out:
            out.append(call.receiver)
    return out


def _callable_bare(method: FunctionInfo) -> bool:
    """`def eval(self)`, or one whose other parameters all have defaults (pytorch-auto-drive's
    `def eval(self, profiling=False)`): what `model.eval()` calls in place of nn.Module's. One that needs
    arguments evaluates something else (rl4co's `baseline.eval(td, reward)`)."""
    params = method.node.params
    if not params.params or params.params[0].name.value != "self" or params.posonly_params:
        return False
    others = [*params.params[1:], *params.kwonly_params]
    return all(p.default is not None for p in others)


def _delegates(method: FunctionInfo) -> bool:
    return any(
        call.receiver in ("self", "super()") or (call.dotted or "").startswith("super().")
        for call in method.calls
    )


def eval_switches_nothing(cls: ClassInfo) -> FunctionInfo | None:
    """A class's own `def eval(self)` that switches nothing: on an nn.Module (deep-image-prior's ResNet,
    had its `self.model.eval()` gone) it replaces nn.Module.eval(), so `model.eval()` leaves every layer
    training; on a wrapper (BIT's `CDEvaluator`) it is all that evaluation code calls to switch the
    networks the wrapper runs. Only a plain `eval(self)` that calls nothing but `print`: one that takes arguments
    evaluates something else (rl4co's `baseline.eval(td, reward)`), and one that calls anything may
    switch the layers another way (salina's remote agent messages its worker process)."""
    method = cls.methods.get("eval")
    if method is None or method.node is None or not _callable_bare(method):
        return None
    if any(call.dotted != "print" for call in method.calls) or _raises(method):
        return None
    return method


def eval_override_children(cls: ClassInfo) -> tuple[FunctionInfo, list[tuple[str, cst.Call, FunctionInfo]]] | None:
    """A module's own `def eval(self)` that switches some children itself (MASTER's `self.encoder.eval()`,
    `self.decoder.eval()`, ...) and never calls `super().eval()` or `self.train(False)`: with the children
    `__init__` builds that it does not switch (attribute, construction, the method that builds it), for the
    caller to find those with mode layers. Containers built only of other children (`nn.Sequential(
    self.encoder, self.decoder)`) are left out: their parts are the children themselves."""
    method = cls.methods.get("eval")
    init = cls.methods.get("__init__")
    if method is None or init is None or method.node is None or not _callable_bare(method) or _delegates(method):
        return None
    switched = _switched(method, to_eval=True)
    if not switched or _raises(method):
        return None
    children = []
    builders = [cls.methods[c.method] for c in init.calls if c.receiver == "self" and c.method in cls.methods]
    for a in [a for m in (init, *builders) for a in m.assigns]:  # (MASTER's `self.build_model(...)`)
        value = a.value
        if len(a.targets) != 1 or not a.targets[0].startswith("self.") or a.targets[0].count(".") != 1:
            continue
        if not isinstance(value, cst.Call) or a.targets[0] in switched:
            continue
        parts = [arg.value for arg in value.args]
        if parts and all((dotted_name(p) or "").startswith("self.") for p in parts):
            continue  # `self.encode_stage = nn.Sequential(self.conv_embedding, self.encoder)`
        children.append((a.targets[0], _element_construction(value), a.function))
    return method, children


def _element_construction(value: cst.Call) -> cst.Call:
    """`nn.ModuleList([Block(d, p) for _ in range(n)])`: the block each element is; else the value."""
    args = value.args
    if (dotted_name(value.func) or "").rsplit(".", 1)[-1] in ("ModuleList", "Sequential") and len(args) == 1:
        inner = args[0].value
        if isinstance(inner, (cst.ListComp, cst.GeneratorExp)) and isinstance(inner.elt, cst.Call):
            return inner.elt
        if isinstance(inner, cst.List) and inner.elements and isinstance(inner.elements[0].value, cst.Call):
            return inner.elements[0].value
    return value


def _raises(method: FunctionInfo) -> bool:
    """`def eval(self): raise NotImplementedError` (a solver's unfinished mode): calling it fails loudly."""
    return any(
        isinstance(line, cst.SimpleStatementLine) and any(isinstance(s, cst.Raise) for s in line.body)
        for line in method.node.body.body
    )


# Lightning calls these to switch the model to eval mode before each validation/test/predict loop
LIGHTNING_EVAL_HOOKS = ("on_validation_model_eval", "on_test_model_eval", "on_predict_model_eval")


def lightning_eval_hook_switches_nothing(cls: ClassInfo) -> list[FunctionInfo]:
    """A LightningModule's override of `on_validation_model_eval` (or the test/predict twin) that never
    calls `self.eval()`, `self.train(False)`, `self.trainer.model.eval()` or the base hook: Lightning's
    own hook is what switches the model to eval mode, so the loop runs it in training mode (chemprop's
    override sets a few transforms back to `train()` after `self.eval()`; without that first call,
    every layer trains)."""
    found = []
    for name in LIGHTNING_EVAL_HOOKS:
        method = cls.methods.get(name)
        if method is None or method.node is None:
            continue
        switches = any(
            c.method == "eval" and (c.receiver == "self" or (c.receiver or "").endswith("trainer.model"))
            or c.method == "train" and c.receiver == "self" and bool(c.node.args)
            or c.method == name and calls_on_super(c.node)
            for c in method.calls
        )
        if not switches:
            found.append(method)
    return found


@dataclass(frozen=True)
class LeftTraining:
    hook: FunctionInfo
    run: object  # the CallInfo of the run
    network: str  # `self.G_net`
    switched_back: object  # the CallInfo of the step's `self.G_net.train()`


_LIGHTNING_STAGE_HOOK = re.compile(r"^(?:on_)?(validation|test)_(?:step|epoch_end|batch_end|batch_start)$")


def lightning_runs_left_training(cls: ClassInfo) -> list[LeftTraining]:
    """Runs of a network in a LightningModule's validation (or test) hooks after the stage's step switches
    that network back to training (`self.G_net.train()` at the end of `validation_step`, as a hand-written
    loop would). Lightning calls `eval()` once per loop, so from the second batch on, and in the epoch-end
    hook, the network runs in training mode unless the hook switches it to eval before the run."""
    found = []
    forward = cls.methods.get("forward")
    runs_of_forward = {c.dotted for c in forward.calls} if forward is not None else set()
    for stage in ("validation", "test"):
        step = cls.methods.get(f"{stage}_step")
        if step is None:
            continue
        back = {c.receiver: c for c in step.calls
                if c.method == "train" and not c.node.args and (c.receiver or "").startswith("self.")}
        if not back:
            continue
        for hook in cls.methods.values():
            match = _LIGHTNING_STAGE_HOOK.match(hook.name)
            if match is None or match.group(1) != stage:
                continue
            for run in hook.calls:
                if run.dotted in back:
                    networks = [run.dotted]
                elif run.dotted in ("self", "self.forward"):
                    networks = [n for n in back if n in runs_of_forward]
                else:
                    continue
                for network in networks:
                    if not _switched_to_eval_before(hook, network, run.context.order):
                        found.append(LeftTraining(hook, run, network, back[network]))
    return found


def _switched_to_eval_before(hook: FunctionInfo, network: str, order: int) -> bool:
    """The last switch of the network (or of the whole module) in the hook before `order` is to eval."""
    mode = None
    for c in hook.calls:
        if c.context.order >= order or c.receiver not in (network, "self"):
            continue
        if c.method == "train" or c.method == "eval" and not c.node.args:
            mode = "eval" if _to_eval(c) else "train"
    return mode == "eval"


def _to_eval(call) -> bool:
    """A `train`/`eval` call switches to eval mode: `x.eval()` or `x.train(False)`."""
    args = call.node.args
    return call.method == "eval" or bool(args) and isinstance(args[0].value, cst.Name) and args[0].value.value == "False"
