"""Adapters for LLM frameworks, each an optional extra and a module of its own.

- ``budgetctx.integrations.langchain.BudgetCtxCompressor``: a LangChain document compressor
  (``pip install 'budgetctx[langchain]'``).
- ``budgetctx.integrations.llamaindex.BudgetCtxPostprocessor``: a LlamaIndex node
  postprocessor (``pip install 'budgetctx[llamaindex]'``).
- ``budgetctx.integrations.haystack.BudgetCtxCompressor``: a Haystack component
  (``pip install 'budgetctx[haystack]'``).

Each condenses the documents it is handed into one context of at most ``budget`` tokens
(counted with ``tokenizer``) and returns, per input document, the kept text with the input's
own metadata plus provenance under :data:`PROVENANCE_KEY`. This package imports no framework;
importing an adapter whose framework is missing raises :class:`MissingExtraError`, which
names the extra to install.

>>> import budgetctx.integrations
>>> budgetctx.integrations.PROVENANCE_KEY
'budgetctx'
"""

from __future__ import annotations

from budgetctx._errors import MissingExtraError
from budgetctx.integrations._core import PROVENANCE_KEY

__all__ = ["PROVENANCE_KEY", "MissingExtraError"]
