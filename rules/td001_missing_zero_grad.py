"""TD001: an optimizer stepped every iteration whose gradients are never reset."""

from __future__ import annotations

import re
from pathlib import Path

import libcst as cst

from torchdoctor.dataflow import is_none
from torchdoctor.facts import calls_within, dotted_name, ends_in_jump, exclusive_branches, is_test_module, names_in, within
from torchdoctor.rule import Rule
from torchdoctor.training import resets_grad, resets_nothing

_ZERO_GRAD_AS_VALUE = re.compile(r"\.zero_grad\b(?!\s*\()")


class MissingZeroGrad(Rule):
    code = "TD001"
    name = "missing-zero-grad"
    severity = "error"
    summary = "Gradients are never reset in a loop that calls backward() and optimizer.step()"
    rationale = """
        `loss.backward()` adds into `.grad`; it does not overwrite it. A loop that
        calls `backward()` and `optimizer.step()` every iteration without resetting
        gradients steps with the sum of every gradient so far: the effective learning
        rate grows each step and training diverges or stalls while looking normal.
        Deliberate gradient accumulation resets every k steps and is not flagged.
    """
    bad = """
        import torch

        def train(model, loader, epochs):
            opt = torch.optim.SGD(model.parameters(), lr=0.1)
            for epoch in range(epochs):
                for x, y in loader:
                    loss = torch.nn.functional.cross_entropy(model(x), y)
                    loss.backward()
                    opt.step()  # expect: TD001
    """
    good = """
        import torch

        def train(model, loader, epochs, accumulate=4):
            opt = torch.optim.SGD(model.parameters(), lr=0.1)
            for epoch in range(epochs):
                for i, (x, y) in enumerate(loader):
                    loss = torch.nn.functional.cross_entropy(model(x), y) / accumulate
                    loss.backward()
                    if (i + 1) % accumulate == 0:
                        opt.step()
                        opt.zero_grad(set_to_none=True)
    """
    fix_hint = "Call `optimizer.zero_grad()` once per iteration, before `backward()` (or right after `step()`)."
    triggers = ("backward",)

    def check(self, ctx):
        training = ctx.training
        if is_test_module(ctx.facts):
            return  # a unit test steps a throwaway model once to see its weights move
        if _ZERO_GRAD_AS_VALUE.search(ctx.facts.source) and _zero_grad_as_value(ctx.facts.module):
            return  # zero_grad handed around as a callback: resets we cannot place
        flagged: set[int] = set()
        for loop in ctx.facts.loops:
            if _warm_up_loop(loop):
                continue  # `for _ in range(2): model(input).backward(); optimizer.step()`: a memory or speed probe
            events = training.loop_events(loop)
            if not any(e.kind == "backward" for e in events):
                continue
            manual_reported = False
            for event in events:
                if event.kind != "step" or not event.direct or event.target is None:
                    continue
                if id(event.node) in flagged:
                    continue
                shown = event.target.replace("[]", "[...]")  # `optimizers[name].step()`: one of a dict's optimizers
                if self._reset_on_every_path(ctx.facts, training, loop, events, event):
                    if _stepped_again_without_reset(ctx.facts, training, loop, events, event):
                        flagged.add(id(event.node))
                        yield ctx.report(
                            event.node,
                            f"optimizer '{shown}' steps weights that another step of this iteration also updates, "
                            "with no reset between the two steps, so this step's gradients include the other "
                            f"backward's; call `{shown}.zero_grad()` before this step's backward",
                        )
                    continue
                if training.unknown_calls_taking(loop, event.target, event.node):
                    continue
                if _fresh_each_iteration(ctx.facts, training, loop, event.target):
                    continue
                if _steps_on_the_last_iteration(ctx.facts, loop, event):
                    continue
                flagged.add(id(event.node))
                if event.target == "<manual>":
                    if manual_reported:
                        continue  # one finding per loop for `w -= lr * w.grad; b -= lr * b.grad`
                    manual_reported = True
                    name = _tensor_left_unreset(loop, event)
                    if name is not None:
                        yield ctx.report(
                            event.node,
                            f"'{name}' is updated from its `.grad` every iteration, but unlike the other tensors its "
                            f"gradient is never reset in this loop, so it sums across steps; add `{name}.grad = None` "
                            "after the update",
                        )
                        continue
                    yield ctx.report(
                        event.node,
                        "parameters are updated from `.grad` every iteration but gradients are never reset in "
                        "this loop, so they sum across steps; zero them (`p.grad = None`) after each update",
                    )
                    continue
                info = ctx.facts.call_info(event.node) if isinstance(event.node, cst.Call) else None
                when = "in this loop" if info is not None and info.context.conditions else "every iteration"
                _, guard, served, sometimes = _counted_resets(ctx.facts, training, loop, events, event)  # (why the resets did not count)
                never = "never reset in this loop"
                if guard is not None:
                    never = f"reset only under `if {ctx.code(guard)}:`, which does not change within the loop"
                elif served is not None:
                    never = f"reset only for the step under `if {ctx.code(served)}:`"
                elif sometimes is not None:
                    never = f"reset only under `if {ctx.code(sometimes)}:`, which the step does not wait for"
                yield ctx.report(
                    event.node,
                    f"optimizer '{shown}' is stepped {when} but its gradients are "
                    f"{never}, so they sum across steps; call "
                    f"`{shown}.zero_grad()` after each step",
                )
        yield from self._step_methods_run_elsewhere(ctx, flagged)

    def _step_methods_run_elsewhere(self, ctx, flagged: set[int]):
        """CycleGAN's `optimize_parameters()`: a method that runs backward and steps once per call, with no
        loop of its own, run by a training loop in another file of the project (`for data in loader:
        model.set_input(data); model.optimize_parameters()`). With no reset in the method, nor in the
        loops that call it (nor in the methods they call on the model), gradients sum across iterations."""
        project, training = ctx.project, ctx.training
        if project is None:
            return
        for cls in ctx.facts.all_classes:
            for method in cls.methods.values():
                if method.loops and all(not training.over_optimizers(loop) for loop in method.loops):
                    continue  # a method with a loop of its own is judged by that loop
                if not any(c.method in ("backward", "step") for c in method.calls):
                    continue  # (neither here nor in what it calls first-hand: no need to follow its helpers)
                events = training.function_events(method)
                steps = [e for e in events if e.kind == "step" and e.direct and e.target and e.target != "<manual>"]
                if not steps or not any(e.kind == "backward" and e.direct for e in events):
                    continue
                resets = {e.target for e in events if e.kind == "reset"}
                steppers = {e.target for e in steps}
                left = [e for e in steps if id(e.node) not in flagged and not self._reset(training, e.target, resets, steppers)]
                if not left:
                    continue
                site = _run_each_iteration_elsewhere(ctx, cls, method)
                if site is None:
                    continue
                for event in left:
                    flagged.add(id(event.node))
                    shown = event.target.replace("[]", "[...]")
                    yield ctx.report(
                        event.node,
                        f"optimizer '{shown}' is stepped on every call of `{cls.name}.{method.name}()`, which "
                        f"{site} calls every iteration, but its gradients are never reset, so they sum across steps; "
                        f"call `{shown}.zero_grad()` before the backward",
                    )

    def _reset_on_every_path(self, facts, training, loop, events, step) -> bool:
        """Whether each backward that can reach this step meets a reset. A reset in the other branch
        of an `if` (the AMP path vs the fp32 path, or the accumulation path vs the plain one) does not
        count for the backward in this branch."""
        if step.target == "<manual>" and _tensor_left_unreset(loop, step) is not None:
            return False
        where = _event_branches(facts, loop, step)
        resets = _counted_resets(facts, training, loop, events, step)[0]
        backwards = [_event_branches(facts, loop, e) for e in events if e.kind == "backward"]
        backwards = [b for b in backwards if not exclusive_branches(b, where)] or [where]
        steppers = {e.target for e in events if e.kind == "step" and e.target}
        owned = _optimizers_owning_update(training, loop, step)
        return all(
            self._reset(training, step.target, {e.target for e, b in resets if not exclusive_branches(b, backward)}, steppers)
            or any(e.target in owned for e, b in resets if not exclusive_branches(b, backward))
            for backward in backwards
        )

    @staticmethod
    def _reset(training, optimizer: str, resets: set, steppers: frozenset | set = frozenset()) -> bool:
        """Whether this iteration resets what `optimizer` steps: its own zero_grad, its model's, or every .grad."""
        # (its own reset, or `self.optim.zero_grad()` on the wrapper whose `self.optim.optimizer` is stepped: omnivision)
        if "<grad>" in resets or "<all>" in resets or any(r and within(optimizer, r) for r in resets):
            return True
        # (or the inner optimizer of a stepped wrapper: SAINT+'s NoamOpt, `optimizer.optimizer.zero_grad()`
        # before `optimizer.step()`)
        if any(r and r.startswith(optimizer + ".") and _OPTIMIZER_WORD.search(r.rsplit(".", 1)[-1]) for r in resets):
            return True
        # (or a wrapper built over it by name: TNT's `self.optm_schedule = ScheduledOptim(self.optim, ...)`,
        # reset before `self.optim.step()`)
        if any(optimizer in training.optimizer_wrapped.get(r, ()) for r in resets if r):
            return True
        others = {r for r in resets if r and not training.is_optimizer(r)}  # model.zero_grad()
        if optimizer == "<manual>":
            return bool(others)
        tensors = training.optimizer_tensors.get(optimizer)
        if tensors:  # `RMSprop([x_bl])`: only a reset of those tensors (or of what holds them) counts
            return all(any(within(t, o) for o in others) for t in tensors)
        models = training.optimizer_models.get(optimizer)
        if not models:
            # cannot tell which model it optimizes: any model reset may be it, but `netG.zero_grad()` is
            # not `optimizerD`'s when `optimizerG` steps beside it (optimizers handed in by a GAN script)
            return any(not _named_for_another(optimizer, r, steppers) for r in others)
        if others and all(o.startswith("self.") for o in others):
            # `self.model.zero_grad()` in a trainer class stepping an optimizer handed in, built over
            # `model.classifier` by a script: names of two scopes say nothing of each other, so only
            # the class's own models are compared
            models = {m for m in models if m.startswith("self.")}
            if not models:
                return True
        # Every model the optimizer steps must be reset: both CycleGAN generators of one `Adam(chain(G_ab, G_ba))`
        # (SPGAN resetting one of them left the other's gradients to pile up), by their own `zero_grad()` or by
        # other optimizers that own them whole (infoGAN); not by a sparse optimizer's reset of two embedding
        # tables inside the model (DGL's GATNE)
        covered = {m for r in resets if r in training.optimizer_models for m in training.optimizer_models[r]}

        def reset(model: str) -> bool:
            return _covers(others, model) or any(within(model, o) for o in covered)

        if all(reset(m) for m in models):
            return True
        # (a name bound to optimizers of different models: the reset of every model of one of them is its own)
        choices = training.optimizer_model_choices.get(optimizer, [])
        return len(choices) > 1 and any(chosen and all(reset(m) for m in chosen) for chosen in choices)


_OPTIMIZER_WORD = re.compile(r"optimizer|optim|opt|solver", re.I)
_MODEL_WORD = re.compile(r"^(net|model)|(net|model)$", re.I)


def _run_each_iteration_elsewhere(ctx, cls, method) -> str | None:
    """Which call (`model.optimize_parameters()` in train.py) runs the method each iteration of a loop of
    another file, when every call of it in the project sits in such a loop and none of those loops resets
    gradients itself or through another method it calls on that object. None otherwise (or when this file
    calls it)."""
    if any(c.method == method.name for c in ctx.facts.calls):
        return None  # called here: the loops of this file say how
    sites = ctx.project.outside_callers(ctx.facts, method.name)
    if not sites:
        return None
    for facts, site in sites:
        loop = site.context.loop
        if loop is None or any(_resets_grad_in(c) for c in loop.calls) or any(resets_grad(a) for a in loop.assigns):
            return None
        for other in loop.calls:  # `model.set_input(data)`: none of the methods it may run resets
            if other.receiver == site.receiver and other.method not in (None, method.name):
                found = ctx.project.methods_named(ctx.facts, other.method)
                if any(not resets_nothing(m) for _, m in found):
                    return None
    facts, site = sites[0]
    return f"`{site.receiver}.{method.name}()` in {Path(facts.path).name}"


def _resets_grad_in(call) -> bool:
    return call.method in ("zero_grad", "zero_grads", "clear_grad", "clear_gradients")


def _role(name: str, word: re.Pattern) -> str:
    """`optimizerD` -> "d", `opt_gen` -> "gen", `netD` -> "d", `discriminator` -> "discriminator"."""
    return word.sub("", name.rsplit(".", 1)[-1]).replace("_", "").lower()


def _same_role(a: str, b: str) -> bool:
    return bool(a) and bool(b) and (a.startswith(b) or b.startswith(a))


def _named_for_another(optimizer: str, reset: str, steppers) -> bool:
    """`netG` resets the model of `optimizerG`, not of `optimizerD`: its role matches another optimizer
    stepped in the same loop and not this one."""
    mine, theirs = _role(optimizer, _OPTIMIZER_WORD), _role(reset, _MODEL_WORD)
    if not mine or not theirs or _same_role(mine, theirs):
        return False
    return any(o != optimizer and _same_role(_role(o, _OPTIMIZER_WORD), theirs) for o in steppers)


def _counted_resets(facts, training, loop, events, step) -> tuple:
    """(reset, its branches) for the resets that can cover `step`, with the tests that discounted others,
    for the message: the loop-invariant guard of a reset skipped for whole runs, the branch of a reset
    that serves a step of its own, and the test of a reset that runs on some iterations only."""
    where = _event_branches(facts, loop, step)
    resets = [(e, _event_branches(facts, loop, e)) for e in events if e.kind == "reset"]
    resets = [(e, b) for e, b in resets
              if not exclusive_branches(b, where) and not _opposite_sides_of_one_test(facts, loop, b, where)]
    everywhere = [b for _, b in resets]
    backwards = [_event_branches(facts, loop, e) for e in events if e.kind == "backward"]
    guard = served = sometimes = None
    counted = []
    for e, b in resets:
        if b and _models_used_only_within(facts, training, loop, step, b):
            counted.append((e, b))  # `if opt.adv: Dnet.zero_grad(); ...` where Dnet runs: no gradient otherwise
            continue
        test = _skipped_for_whole_runs(facts, loop, b, step, everywhere)
        if test is not None:
            guard = guard if guard is not None else test
        # `if torch.isnan(loss): optimizer.zero_grad(); continue`: a reset on a path that leaves the iteration
        elif any(x in facts.exiting_branches and x not in where for x in b):
            continue
        # `if i % d_reg_every == 0: D.zero_grad(); r1.backward(); d_optim.step()`: a reset that serves a
        # step of its own in a periodic branch leaves the unconditional step summing between visits
        elif _serves_own_step(facts, loop, events, e, b, step, where):
            served = served if served is not None else facts.if_tests.get(b[-1][0])
        elif (test := _reset_on_some_iterations(facts, loop, backwards, b, step, everywhere)) is not None:
            sometimes = sometimes if sometimes is not None else test
        else:
            counted.append((e, b))
    return counted, guard, served, sometimes


def _models_used_only_within(facts, training, loop, step, reset_at: tuple) -> bool:
    """Poison Ink's `if opt.adv: Dnet.zero_grad(); ... errD.backward()` with `optimizerD.step()` after the
    `if`: the discriminator runs only under that test (in the generator's adversarial term too, under a
    second `if opt.adv:`), which does not change within the loop; when it is false the discriminator has
    no gradient to sum, and when it is true it is reset."""
    models = training.optimizer_models.get(step.target or "")
    if not models:
        return False

    def key(place):
        test = facts.if_tests.get(place[0])
        return (facts.module.code_for_node(test), place[1]) if _unchanged_in_loop(loop, test, by_attribute=True) else None

    wanted = {key(place) for place in reset_at}
    if None in wanted:
        return False
    used = False
    for call in loop.calls:
        if not models & names_in(call.node):
            continue
        if not wanted <= {key(place) for place in call.context.branches}:
            return False
        used = True
    return used


def _opposite_sides_of_one_test(facts, loop, a: tuple, b: tuple) -> bool:
    """Two places on opposite sides of two `if`s with the same test, which does not change within the
    loop: the project-NN scripts reset under `if args.size_accumulate_grad > 1:` ... `else:` and step
    under a second `if args.size_accumulate_grad > 1:`, so the else-branch reset never serves that step."""
    for if_a, branch_a in a:
        test = facts.if_tests.get(if_a)
        if branch_a not in (0, 1) or not _unchanged_in_loop(loop, test):
            continue
        text = facts.module.code_for_node(test)
        for if_b, branch_b in b:
            other = facts.if_tests.get(if_b) if if_b != if_a and branch_b in (0, 1) and branch_b != branch_a else None
            if other is not None and facts.module.code_for_node(other) == text:
                return True
    return False


def _unchanged_in_loop(loop, test: cst.BaseExpression | None, by_attribute: bool = False) -> bool:
    """An `if` test that cannot change within the loop: no call, and no name the loop binds or assigns
    (`by_attribute`: `opt.batchSize = n` in the loop leaves `if opt.adv:` unchanged)."""
    if test is None or calls_within(test):
        return False
    if by_attribute:
        read = names_in(test)
        read = {n for n in read if not any(other.startswith(n + ".") for other in read)}
        assigned = set(loop.targets) | {t for a in loop.assigns for t in a.targets}
        return not any(n == t or n.startswith(t + ".") or t.startswith(n + ".") for n in read for t in assigned)
    varying = set(loop.targets) | {t.split(".", 1)[0] for a in loop.assigns for t in a.targets}
    return not {n.split(".", 1)[0] for n in names_in(test)} & varying


def _skipped_for_whole_runs(facts, loop, reset_at: tuple, step, all_resets: list) -> cst.BaseExpression | None:
    """StyleTTS2's `if epoch >= TMA_epoch: optimizer.zero_grad(); d_loss...` inside the batch loop, while the
    generator's `optimizer.step(...)` runs every iteration: the test does not change within the loop, so
    while it is false (whole epochs) nothing resets. (A test on the iteration, `if i % k == 0:`, is an
    accumulation window; an `else:` that resets too, or a conditional step, leaves the reset counted.)"""
    info = facts.call_info(step.site) if isinstance(step.site, cst.Call) else None
    if info is None or len(info.context.conditions) != loop.condition_depth or step.inner:
        return None  # (a step under a test of its own, in the loop or in a helper: minGPT's `if train:`)
    for if_id, branch in reset_at:
        test = facts.if_tests.get(if_id)
        if (if_id, branch) in info.context.branches or not _unchanged_in_loop(loop, test):
            continue
        if branch == 0 and _tests_existence_of(test, step.target):
            continue
        if not any((if_id, 1 - branch) in other for other in all_resets):
            return test
    return None


def _serves_own_step(facts, loop, events, reset, reset_at: tuple, step, step_at: tuple) -> bool:
    """The reset sits in an if-branch the step is not in, and that branch steps the same optimizer
    after it: a self-contained update (StyleGAN's lazy R1 regularisation), not the step's reset."""
    if not reset_at or reset_at[-1] in step_at:
        return False
    reset_info = facts.call_info(reset.site) if isinstance(reset.site, cst.Call) else None
    if reset_info is None:
        return False
    for other in events:
        if other.kind != "step" or other.target != step.target or other is step:
            continue
        info = facts.call_info(other.site) if isinstance(other.site, cst.Call) else None
        if info is not None and reset_at[-1] in info.context.branches and info.context.order > reset_info.context.order:
            return True
    return False


def _reset_on_some_iterations(facts, loop, backwards: list, reset_at: tuple, step, all_resets: list) -> cst.BaseExpression | None:
    """WGAN-GP's critic: `d_optimizer.step()` runs every iteration, while its model's only reset sits in
    the generator's `if step % n_critic == 0:` branch, so the critic's gradients sum between visits. (A
    step that waits for a test of its own is an accumulation window; a reset beside every backward it
    serves, `if torch.isfinite(loss): opt.zero_grad(); loss.backward()`, covers them; so does an `else:`
    that resets too.)"""
    info = facts.call_info(step.site) if isinstance(step.site, cst.Call) else None
    if info is None or len(info.context.conditions) != loop.condition_depth or step.inner or _skipped_before(loop, step.site):
        return None  # (`if self.do_adv: self.train_discriminator(...)`, resetting and stepping inside: a step that waits too)
    if isinstance(step.node, cst.Call) and any(
        a.keyword is not None and a.keyword.value in _STEP_FLAGS for a in step.node.args
    ):
        return None  # `loss_scaler(loss, optimizer, update_grad=(i + 1) % k == 0)`: the step waits for that test
    for if_id, branch in reset_at:
        test = facts.if_tests.get(if_id)
        if test is None or (if_id, branch) in info.context.branches:
            continue
        if branch == 0 and _tests_existence_of(test, step.target):
            continue
        if any((if_id, 1 - branch) in other for other in all_resets) or all((if_id, branch) in b for b in backwards):
            continue
        return test
    return None


def _tests_existence_of(test: cst.BaseExpression | None, optimizer: str | None) -> bool:
    """`if self.optimizer is not None:` (or `if self.optimizer:`) around the optimizer's own reset: the
    step would raise without it, so on every iteration that steps the test holds (a solver that builds
    its optimizer on the first batch resets there as it builds it)."""
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and isinstance(test.comparisons[0].operator, cst.IsNot):
        if not is_none(test.comparisons[0].comparator):
            return False
        test = test.left
    return optimizer is not None and dotted_name(test) == optimizer


_STEP_FLAGS = frozenset({"update_grad", "need_update", "update"})  # timm's NativeScaler: step only when true


def _skipped_before(loop, site: cst.CSTNode) -> bool:
    """mmf's accumulation: `if (idx + 1) % update_frequency: continue` ahead of `self._finish_update()`
    in the loop body, so the step waits for a test after all."""
    for statement in getattr(loop.node.body, "body", ()):
        if any(c is site for c in calls_within(statement)):
            return False
        if isinstance(statement, cst.If) and any(ends_in_jump(b) for b in (statement.body, statement.orelse) if b is not None):
            return True
    return False


def _steps_on_the_last_iteration(facts, loop, step) -> bool:
    """sheeprl's A2C: `is_accumulating = i < len(sampler) - 1` ... `if not is_accumulating: optimizer.step()`
    after `optimizer.zero_grad()` ahead of the loop: the loop sums one update's gradients over all its
    batches on purpose and steps once, at its last iteration."""
    info = facts.call_info(step.site) if isinstance(step.site, cst.Call) else None
    if info is None or not any(
        c.method == "zero_grad" and c.context.order < loop.order and not c.context.loops for c in loop.function.calls
    ):
        return False  # (with no reset ahead of the loop, the next pass sums onto this one's gradients)
    counters = set(loop.targets)
    for if_id, _ in info.context.branches:
        test = facts.if_tests.get(if_id)
        if test is None:
            continue
        tested = [test] + [a.value for a in loop.assigns if a.value is not None and set(a.targets) & names_in(test)]
        if any(_against_the_length(part, counters) for part in tested):
            return True
    return False


def _against_the_length(test: cst.BaseExpression, counters: set) -> bool:
    """`i < len(sampler) - 1`, `step == len(loader) - 1`: the loop counter compared with a `len(...)`."""
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return False
    sides = (test.left, test.comparisons[0].comparator)
    return bool(names_in(sides[0]) & counters or names_in(sides[1]) & counters) and any(
        dotted_name(c.func) == "len" for side in sides for c in calls_within(side)
    )


_PER_BATCH_HOOKS = frozenset({"training_step", "train_step", "train_batch", "optimize_parameters"})


def _warm_up_loop(loop) -> bool:
    """A loop over `range(k)` with k at most 3 (torchgpipe's memory benchmarks step twice on one fixed
    input to measure the peak): a probe of speed or memory, whose gradients train nothing. Not one
    nested in another loop: SimSwap's `for interval in range(2):` alternates D and G steps every
    training step; nor one in a per-batch hook: DGMR's `training_step` runs two discriminator steps per
    generator step with `for _ in range(2):`."""
    if loop.parent is not None or loop.function.name in _PER_BATCH_HOOKS:
        return False
    node = loop.node
    if not isinstance(node, cst.For) or not isinstance(node.iter, cst.Call) or dotted_name(node.iter.func) != "range":
        return False
    args = node.iter.args
    return len(args) == 1 and isinstance(args[0].value, cst.Integer) and int(args[0].value.value, 0) <= 3


def _fresh_each_iteration(facts, training, loop, optimizer: str) -> bool:
    """The optimizer and every model whose parameters it takes are built anew in each iteration (`cgen =
    CopyGenerator(**case)` ... `SGD(cgen.parameters(), 1).step()`): no gradient outlives the iteration.
    (REINFORCE's `optim.Adam(policy.parameters())` in the loop steps a policy made before it.)"""
    built = {}
    for a in facts.assigns:
        if loop in a.context.loops and len(a.targets) == 1 and a.value is not None:
            built.setdefault(a.targets[0], a.value)
    made = built.get(optimizer)
    if not isinstance(made, cst.Call) or not made.args:
        return False
    taken = made.args[0].value
    if isinstance(taken, (cst.List, cst.Tuple)) and taken.elements and all(
        isinstance(e.value, cst.Name) and _fresh_leaf(built.get(e.value.value), training) for e in taken.elements
    ):
        return True  # `x_in = latents.detach().clone()` ... `SGD([x_in], lr)`: a new leaf and optimizer each time
    owners, pending, seen = set(), [taken], set()
    while pending:  # follow `trainable = {n: p for n, p in cgen.named_parameters()}` back to `cgen`
        value = pending.pop()
        for call in calls_within(value):
            if isinstance(call.func, cst.Attribute) and call.func.attr.value in ("parameters", "named_parameters"):
                owners.add((dotted_name(call.func.value) or "?").split(".", 1)[0])
        for name in names_in(value):
            if "." not in name and name in built and name not in seen:
                seen.add(name)
                pending.append(built[name])
    return bool(owners) and all(o in built and training.constructs_module(built[o]) for o in owners)


def _fresh_leaf(value, training) -> bool:
    """`latents.detach().clone()`, `z.detach().requires_grad_()`, `torch.zeros(n, requires_grad=True)`: a
    tensor made afresh, with no gradient yet."""
    while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute):
        if value.func.attr.value in ("detach", "clone"):
            return True
        if value.func.attr.value not in ("requires_grad_", "to", "cuda", "float"):
            break
        value = value.func.value
    return value is not None and training.made_by_tensor_factory(value)


def _tensor_left_unreset(loop, step) -> str | None:
    """`W1 -= lr * W1.grad` in a loop that resets hand-made tensors one by one (`b1.grad = None`,
    `W2.grad = None`, ...) but never W1: its gradient sums across iterations. The tensor's name; known only
    when every reset in the loop names its tensor plainly (not `p.grad = None` over the parameters)."""
    updated = next((a.targets[0] for a in loop.assigns if a.node is step.node and len(a.targets) == 1), None)
    if updated is None or "." in updated or updated in loop.targets:
        return None
    inner_targets = {t for inner in loop.function.loops if loop.encloses(inner) for t in inner.targets}
    reset = set()
    for a in loop.assigns:  # (a loop's assignments include those of the loops inside it)
        for t in a.targets:
            if t.endswith(".grad") and a.augmented is None:
                owner = t[: -len(".grad")]
                if "." in owner or owner in inner_targets:
                    return None  # (`p.grad = None` for each parameter: resets we cannot name)
                reset.add(owner)
    if any(c.method == "zero_" or (c.method or "").startswith("zero_grad") for c in loop.calls):
        return None
    return updated if reset and updated not in reset else None


def _stepped_again_without_reset(facts, training, loop, events, step) -> bool:
    """GraspAgent's policy loop: `zero_grad(); loss_a.backward(); opt.step()`, then in the same iteration
    `loss_b.backward(); opt.step()` with no reset between the two steps (or the reset only between them):
    the later step's gradients still hold the earlier backward's. The same for two optimizers over one
    model's weights. Judged only for straight-line iterations, where every event runs every time, in
    source order."""
    if step.target == "<manual>":
        return False
    models = training.optimizer_models.get(step.target) or set()

    def same_weights(target) -> bool:
        # (ASSET's `optimizer_hat` and `optimizer_hat2`, both over `Vnet.parameters()`; not InfoGAN's `opt_info`
        # over the generator and the discriminator beside `opt_g` over the generator alone)
        return target == step.target or bool(models) and models == training.optimizer_models.get(target or "")

    if sum(e.kind == "step" and same_weights(e.target) for e in events) < 2:
        return False
    if any(not e.direct or _event_branches(facts, loop, e) for e in events):
        return False  # (an inner loop's events run many times per iteration: not a straight line)

    def at(index: int) -> tuple:
        context = _context_of(facts, loop, events[index].site)
        return (context.order if context is not None else -1, index)

    sequence = [events[i] for i in sorted(range(len(events)), key=at)]
    position = next(i for i, e in enumerate(sequence) if e is step)
    steppers = {e.target for e in events if e.kind == "step" and e.target}
    fed = False
    for back in range(1, len(sequence)):
        e = sequence[(position - back) % len(sequence)]
        if e.kind == "reset" and MissingZeroGrad._reset(training, step.target, {e.target}, steppers):
            return False
        if e.kind == "backward":
            fed = True
        if e.kind == "step" and same_weights(e.target):
            return fed
    return False


def _optimizers_owning_update(training, loop, step) -> set[str]:
    """`batch_pert.data = batch_pert.data - lr * batch_pert.grad.sign()` on one path and
    `batch_opt.step()` on the other, with `batch_opt = SGD([batch_pert])` reset each iteration: the
    optimizers built over the tensor a hand-written step updates, whose `zero_grad()` resets it."""
    if step.target != "<manual>":
        return set()
    updated = next((a.targets[0] for a in loop.assigns if a.node is step.node and len(a.targets) == 1), None)
    if updated is None:
        return set()
    tensor = updated.split(".", 1)[0]
    return {opt for opt, tensors in training.optimizer_tensors.items() if tensor in tensors}


def _covers(resets: set, model: str) -> bool:
    """A reset of the model itself, of a model it is part of, or of one of its parts."""
    return any(within(model, o) or within(o, model) for o in resets)


def _event_branches(facts, loop, event) -> tuple:
    """The if-branches an event sits in: those of its statement in the loop, then those inside the helpers
    that lead to it."""
    return _branches(facts, loop, event.site) + event.inner


def _branches(facts, loop, node) -> tuple:
    """The if-branches a call or assignment of the loop sits in."""
    context = _context_of(facts, loop, node)
    return context.branches if context is not None else ()


def _context_of(facts, loop, node):
    """Where a call or assignment of the loop sits (its branches, its order)."""
    info = facts.call_info(node) if isinstance(node, cst.Call) else None
    if info is not None:
        return info.context
    return next((a.context for a in loop.assigns if a.node is node), None)


def _zero_grad_as_value(module: cst.Module) -> bool:
    """`hooks.append(opt.zero_grad)`, `closure=model.zero_grad`: the method itself passed on, in code
    (not a help text linking to `torch.optim.Optimizer.zero_grad.html`, nor TranAD's stray
    `torch.zero_grad = True`, which writes the attribute instead of reading it)."""
    called: set[int] = set()
    found = []

    class _Finder(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            called.add(id(node.func))

        def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
            called.add(id(node.target))

        def visit_Attribute(self, node: cst.Attribute) -> None:
            if node.attr.value == "zero_grad" and id(node) not in called:
                found.append(node)

    module.visit(_Finder())
    return bool(found)
