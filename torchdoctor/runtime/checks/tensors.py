"""Finding the tensors inside whatever a module takes or returns (tuples, dicts, dataclasses, HF outputs)."""

from __future__ import annotations

import dataclasses
from typing import Any, Iterator

import torch


def iter_tensors(value: Any, path: str = "", depth: int = 0) -> Iterator[tuple[str, torch.Tensor]]:
    """(path, tensor) pairs: `args[0]`, `output['logits']`, `output.hidden_states[2]`."""
    if depth > 4:
        return
    if isinstance(value, torch.Tensor):
        yield path, value
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value[:64]):
            yield from iter_tensors(item, f"{path}[{i}]", depth + 1)
    elif isinstance(value, dict):
        for key, item in list(value.items())[:64]:
            yield from iter_tensors(item, f"{path}[{key!r}]", depth + 1)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            yield from iter_tensors(getattr(value, f.name, None), f"{path}.{f.name}", depth + 1)


def first_tensor(value: Any) -> torch.Tensor | None:
    for _, tensor in iter_tensors(value):
        return tensor
    return None
