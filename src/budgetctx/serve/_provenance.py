"""Provenance records held in memory by id, least recently used out first.

Chosen with ``provenance_store = "memory"`` (the default is the SQLite file of
:mod:`budgetctx.serve._store`). The records hold document text, so they live only in this
process's memory, for a bounded number of requests, and can be switched off (``size=0``):
nothing is ever written to disk.

>>> store = ProvenanceStore(size=2)
>>> a, b, c = (store.put({"n": i}) for i in range(3))
>>> store.get(a) is None, store.get(c)
(True, {'n': 2})
"""

from __future__ import annotations

import threading
import uuid
from collections import OrderedDict
from typing import Any

from budgetctx._core.validation import Interval, check

__all__ = ["ProvenanceStore"]


class ProvenanceStore:
    """A bounded LRU map from a random id to a JSON-ready record."""

    def __init__(self, *, size: int = 1000) -> None:
        self.size: int = check("ProvenanceStore", "size", size, Interval(int, 0, None))
        self._items: OrderedDict[str, dict[str, Any]] = OrderedDict()
        # Handlers run on the event loop, but the app may be driven from several threads in
        # tests and embedders; the lock is cheap next to a selection.
        self._lock = threading.Lock()

    @property
    def enabled(self) -> bool:
        return self.size > 0

    def __len__(self) -> int:
        return len(self._items)

    def put(self, record: dict[str, Any], *, owner: str | None = None) -> str | None:
        """Store ``record`` and return its id, or ``None`` when the store is off (``owner``:
        kept by :class:`~budgetctx.serve._security.ProvenanceOwners` for this store)."""
        if not self.enabled:
            return None
        key = uuid.uuid4().hex
        with self._lock:
            self._items[key] = record
            while len(self._items) > self.size:
                self._items.popitem(last=False)
        return key

    def delete(self, key: str) -> bool:
        """Remove one record; True when it was there."""
        with self._lock:
            return self._items.pop(key, None) is not None

    def get(self, key: str) -> dict[str, Any] | None:
        with self._lock:
            record = self._items.get(key)
            if record is not None:
                self._items.move_to_end(key)
            return record
