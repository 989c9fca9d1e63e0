"""sampler-epoch: a DistributedSampler iterated in several epochs with the same epoch number."""

from __future__ import annotations

from torchdoctor.runtime.check import Check


class SamplerEpoch(Check):
    id = "sampler-epoch"
    events = frozenset({"sampler"})
    summary = "a shuffling DistributedSampler iterated again without set_epoch (identical shuffles)"

    def __init__(self, session) -> None:
        super().__init__(session)
        self._epochs: dict[int, list[int]] = {}
        self._reported: set[int] = set()

    def sampler(self, sampler) -> None:
        if not getattr(sampler, "shuffle", False):
            return
        seen = self._epochs.setdefault(id(sampler), [])
        epoch = getattr(sampler, "epoch", 0)
        if seen and epoch in seen and id(sampler) not in self._reported:
            self._reported.add(id(sampler))
            self.report(
                f"DistributedSampler iterated again with epoch {epoch} (pass {len(seen) + 1}): every "
                "epoch shuffles identically on every rank; call sampler.set_epoch(epoch) at the start of each epoch",
                severity="error", step=self.session.steps, details={"epoch": epoch, "passes": len(seen) + 1},
            )
        seen.append(epoch)
