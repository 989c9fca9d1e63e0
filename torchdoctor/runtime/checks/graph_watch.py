"""Knowing when an autograd graph dies, without keeping it alive.

grad_fn nodes cannot be weakly referenced, but a hook registered on a node is
owned by it: a token held only by that hook dies exactly when the node does.
"""

from __future__ import annotations

import weakref
from typing import Callable


class _Token:
    __slots__ = ("__weakref__",)


class GraphWatch:
    def __init__(self) -> None:
        self._refs: dict[int, tuple[weakref.ref, dict]] = {}

    def follow(self, node, record: dict, on_freed: Callable[[dict], None] | None = None) -> None:
        """Track `node`; `record["used"]` turns True if a backward passes through it; `on_freed(record)`
        runs when the node is freed."""
        token = _Token()
        record.setdefault("used", False)

        def prehook(grad_outputs, record=record, token=token):
            record["used"] = True
            return None

        node.register_prehook(prehook)
        key = id(token)

        def freed(ref, key=key):
            entry = self._refs.pop(key, None)
            if entry is not None and on_freed is not None:
                on_freed(entry[1])

        self._refs[key] = (weakref.ref(token, freed), record)

    def alive(self) -> list[dict]:
        return [record for ref, record in self._refs.values() if ref() is not None]
