"""Read device results on the host without stalling the GPU.

Checks reduce on the device (one fused `torch._foreach_norm`, a few `isfinite`
flags) and hand the small result here. On CUDA it is copied to pinned host
memory with a non-blocking copy and an event; `poll()` returns only the
batches whose event has completed, so a step never waits for the GPU.
"""

from __future__ import annotations

from collections import deque
from typing import Any, Callable

import torch


class DeferredReader:
    def __init__(self) -> None:
        self._pending: deque[tuple[Any, torch.Tensor, Any, Callable]] = deque()

    def submit(self, tensor: torch.Tensor, callback: Callable[[list, Any], None], context: Any = None) -> None:
        """`callback(values, context)` runs once the values can be read without a sync."""
        tensor = tensor.detach()
        if tensor.device.type == "cuda":
            host = torch.empty(tensor.shape, dtype=tensor.dtype, pin_memory=True)
            host.copy_(tensor, non_blocking=True)
            event = torch.cuda.Event()
            event.record()
            self._pending.append((event, host, context, callback))
        else:
            self._pending.append((None, tensor, context, callback))

    def poll(self) -> None:
        while self._pending:
            event, host, context, callback = self._pending[0]
            if event is not None and not event.query():
                return
            self._pending.popleft()
            callback(host.tolist(), context)

    def drain(self) -> None:
        """At the end of the watch: wait for what is left (one sync, outside the steps)."""
        for event, *_ in self._pending:
            if event is not None:
                event.synchronize()
        self.poll()
