"""TD018: a training DataLoader that loads batches in the main process."""

from __future__ import annotations

import libcst as cst

from torchdoctor.facts import keyword_arg
from torchdoctor.rule import Rule


class DataloaderSingleProcess(Rule):
    code = "TD018"
    name = "dataloader-single-process"
    severity = "info"
    summary = "Training DataLoader without num_workers (or 0): data loading blocks the training loop"
    rationale = """
        With `num_workers=0` (the default) every batch is read, decoded and augmented in the
        training process between steps, and the GPU waits. Worker processes prepare the next
        batches in parallel. Advice, off by default (`--select TD018`): small in-memory
        datasets do not need workers.
    """
    bad = """
        from torch.utils.data import DataLoader

        def loaders(train_set, val_set):
            train_loader = DataLoader(train_set, batch_size=64, shuffle=True)  # expect: TD018
            return train_loader
    """
    good = """
        from torch.utils.data import DataLoader

        def loaders(train_set, val_set, workers):
            train_loader = DataLoader(train_set, batch_size=64, shuffle=True, num_workers=8, pin_memory=True)
            val_loader = DataLoader(val_set, batch_size=64)
            configured = DataLoader(train_set, num_workers=workers)
            return train_loader, val_loader, configured
    """
    fix_hint = "Pass `num_workers=` (e.g. the number of CPU cores per GPU) and `pin_memory=True` for GPU training."
    triggers = ("DataLoader",)

    def check(self, ctx):
        for a in ctx.facts.assigns:
            if not isinstance(a.value, cst.Call) or len(a.targets) != 1:
                continue
            if not (ctx.facts.qualify(a.value.func) or "").endswith("utils.data.DataLoader"):
                continue
            target = a.targets[0].lower()
            if "train" not in target or any(w in target for w in ("val", "test", "eval")):
                continue
            workers = keyword_arg(a.value, "num_workers")
            if any(arg.star for arg in a.value.args):
                continue
            if workers is None or (isinstance(workers.value, cst.Integer) and workers.value.value == "0"):
                yield ctx.report(a.value, f"`{a.targets[0]}` loads batches in the training process "
                                          "(num_workers=0): the GPU waits for data; pass num_workers=")
