"""Haystack: a component that fits the retrieved documents into a token budget.

Put it between a retriever and a ``PromptBuilder``. Joined with ``"\\n\\n"`` (in the template:
``{{ documents | map(attribute='content') | join('\\n\\n') }}``), the documents it returns
are at most ``budget`` tokens.

Haystack sends usage telemetry (PostHog) unless ``HAYSTACK_TELEMETRY_ENABLED`` says otherwise;
budgetctx promises that nothing leaves the machine, so importing this module turns it off when
that variable is unset (set it to ``True`` before the import to keep Haystack's default).

>>> from haystack import Document
>>> from budgetctx.integrations.haystack import BudgetCtxCompressor
>>> note = "Chest pain. Troponin negative. Discharged home."
>>> docs = [Document(content=note, meta={"source": "note-1"})]
>>> [out] = BudgetCtxCompressor(budget=8).run(query="troponin", documents=docs)["documents"]
>>> out.content, out.meta["source"], out.meta["budgetctx"]["spans"]
('Troponin negative.', 'note-1', [[12, 30]])
"""

from __future__ import annotations

import asyncio
import os
import sys
from dataclasses import replace
from typing import Any

from budgetctx._errors import InvalidParameterError, MissingExtraError
from budgetctx.integrations._core import (
    DEFAULT_SELECTOR,
    PROVENANCE_KEY,
    Condenser,
    pins_from_data,
    pins_to_data,
    require_items,
)

#: Haystack's switch for its usage telemetry (read once, when haystack is first imported).
TELEMETRY_ENV = "HAYSTACK_TELEMETRY_ENABLED"
_telemetry_off = TELEMETRY_ENV not in os.environ
if _telemetry_off:
    os.environ[TELEMETRY_ENV] = "False"  # before the import; and for child processes

try:
    from haystack import Document, component, default_from_dict, default_to_dict
except ImportError as exc:  # pragma: no cover - exercised in a subprocess test
    raise MissingExtraError(__name__, "haystack-ai", "haystack") from exc


def _silence_telemetry() -> None:
    """Turn off the telemetry of a haystack imported before this module, with it on: its
    ``send_telemetry`` reads this module-level object at every call, so None silences it."""
    module = sys.modules.get("haystack.telemetry._telemetry")
    if module is not None and hasattr(module, "telemetry"):
        vars(module)["telemetry"] = None


if _telemetry_off:
    _silence_telemetry()

__all__ = ["BudgetCtxCompressor"]


@component
class BudgetCtxCompressor:
    """Keep the parts of the documents that best fit ``budget`` tokens, relevant to the query.

    Each output ``Document`` is one input document's kept text, with the input's ``id``,
    ``score`` and meta plus ``meta["budgetctx"]``: ``spans`` (character offsets into that
    input's ``content``), ``unit_ids``, ``pinned``, ``tokens`` (of the input),
    ``tokens_kept``, ``document`` (its index in the input list), ``budget``, ``tokenizer`` and
    ``selector``. Embeddings of cut documents are dropped. A document with nothing kept is
    dropped, or returned empty with ``drop_empty=False``. ``budget`` given to :meth:`run`
    overrides the one given here for that call. ``to_dict`` needs a tokenizer and a selector
    given by name and pins that are section names, unit ids or regexes.

    >>> BudgetCtxCompressor(budget=10, reserve=-1)
    Traceback (most recent call last):
    ...
    budgetctx._errors.InvalidParameterError: The 'reserve' parameter of ... must be an int >= 0. ...
    """

    def __init__(
        self,
        budget: int,
        *,
        tokenizer: Any = "o200k_base",
        selector: Any = DEFAULT_SELECTOR,
        unitizer: Any = "sentence",
        pins: Any = None,
        reserve: int = 0,
        drop_empty: bool = True,
        separator: str = "\n",
        document_separator: str = "\n",
    ) -> None:
        self._init = {
            "budget": budget,
            "tokenizer": tokenizer,
            "selector": selector,
            "unitizer": unitizer,
            "pins": pins,
            "reserve": reserve,
            "drop_empty": drop_empty,
            "separator": separator,
            "document_separator": document_separator,
        }
        self._condenser = Condenser(type(self).__name__, **self._init)

    @component.output_types(documents=list[Document])
    def run(
        self, query: str | None, documents: list[Document], budget: int | None = None
    ) -> dict[str, list[Document]]:
        """The documents' kept parts, in input order; ``query`` steers relevance.

        :param query: the question the context must answer (``None``: the documents' centroid).
        :param documents: the retrieved documents.
        :param budget: tokens for this call, instead of the component's ``budget``.
        :returns: ``{"documents": [...]}``.
        """
        require_items("BudgetCtxCompressor", documents, Document, "Document(content=text)")
        kept = self._condenser([d.content for d in documents], query=query, budget=budget)
        out = []
        for doc, part in zip(documents, kept, strict=True):
            if self._condenser.drop_empty and not part.text:
                continue
            cut = not part.whole
            out.append(
                replace(
                    doc,
                    content=part.text,
                    meta={**doc.meta, PROVENANCE_KEY: part.provenance},
                    embedding=None if cut else doc.embedding,
                    sparse_embedding=None if cut else doc.sparse_embedding,
                )
            )
        return {"documents": out}

    @component.output_types(documents=list[Document])
    async def run_async(
        self, query: str | None, documents: list[Document], budget: int | None = None
    ) -> dict[str, list[Document]]:
        """:meth:`run` in a worker thread, so that the event loop stays free."""
        return await asyncio.to_thread(self.run, query, documents, budget)

    def to_dict(self) -> dict[str, Any]:
        """The component as a dict that :meth:`from_dict` (and ``Pipeline.loads``) restore."""
        owner = type(self).__name__
        for name in ("tokenizer", "selector", "unitizer"):
            if not isinstance(self._init[name], str):
                raise InvalidParameterError(
                    f"The {name!r} parameter of {owner} cannot be serialised: it is a "
                    f"{type(self._init[name]).__name__} instance; give it by name (see "
                    f"budgetctx.list_{name}s()) to save the component.",
                    parameter=name,
                    value=type(self._init[name]).__name__,
                )
        params = {**self._init, "pins": pins_to_data(owner, self._init["pins"])}
        return default_to_dict(self, **params)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> BudgetCtxCompressor:
        """The component :meth:`to_dict` saved."""
        params = dict(data.get("init_parameters", {}))
        if "pins" in params:
            params["pins"] = pins_from_data(params["pins"])
        return default_from_dict(cls, {**data, "init_parameters": params})
