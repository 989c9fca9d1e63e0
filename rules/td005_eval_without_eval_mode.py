"""TD005: an evaluation pass that runs the model while it may still be in training mode."""

from __future__ import annotations

import re

from torchdoctor.evaluation import EVAL_TRIGGERS
from torchdoctor.facts import dotted_name, within
from torchdoctor.mode_methods import (
    eval_override_children,
    eval_switches_nothing,
    forgotten_by_eval_method,
    lightning_eval_hook_switches_nothing,
    lightning_runs_left_training,
)
from torchdoctor.rule import Rule


# `# Do not set .eval()`, `# no model.eval() here: dropout is the noise`: the author chose training mode
_TRAINING_MODE_KEPT = re.compile(r"#.*(?:\b(?:do not|don't|dont|not|no|never|without|skip)\b.*\beval\b|\beval\b.*\bnot\b)", re.IGNORECASE)


def _kept_training_on_purpose(ctx, fn) -> bool:
    """A comment in the evaluating function says it leaves the model in training mode on purpose
    (pix2pix keeps its Dropout on as noise at test time)."""
    return fn.node is not None and any(
        _TRAINING_MODE_KEPT.search(line) and "forget" not in line.lower()  # (not `# do not forget model.eval()`)
        for line in ctx.code(fn.node).splitlines() if "#" in line
    )


class EvalWithoutEvalMode(Rule):
    code = "TD005"
    name = "eval-without-eval-mode"
    severity = "error"
    summary = "An evaluation pass runs the model without model.eval(): Dropout and BatchNorm act as in training"
    rationale = """
        `model.eval()` switches Dropout off, makes BatchNorm use its running
        statistics and stops spectral norm's power iteration. Without it,
        validation accuracy is noisy and too low, BatchNorm's running statistics
        (and spectral norm's `u` vectors) are updated from validation data, and a
        checkpoint chosen on that metric is the wrong one. `torch.no_grad()` does not change the mode:
        it only stops graph building. A model comes out of its constructor in training
        mode, and every `model.train()` in the training loop puts it back there.
    """
    bad = """
        import torch

        def evaluate(model, loader):
            correct = 0
            with torch.no_grad():
                for x, y in loader:
                    correct += (model(x).argmax(1) == y).sum().item()  # expect: TD005
            return correct / len(loader.dataset)

        def fit(model, train_loader, val_loader, opt, epochs):
            for epoch in range(epochs):
                model.train()
                for x, y in train_loader:
                    opt.zero_grad()
                    torch.nn.functional.cross_entropy(model(x), y).backward()
                    opt.step()
                print(evaluate(model, val_loader))
    """
    good = """
        import torch

        @torch.no_grad()
        def evaluate(model, loader):
            model.eval()
            correct = 0
            for x, y in loader:
                correct += (model(x).argmax(1) == y).sum().item()
            return correct / len(loader.dataset)

        def fit(model, train_loader, val_loader, opt, epochs):
            for epoch in range(epochs):
                model.train()
                for x, y in train_loader:
                    opt.zero_grad()
                    torch.nn.functional.cross_entropy(model(x), y).backward()
                    opt.step()
                print(evaluate(model, val_loader))
    """
    fix_hint = "Call `model.eval()` before the evaluation pass and `model.train()` before training resumes."
    triggers = EVAL_TRIGGERS

    def check(self, ctx):
        evaluation = ctx.evaluation
        found_in_class: set[tuple[int, str]] = set()  # (class, model) pairs reported at their runs
        found_names: set[str] = set()  # the last name of every model reported (`model.net_G` run by a script)
        for eval_pass in evaluation.passes:
            reported = set()
            for run in eval_pass.model_calls:
                call = run.call
                model = ctx.training.canonical(run.model, call.function) or run.model
                # (one finding per call: `self.forward(batch)` may run several models left training)
                if not run.has_modes or model in reported or id(call.node) in reported or evaluation.eval_mode_set_before(model, call):
                    continue
                if not evaluation.may_change_with_mode(call, run.model):
                    continue  # no Dropout, BatchNorm or self.training in the model: the mode changes nothing
                if _kept_training_on_purpose(ctx, call.function):
                    continue
                reported.update((model, id(call.node)))
                owner = call.function.self_class()
                if owner is not None:
                    found_in_class.add((id(owner), model))
                found_names.add(model.rsplit(".", 1)[-1])
                where = f"'{eval_pass.function.name}'" if eval_pass.by_name else "this no_grad evaluation loop"
                undone = evaluation.switched_back_by(model, call)
                if undone is not None:
                    yield ctx.report(
                        call.node,
                        f"'{run.model}' runs in {where} in training mode: `{ctx.code(undone.node)}` switches it back "
                        f"with `.train()` after its `.eval()`, so Dropout, BatchNorm and spectral norm act as in training; "
                        f"switch it to eval after that call",
                    )
                    continue
                left = evaluation.networks_left_training(call) if call.receiver == run.model else None
                if left:  # a plain object has no `.eval()`: name the networks it runs
                    nets = [f"{model}.{net[5:]}" for net in left if net.startswith("self.")] or [model]
                    yield ctx.report(
                        call.node,
                        f"'{run.model}' runs {', '.join(f'{n!r}' for n in nets)} in {where} in training mode: its "
                        f"class never switches {'it' if len(nets) == 1 else 'them'} to eval, so Dropout, BatchNorm and "
                        f"spectral norm act as in training; call `{nets[0]}.eval()` first",
                    )
                    continue
                shown, model = evaluation.as_written(run.model), evaluation.as_written(model)
                yield ctx.report(
                    call.node,
                    f"'{shown}' runs in {where} without `{model}.eval()` on the way, so Dropout, BatchNorm and "
                    f"spectral norm act as in training; call `{model}.eval()` first (and `.train()` after)",
                )
        yield from self._check_mode_methods(ctx, found_in_class, found_names)
        yield from self._shared_runner_called_to_evaluate(ctx)
        yield from self._beside_switching_methods(ctx, found_in_class)

    @staticmethod
    def _beside_switching_methods(ctx, found_in_class):
        """A plain class's evaluation method that runs a network a sibling method switches to eval, without
        switching it itself (randomized smoothing's `Smooth.predict()` beside `certify()`)."""
        for cls in ctx.facts.all_classes:
            if ctx.training.is_module_class(ctx.facts, cls):
                continue
            for method, run, sibling in ctx.evaluation.runs_beside_switching_methods(cls):
                if (id(cls), run.model) in found_in_class or not ctx.evaluation.may_change_with_mode(run.call, run.model):
                    continue
                found_in_class.add((id(cls), run.model))
                yield ctx.report(
                    run.call.node,
                    f"'{run.model}' runs in `{cls.name}.{method.name}()` without `{run.model}.eval()`, though "
                    f"`{sibling.name}()` switches it to eval: called on a model in training mode (a fresh one, or one "
                    f"just trained), Dropout and BatchNorm act as in training; call `{run.model}.eval()` first",
                )

    @staticmethod
    def _shared_runner_called_to_evaluate(ctx):
        """`train_or_eval_model(model, loss_fn, valid_loader, epoch)`: a call that rules out the training
        branches of a shared loop is an evaluation; it needs the model in eval mode on its path, switched
        inside (`else: model.eval()`) or before the call (DialogueRNN's loop, its `model.eval()` gone, runs
        validation right after the training call left the model training)."""
        evaluation, flow = ctx.evaluation, ctx.dataflow
        for fn, runs, updates, site in evaluation.shared_runners_called_to_evaluate:
            # (each network the loop runs, in order: LBC's frozen teacher, switched to eval once before
            # training, runs first; the student after it is the one left training. A network whose mode the
            # function sets itself ends the search: the function handles modes)
            left = None
            for r in runs:
                left = _left_training(ctx, fn, r, site)
                if left is not None:
                    break
            if left is None or left == _SWITCHED_INSIDE:
                continue
            model, name = left
            yield ctx.report(
                site.node,
                f"'{fn.name}' runs '{model}' on every batch in training mode here: this call skips its backward "
                f"and step, but nothing switches '{name}' to eval on its path, so Dropout and BatchNorm act as in "
                f"training; call `{name}.eval()` before it (or in the function's evaluation branch)",
            )

    @staticmethod
    def _check_mode_methods(ctx, found_in_class, found_names):
        """A wrapper's own `eval()` that forgets a network its `train()` switches (AttGAN's `self.G`),
        unless a run of that network in the class was reported already."""
        for cls in ctx.facts.all_classes:
            for left in lightning_runs_left_training(cls):
                if not ctx.evaluation.lightning_hook(left.hook) or not ctx.evaluation.may_change_with_mode(left.run, left.network):
                    continue
                when = "from the second batch on" if left.hook.name.endswith("_step") else "once the step has run"
                yield ctx.report(
                    left.run.node,
                    f"'{left.network}' runs in `{cls.name}.{left.hook.name}()` in training mode {when}: "
                    f"`{ctx.code(left.switched_back.node)}` in the step switches it back, and Lightning calls `eval()` "
                    f"only once per loop; call `{left.network}.eval()` at the start of the hook (or drop the `.train()`)",
                )
            for hook in lightning_eval_hook_switches_nothing(cls):
                stage = hook.name.removeprefix("on_").removesuffix("_model_eval")
                yield ctx.report(
                    hook.node.name,
                    f"`{cls.name}.{hook.name}()` replaces Lightning's hook without calling `self.eval()`: the "
                    f"{stage} loop runs the model with Dropout and BatchNorm as in training; call `self.eval()` "
                    f"(or `super().{hook.name}()`) in it",
                )
            if ctx.training.is_module_class(ctx.facts, cls):
                # nn.Module's own train()/eval() reach every submodule through super(); an override that
                # switches nothing replaces them
                empty = eval_switches_nothing(cls)
                # (a test double with no layer of its own, `def eval(self): return self`, changes nothing)
                if empty is not None and ctx.evaluation.modes.class_has_mode_layers(ctx.facts, cls):
                    yield ctx.report(
                        empty.node.name,
                        f"`{cls.name}.eval()` overrides nn.Module.eval() but switches no layer to eval mode: "
                        "`model.eval()` leaves Dropout and BatchNorm training; call `super().eval()` (or "
                        "`self.train(False)`) in it",
                    )
                override = eval_override_children(cls)
                if override is not None:
                    method, children = override
                    left = [attr for attr, built, fn in children if ctx.evaluation.modes.builds_mode_layer(ctx.facts, built, fn)]
                    if left:
                        names = ", ".join(f"'{attr}'" for attr in left)
                        yield ctx.report(
                            method.node.name,
                            f"`{cls.name}.eval()` overrides nn.Module.eval() and switches its children one by one, "
                            f"but not {names}: `model.eval()` leaves {'it' if len(left) == 1 else 'them'} with Dropout "
                            f"and BatchNorm training; call `super().eval()` (or `self.train(False)`) in it, or add "
                            f"`{left[0]}.eval()`",
                        )
                continue
            empty = eval_switches_nothing(cls)
            run = _run_with_modes(ctx, cls) if empty is not None else None
            if run is not None and run.dotted.rsplit(".", 1)[-1] not in found_names:
                yield ctx.report(
                    empty.node.name,
                    f"`{cls.name}.eval()` switches no network to eval mode, though the class runs '{run.dotted}': "
                    f"evaluation that calls `eval()` runs it with Dropout and BatchNorm as in training; add "
                    f"`{run.dotted}.eval()`",
                )
                continue
            for switch in forgotten_by_eval_method(cls):
                if any((id(cls), r) in found_in_class for r in switch.forgotten):
                    continue
                missing = ", ".join(f"'{r}'" for r in switch.forgotten)
                first = switch.forgotten[0]
                yield ctx.report(
                    switch.eval_method.node.name,
                    f"`{cls.name}.{switch.eval_method.name}()` does not switch {missing} to eval mode, though "
                    f"`{switch.train_method.name}()` switches it to training mode: evaluation that calls "
                    f"`{switch.eval_method.name}()` runs it with Dropout and BatchNorm as in training; add `{first}.eval()`",
                )


_SWITCHED_INSIDE = "switched inside"
_LOSS_NAME = re.compile(r"(^|_)(criterion|loss|losses|loss_fn|criteria)(_\w+)?$")


def _left_training(ctx, fn, run, site):
    """(model, name at the call site) when a shared loop's run of a network handed in as a parameter may
    change with the mode and nothing switches it to eval on this call's path before the call;
    `_SWITCHED_INSIDE` when the function sets its mode itself on this call's path; None otherwise (not a
    parameter, a loss, no mode to change, or switched before the call)."""
    evaluation, flow = ctx.evaluation, ctx.dataflow
    model = run.dotted
    head = model.split(".", 1)[0]
    if head not in fn.params or _LOSS_NAME.search(head):
        return None
    if any(
        c.receiver and within(model, c.receiver) and (c.method == "eval" or c.method == "train" and c.node.args)
        and not flow.guard_rules_out(c, flow, site) for c in fn.calls
    ):
        return _SWITCHED_INSIDE  # (a mode set inside on this call's path: the function's own business)
    arg = flow.argument_for(fn, head, site)
    name = dotted_name(arg) if arg is not None else None
    if name is None or not evaluation.may_change_with_mode(run, model):
        return None
    if evaluation.eval_mode_set_before(name + model[len(head):], site):
        return None
    return model, name


def _run_with_modes(ctx, cls):
    """The first network the wrapper runs (`self.net_G(img_in1, img_in2)`) that may act differently in
    eval mode, or None."""
    for method in cls.methods.values():
        for call in method.calls:
            if (call.dotted or "").startswith("self.") and ctx.evaluation.is_model_call(call) and (
                ctx.evaluation.may_change_with_mode(call, call.dotted)
            ):
                return call
    return None
