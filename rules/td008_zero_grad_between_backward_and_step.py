"""TD008: gradients reset after backward() and before step() in the same iteration."""

from __future__ import annotations

from torchdoctor.rule import Rule


class ZeroGradBetweenBackwardAndStep(Rule):
    code = "TD008"
    name = "zero-grad-between-backward-and-step"
    severity = "error"
    summary = "zero_grad() between backward() and step(): the step always sees zero gradients"
    rationale = """
        `optimizer.zero_grad()` wipes the gradients that `backward()` just computed. Placed
        between `backward()` and `step()`, every step applies zero (or None) gradients: the
        loss never decreases, and nothing fails. The reset belongs before `backward()` or
        after `step()`.
    """
    bad = """
        import torch

        def train(model, loader, opt):
            for x, y in loader:
                loss = torch.nn.functional.mse_loss(model(x), y)
                loss.backward()
                opt.zero_grad()  # expect: TD008
                opt.step()
    """
    good = """
        import torch

        def train(model, loader, opt):
            for x, y in loader:
                opt.zero_grad()
                loss = torch.nn.functional.mse_loss(model(x), y)
                loss.backward()
                opt.step()

        def gan(gen, disc, loader, opt_g, opt_d):
            for real in loader:
                d_loss = disc(real).mean() - disc(gen(real).detach()).mean()
                d_loss.backward()
                opt_g.zero_grad()  # another optimizer's gradients
                opt_d.step()
                opt_d.zero_grad()
    """
    fix_hint = "Move `zero_grad()` before `backward()` (or right after `step()`)."
    triggers = ("zero_grad",)

    def check(self, ctx):
        training, facts = ctx.training, ctx.facts
        for loop in facts.loops:
            direct = [c for c in loop.calls if c.context.loop is loop]
            events = [(c, training.event_of(c)) for c in direct]
            events = [(c, e) for c, e in events if e is not None]
            for i, (call, event) in enumerate(events):
                if event[0] != "reset":
                    continue
                before = [e for _, e in events[:i]]
                after = events[i + 1:]
                if not any(e[0] == "backward" for e in before):
                    continue
                for later, e in after:
                    if e[0] == "backward":
                        break
                    if e[0] == "step" and self._resets(training, event[1], e[1]):
                        yield ctx.report(
                            call.node,
                            f"`{call.dotted}()` runs after backward() and before `{later.dotted}()`: the step "
                            "always sees zero gradients and the model never learns; move it before backward()",
                        )
                        break

    @staticmethod
    def _resets(training, reset: str | None, stepped: str | None) -> bool:
        if reset in (None, "<all>", "<grad>") or reset == stepped:
            return True
        if training.is_optimizer(reset):
            return False  # another optimizer's gradients
        models = training.optimizer_models.get(stepped or "")
        tail = reset.rsplit(".", 1)[-1]
        return not models or reset in models or tail in {m.rsplit(".", 1)[-1] for m in models}
