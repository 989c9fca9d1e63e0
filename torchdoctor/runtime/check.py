"""The small protocol every runtime check follows.

A check names the events it listens to; the session installs only the hooks
some enabled check needs and calls each check's handler for its events. A
check never installs hooks itself, so watching twice never stacks them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from torchdoctor.runtime.watcher import Watch

EVENTS = frozenset(
    {
        "forward_pre",  # every module call, before forward: (module, args, name)
        "forward",  # every module call, after forward: (module, args, output, name)
        "root_forward",  # a call of the watched model itself (or of a top-level module): (module, output)
        "backward",  # Tensor.backward / autograd.backward is called: (tensors)
        "step_pre",  # an optimizer is about to step: (optimizer)
        "step",  # an optimizer stepped: (optimizer)
        "step_end",  # the primary optimizer finished a step: the step counter moved
        "sampler",  # a DistributedSampler is iterated: (sampler)
    }
)


@dataclass(frozen=True)
class Thresholds:
    """Defaults a user can reason about; override any with `watch(thresholds={...})`."""

    explode_ratio: float = 10.0  # a layer's grad norm this many times its own running median
    explode_abs: float = 1e4  # or above this absolute norm
    vanish_abs: float = 1e-8  # a trainable layer's grad norm below this
    memory_growth_bytes_per_step: float = 256 * 1024  # sustained CUDA allocation growth
    memory_min_steps: int = 20
    noncontiguous_fraction: float = 0.5
    noncontiguous_min_calls: int = 8
    unused_graphs_min: int = 3
    retained_graphs_min: int = 5


class Check:
    """Base class: subclasses set `id`, `events`, and implement the handlers they listen to."""

    id: ClassVar[str]
    reports: ClassVar[tuple[str, ...]] = ()  # ids it reports when more than its own (explosion/vanishing)
    events: ClassVar[frozenset[str]] = frozenset()
    default: ClassVar[bool] = True
    summary: ClassVar[str] = ""

    def __init__(self, session: "Watch") -> None:
        self.session = session

    @classmethod
    def all_ids(cls) -> tuple[str, ...]:
        return cls.reports or (cls.id,)

    # handlers: override the ones named in `events`
    def forward_pre(self, module, args, name: str) -> None: ...

    def forward(self, module, args, output, name: str) -> None: ...

    def root_forward(self, module, output) -> None: ...

    def backward(self, tensors) -> None: ...

    def step_pre(self, optimizer) -> None: ...

    def step(self, optimizer) -> None: ...

    def step_end(self) -> None: ...

    def sampler(self, sampler) -> None: ...

    def exception(self, exc: BaseException) -> None: ...

    def finish(self) -> None: ...

    def report(self, message: str, *, check: str | None = None, severity: str = "warning", module: str | None = None,
               step: int | None = None, details: dict[str, Any] | None = None) -> None:
        self.session.add_finding(check or self.id, severity, message, module, step, details or {})
