"""LangChain: a document compressor that fits the retrieved documents into a token budget.

Use it in ``ContextualCompressionRetriever`` (langchain-classic) or a
``DocumentCompressorPipeline``. Joined with ``"\\n\\n"`` (the stuff chain's default
``document_separator``), the documents it returns are at most ``budget`` tokens.

>>> from langchain_core.documents import Document
>>> from budgetctx.integrations.langchain import BudgetCtxCompressor
>>> note = "Chest pain. Troponin negative. Discharged home."
>>> docs = [Document(note, metadata={"source": "note-1"})]
>>> [out] = BudgetCtxCompressor(budget=8).compress_documents(docs, query="troponin")
>>> out.page_content, out.metadata["source"], out.metadata["budgetctx"]["spans"]
('Troponin negative.', 'note-1', [[12, 30]])
"""

from __future__ import annotations

from collections.abc import Sequence

from budgetctx._errors import MissingExtraError
from budgetctx.integrations._core import PROVENANCE_KEY, require_items

try:
    from langchain_core.callbacks import Callbacks
    from langchain_core.documents import BaseDocumentCompressor, Document

    from budgetctx.integrations._pydantic import CondenserFields
except ImportError as exc:  # pragma: no cover - exercised in a subprocess test
    raise MissingExtraError(__name__, "langchain-core", "langchain") from exc

__all__ = ["BudgetCtxCompressor"]


class BudgetCtxCompressor(CondenserFields, BaseDocumentCompressor):
    """Keep the parts of the documents that best fit ``budget`` tokens, relevant to the query.

    Each output ``Document`` is one input document's kept text, with the input's ``id`` and
    metadata plus ``metadata["budgetctx"]``: ``spans`` (character offsets into that input's
    ``page_content``), ``unit_ids``, ``pinned``, ``tokens`` (of the input), ``tokens_kept``,
    ``document`` (its index in the input list), ``budget``, ``tokenizer`` and ``selector``.
    A document with nothing kept is dropped, or returned empty with ``drop_empty=False``.
    ``pins`` are kept first (a section name, ``pin_regex(...)``, a unit id or a predicate);
    ``reserve`` tokens are left free for the rest of the prompt.

    >>> BudgetCtxCompressor(budget=0)
    Traceback (most recent call last):
    ...
    budgetctx._errors.InvalidParameterError: The 'budget' parameter of BudgetCtxCompressor must be an int >= 1. Got 0 instead; e.g. budget=512.
    """  # noqa: E501

    # The fields (budget, tokenizer, selector, ...) and the condenser: CondenserFields.

    def compress_documents(
        self,
        documents: Sequence[Document],
        query: str,
        callbacks: Callbacks | None = None,
    ) -> Sequence[Document]:
        """The documents' kept parts, in input order; ``query`` steers relevance."""
        require_items("BudgetCtxCompressor", documents, Document, "Document(page_content=text)")
        kept = self._condenser([d.page_content for d in documents], query=query)
        out = []
        for doc, part in zip(documents, kept, strict=True):
            if self.drop_empty and not part.text:
                continue
            metadata = {**doc.metadata, PROVENANCE_KEY: part.provenance}
            out.append(Document(page_content=part.text, metadata=metadata, id=doc.id))
        return out
