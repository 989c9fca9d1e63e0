"""TD006: an evaluation pass that runs the model with gradients enabled."""

from __future__ import annotations

import re

import libcst as cst

from torchdoctor.decorators import is_no_grad_name
from torchdoctor.evaluation import EVAL_TRIGGERS, repeats_one_input, walks_data
from torchdoctor.facts import LoopInfo, calls_within, is_test_module, names_in
from torchdoctor.rule import Rule


_SERVING = re.compile(
    r"^(_?(inference|infer|predict|predict_\w+|inference_\w+|handle|serve|forward_inference)|(compute|get|make)_predictions?|run_inference)$"
)


class EvalWithoutNoGrad(Rule):
    code = "TD006"
    name = "eval-without-no-grad"
    severity = "warning"
    summary = "An evaluation pass runs the model with gradients enabled, building graphs nobody uses"
    rationale = """
        Outside `torch.no_grad()`/`torch.inference_mode()`, every forward pass records
        an autograd graph and keeps the activations it needs for a backward that never
        comes. An evaluation loop then uses several times the memory of inference
        (often the cause of an out-of-memory error that only happens at validation)
        and runs slower. `model.eval()` does not turn gradients off.
    """
    bad = """
        import torch

        def validate(model, loader, criterion):
            model.eval()
            total = 0.0
            for x, y in loader:
                total += criterion(model(x), y).item()  # expect: TD006
            return total / len(loader)
    """
    good = """
        import torch

        @torch.inference_mode()
        def validate(model, loader, criterion):
            model.eval()
            total = 0.0
            for x, y in loader:
                total += criterion(model(x), y).item()
            return total / len(loader)

        def test(model, loader):
            model.eval()
            with torch.no_grad():
                return [model(x) for x in loader]
    """
    fix_hint = "Wrap the evaluation in `with torch.no_grad():` or decorate the function with `@torch.inference_mode()`."
    triggers = EVAL_TRIGGERS

    def check(self, ctx):
        evaluation = ctx.evaluation
        if any(c.method == "backward" for c in ctx.facts.calls):
            yield from self._predictions_after_training(ctx)
            yield from self._shared_runner_called_to_evaluate(ctx)
        switches_modes = any(c.method == "eval" for c in ctx.facts.calls)
        for eval_pass in evaluation.passes:
            if eval_pass.by_name and eval_pass.needs_grad:
                yield from self._predictions_beside_an_attack(ctx, eval_pass)
                continue
            if not eval_pass.by_name:
                continue
            serving = bool(_SERVING.search(eval_pass.function.name))
            for run in eval_pass.model_calls:
                helper = ctx.facts.resolve_function(run.call)
                # `_feature_extraction(loader)` loops itself; so does a diffusion sampler's forward, step by step
                batches_inside = helper is not None and bool(helper.loops) or evaluation.iterates_its_model(run.call)
                # `def test(): model.eval(); pred = model(data.x, data.edge_index)`: a full-graph evaluation
                switched = evaluation.switched_to_eval_here(run)
                batched = bool(run.call.context.loops) and not repeats_one_input(run.call) or (
                    id(run.call.node) in evaluation.loader_comprehension_calls(run.call.function)
                )
                per_batch = batched or batches_inside or switched or evaluation.called_per_batch_in_evaluation(
                    run.call.function
                ) or _handed_on_as_callback(ctx.facts, run.call.function)
                if not (per_batch or serving or _output_only_read_on_host(run.call)):
                    continue  # one call whose output may feed a caller's loss (PPO's evaluate_actions)
                if not per_batch and not switches_modes and _hands_back_graph(run.call):
                    # a library's `predict(x)` that returns the scores as tensors and leaves modes to its users
                    # (pytorch-ood's detectors): the caller may train on them
                    continue
                if (run.grad_off_inside or evaluation.grad_disabled_at(run.call) or evaluation.frozen_model(run)
                        or evaluation.forward_without_grad(run) or evaluation.forward_needs_grad(run)):
                    continue
                yield ctx.report(
                    run.call.node,
                    f"'{evaluation.as_written(run.model)}' runs in '{eval_pass.function.name}' with gradients enabled: "
                    f"{'every batch' if batched else 'each call'} builds an autograd graph and keeps its activations for a backward that never comes; "
                    "wrap it in `torch.no_grad()` or decorate the function with `@torch.inference_mode()`",
                )
                break


    @staticmethod
    def _predictions_after_training(ctx):
        """`for epoch ...: loss.backward(); optimizer.step()`, then `for snapshot in test_dataset:
        y_hat = model(...)` in the same function (a script's module level, a `test()` that trains
        first): the function trains, so it is no evaluation pass, but each batch of the test loop
        after its last training loop builds a graph nothing backpropagates through. (A single
        prediction to plot is one graph, once, and is left alone.)"""
        if is_test_module(ctx.facts):
            return
        evaluation, training = ctx.evaluation, ctx.training
        for fn in ctx.facts.functions:
            trains = {id(loop) for loop in fn.loops if {"backward", "step"} <= {e.kind for e in training.loop_events(loop)}}
            if not trains or any(is_no_grad_name(d) for d in fn.decorators):
                continue
            # the last training loop of each level: top-level, or inside an epoch loop (`for epoch ...: for batch in
            # train_loader: ...` then `model.eval(); for batch in val_loader: outputs = model(x)`)
            last_of_level: dict[int, LoopInfo] = {}
            for loop in fn.loops:
                if id(loop) in trains and (loop.parent is None or id(loop.parent) in trains):
                    key = id(loop.parent)
                    if key not in last_of_level or loop.order > last_of_level[key].order:
                        last_of_level[key] = loop
            lasts = [loop for loop in last_of_level.values() if not any(
                other is not loop and loop.encloses(other) for other in last_of_level.values())]  # the innermost levels
            if not lasts:
                continue
            feeding = _calls_feeding_gradients(fn)
            reported = False
            for last in lasts:
                if reported:
                    break
                reported = yield from EvalWithoutNoGrad._runs_after_the_training_loop(ctx, fn, last, feeding)

    @staticmethod
    def _runs_after_the_training_loop(ctx, fn, last, feeding):
        """The first run of a model that `last` trains, per batch of a later loop at the same level (its
        enclosing loops, if any, enclose `last` too), with gradients on and feeding no backward: reported,
        and True returned."""
        evaluation = ctx.evaluation
        trained_models = {c.dotted for c in last.calls if id(c.node) in feeding and evaluation.is_model_call(c)}
        # (`ddp_model = DDP(model)` trains; the validation runs `model`, the module it wraps)
        trained_models |= {evaluation.wrapped_module(m, fn, last.order) for m in trained_models if m} - {None}
        for call in fn.calls:
            if call.dotted not in trained_models or call.context.order <= last.order or last in call.context.loops:
                continue
            later = [loop for loop in call.context.loops if not loop.encloses(last)]
            # (`valid_loss = sum(loss_func(model(xb), yb) for xb, yb in valid_dl)`: a pass over a loader too)
            over_loader = id(call.node) in evaluation.loader_comprehension_calls(fn)
            if not (later or over_loader) or any(loop.order < last.order for loop in later):
                continue  # (one prediction, or inside an outer loop that holds the training loop)
            if later and last.parent is not None and not walks_data(later[0]):
                continue  # (inside the epoch loop, `for idx in range(n_classes)`: a few samples to save, not a pass over data)
            if repeats_one_input(call) or evaluation.grad_disabled_at(call) or id(call.node) in feeding:
                continue
            if any(evaluation.dummy_input(a.value, fn) for a in call.node.args if a.keyword is None):
                continue  # samples from noise
            yield ctx.report(
                call.node,
                f"'{call.dotted}' runs in a loop after the training loop of '{fn.name}' with gradients "
                "enabled: every batch builds an autograd graph no backward uses; wrap the evaluation in "
                "`torch.no_grad()`",
            )
            return True
        return False

    @staticmethod
    def _shared_runner_called_to_evaluate(ctx):
        """`def run(epoch, loader, partition)` trains only under `if partition == "train":` and evaluates
        otherwise; a call of this file that rules the training branches out (`run(0, loaders["test"],
        partition="test")`) without no_grad runs the model on every batch with gradients on, for nothing
        (LorentzNet's test, whose `with torch.no_grad():` was written for the validation call only)."""
        if is_test_module(ctx.facts):
            return
        evaluation = ctx.evaluation
        for fn, runs, updates, site in evaluation.shared_runners_called_to_evaluate:
            runs = [c for c in runs if not _grad_set_around(c)]
            if any(is_no_grad_name(d) for d in fn.decorators) or not runs or any(_grad_set_around(c) for c in updates):
                continue
            if not evaluation.grad_disabled_at(site):
                yield ctx.report(
                    site.node,
                    f"'{fn.name}' runs '{runs[0].dotted}' on every batch with gradients enabled here, though this call "
                    "skips its backward and step: each batch builds an autograd graph nobody uses; wrap the call "
                    "in `torch.no_grad()`",
                )

    @staticmethod
    def _predictions_beside_an_attack(ctx, eval_pass):
        """An adversarial evaluation needs gradients for its attack, not for the clean and adversarial
        predictions it scores: `clean_outputs = model(**inputs)` that feeds no backward, taken per batch
        with gradients on, builds a graph nobody uses (an FGM evaluation without its `no_grad` blocks)."""
        fn = eval_pass.function
        feeding = _calls_feeding_gradients(fn)
        for run in eval_pass.model_calls:
            call = run.call
            if call.dotted != run.model or not call.context.loops or id(call.node) in feeding:
                continue  # (only the model called directly per batch: a helper may run the attack itself)
            if run.grad_off_inside or ctx.evaluation.grad_disabled_at(call) or ctx.evaluation.frozen_model(run):
                continue
            yield ctx.report(
                call.node,
                f"'{run.model}' runs in '{fn.name}' with gradients enabled, and its output feeds no backward: "
                "every batch builds an autograd graph beside the attack's; wrap the prediction in `torch.no_grad()`",
            )
            return


def _grad_set_around(call) -> bool:
    """The call sits in `with torch.no_grad():` or `with torch.set_grad_enabled(...)`, or follows a
    `torch.set_grad_enabled(...)` in its function: gradients are chosen there."""
    if any(is_no_grad_name(w) or (w or "").endswith("set_grad_enabled") for w in call.context.withs):
        return True
    return any((c.qualname or "").endswith("set_grad_enabled") and c.context.order < call.context.order for c in call.function.calls)


def _calls_feeding_gradients(fn) -> set[int]:
    """Ids of the calls whose results flow into a `backward()` or `torch.autograd.grad(...)` of fn,
    through the assignments that can reach it (before it, or in a loop around it)."""
    feeding: set[int] = set()
    for c in fn.calls:
        if c.method == "backward" and isinstance(c.node.func, cst.Attribute):
            sink = c.node.func.value
        elif c.qualname in ("torch.autograd.grad", "torch.autograd.backward") and c.node.args:
            sink = c.node.args[0].value
        else:
            continue
        needed = names_in(sink)
        feeding.update(id(inner) for inner in calls_within(sink))
        # (a name the backward's own loop assigns before it is that assignment's: `outputs = model(x)` of the
        # validation loop after it, in the same epoch loop, never reaches the training loop's backward)
        inner = c.context.loops[-1] if c.context.loops else None
        killed = {t for a in fn.assigns if inner is not None and inner in a.context.loops
                  and a.context.order < c.context.order and not a.augmented for t in a.targets}
        reaching = [
            a for a in fn.assigns
            if a.value is not None and (a.context.order < c.context.order or set(a.context.loops) & set(c.context.loops))
            and (inner is None or inner in a.context.loops or not set(a.targets) <= killed)
        ]
        grown = True
        while grown:
            grown = False
            for a in reaching:
                if id(a.value) not in feeding and set(a.targets) & needed:
                    needed |= names_in(a.value)
                    feeding.add(id(a.value))
                    feeding.update(id(inner) for inner in calls_within(a.value))
                    grown = True
    return feeding


_TO_HOST = frozenset({"detach", "cpu", "numpy", "item", "tolist"})


def _handed_on_as_callback(facts, fn) -> bool:
    """fn itself is handed to another call: an evaluator that a search engine calls for every batch of
    positions (`fastchess.run_selfplay(eval_fn, ...)`). (Not a closure a builder returns: detectron2's
    `eval_wrapper` goes to `inference_on_dataset`, which runs it under no_grad.)"""
    name = fn.name
    return any(
        c.dotted != name and any(isinstance(a.value, cst.Name) and a.value.value == name for a in c.node.args)
        for c in facts.calls
    )


_DETACHING = _TO_HOST - {"cpu"}  # (`.cpu()` alone keeps the graph: it is differentiable)


def _output_only_read_on_host(call) -> bool:
    """`sr = evaluator(net)` then only `sr.cpu().detach().numpy()`: every read of the output cuts it off
    the graph, so the graph the call builds is waste whoever called the pass (a pansharpening test that
    fuses the whole test image in one call)."""
    fn = call.function
    assigned = next((a for a in fn.assigns if a.value is not None and _under_carrying_chain(a.value) is call.node), None)
    if assigned is None or len(assigned.targets) != 1 or not assigned.targets[0].isidentifier() or fn.node is None:
        return False
    target = assigned.targets[0]
    detached: set[int] = set()
    for c in fn.calls:
        func = c.node.func
        if not (isinstance(func, cst.Attribute) and func.attr.value in _DETACHING):
            continue
        base = _under_carrying_chain(func.value)
        if isinstance(base, cst.Attribute) and base.attr.value == "data":
            base = base.value
        if isinstance(base, cst.Name) and base.value == target:
            detached.add(id(base))
    reads: list[cst.Name] = []

    class _Reads(cst.CSTVisitor):
        """The reads of the output, from its assignment to the next one (`sr = sr.cpu().detach().numpy()`
        reads it, then names something else)."""
        started = stopped = False

        def visit_Assign(self, node: cst.Assign) -> bool:
            if node is assigned.node:
                self.started = True
                return False
            rebinds = any(isinstance(t.target, cst.Name) and t.target.value == target for t in node.targets)
            if self.started and rebinds and not self.stopped:
                node.value.visit(self)
                self.stopped = True
                return False
            return True

        def visit_Name(self, node: cst.Name) -> None:
            if node.value == target and self.started and not self.stopped:
                reads.append(node)

    fn.node.body.visit(_Reads())
    return bool(reads) and all(id(r) in detached for r in reads)


# tensor methods whose result carries the graph on (IQ-Learn's `q.squeeze(0).cpu().numpy()`)
_CARRYING = {"cpu", "detach", "squeeze", "unsqueeze", "view", "reshape", "flatten", "float", "double", "half", "t",
             "permute", "transpose", "contiguous", "clone"}


def _under_carrying_chain(node: cst.BaseExpression) -> cst.BaseExpression:
    """What a chain of shaping and moving calls starts from: `out` in `out.squeeze(0).cpu()`."""
    while isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in _CARRYING:
        node = node.func.value
    return node


def _hands_back_graph(call) -> bool:
    """The function returns the model's output as a tensor, not detached or taken to the host
    (pytorch-ood's `return self.score(self.model(x), t=self.t)`): its caller may backpropagate through it
    (outlier-exposure training scores its logits the same way), so the graph is not known to be waste.
    Asked only in files that switch no model to eval: serving code that does is inference."""
    fn = call.function
    assigned = {t for a in fn.assigns if a.value is not None and any(c is call.node for c in calls_within(a.value)) for t in a.targets}
    for ret, _ in fn.returns:
        if ret.value is None:
            continue
        returned_calls = calls_within(ret.value)
        carried = any(c is call.node for c in returned_calls) or bool(assigned & names_in(ret.value))
        to_host = any(isinstance(c.func, cst.Attribute) and c.func.attr.value in _TO_HOST for c in returned_calls)
        if carried and not to_host:
            return True
    return False
